import type { Duplex } from 'node:stream';
import { GraphQLError } from 'graphql';
import { DATABASE_UNAVAILABLE, isDatabaseUnavailable } from './availability.js';

/**
 * Errors sent on a WebSocket (graphql-ws `onError`): those the gateway raised on purpose (a GraphQLError
 * with a code: validation, limits, revocation, not found) go as they are; a failure of the stream
 * while the database is away becomes DATABASE_UNAVAILABLE; anything else is masked. graphql-ws
 * would otherwise send an iterator's exception text (e.g. `write CONNECTION_CLOSED 127.0.0.1:5432`).
 */
export function maskSubscriptionErrors(errors: readonly unknown[]): GraphQLError[] {
  return errors.map((e) => {
    const g = e instanceof GraphQLError ? e : null;
    const inner = g?.originalError ?? (g ? null : e);
    if (inner instanceof GraphQLError && inner.extensions?.code) return inner;
    if (g && !inner && g.extensions?.code) return g;
    if (g && !inner && !g.extensions?.code) return g; // a validation error of the document
    if (isDatabaseUnavailable(e)) {
      return new GraphQLError('The database is unavailable; try again shortly.', { extensions: { code: DATABASE_UNAVAILABLE } });
    }
    return new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  });
}

/** Answers an HTTP upgrade with a GraphQL JSON error and closes the socket. */
export function refuseUpgrade(socket: Duplex, status: number, code: string, message: string): void {
  const body = JSON.stringify({ errors: [{ message, extensions: { code } }] });
  const reason = status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : 'Error';
  socket.on('error', () => {});
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
