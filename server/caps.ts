import type { Socket } from 'node:net';
import { GraphQLError } from 'graphql';
import type { CapsConfig } from './config.js';

/** Close code for a WebSocket whose unsent data passed the cap: "try again later" (graphql-ws clients reconnect). */
export const SLOW_CONSUMER_CLOSE = 1013;
export const TOO_MANY_SUBSCRIPTIONS = 'TOO_MANY_SUBSCRIPTIONS';
export const TOO_MANY_CONNECTIONS = 'TOO_MANY_CONNECTIONS';

/**
 * Per-client caps of one instance (docs/running.md, "Configuration"):
 * - open TCP connections per remote address (HTTP keep-alive and WebSocket alike): one more is answered
 *   `429 Too Many Requests` with a GraphQL JSON error (`TOO_MANY_CONNECTIONS`) and closed, before any
 *   request on it runs;
 * - operations at once on one WebSocket: one more is refused with a GraphQL error
 *   (`TOO_MANY_SUBSCRIPTIONS`); the connection and its other subscriptions go on;
 * - unsent bytes of one WebSocket: past the cap it is closed with 1013 (its client reconnects and
 *   resumes from its cursor).
 */
export class ClientCaps {
  private perAddress = new Map<string, number>();
  private refused = new WeakSet<Socket>();
  /** Connections refused so far (tests and metrics read it). */
  refusals = 0;

  constructor(readonly config: CapsConfig) {}

  /** For the server's 'connection' event: counts the socket, or answers 429 and closes it. */
  admit(socket: Socket): void {
    const addr = socket.remoteAddress ?? 'unknown';
    const n = this.perAddress.get(addr) ?? 0;
    if (n >= this.config.connectionsPerClient) {
      this.refused.add(socket);
      this.refusals++;
      const body = JSON.stringify({
        errors: [{
          message: `Too many connections from this client (at most ${this.config.connectionsPerClient}).`,
          extensions: { code: TOO_MANY_CONNECTIONS, limit: this.config.connectionsPerClient },
        }],
      });
      socket.on('error', () => {});
      socket.end(
        'HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\n' +
          `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      setTimeout(() => socket.destroy(), 1_000).unref();
      return;
    }
    this.perAddress.set(addr, n + 1);
    socket.once('close', () => {
      const left = (this.perAddress.get(addr) ?? 1) - 1;
      if (left > 0) this.perAddress.set(addr, left);
      else this.perAddress.delete(addr);
    });
  }

  /** A request or upgrade arriving on a refused socket is dropped (its 429 is already on the way). */
  isRefused(socket: Socket): boolean {
    return this.refused.has(socket);
  }

  /** For graphql-ws onSubscribe: `running` counts the new operation too. */
  subscriptionRefusal(running: number): GraphQLError | null {
    if (running <= this.config.subscriptionsPerConnection) return null;
    return new GraphQLError(
      `Too many operations on this connection (at most ${this.config.subscriptionsPerConnection}); complete one or open another connection.`,
      { extensions: { code: TOO_MANY_SUBSCRIPTIONS, limit: this.config.subscriptionsPerConnection } },
    );
  }

  /** For graphql-ws onNext: closes a socket whose client stopped reading; true when it did. */
  closeIfSlow(socket: { bufferedAmount: number; close(code: number, reason: string): void }): boolean {
    if (socket.bufferedAmount <= this.config.maxBufferedBytes) return false;
    socket.close(SLOW_CONSUMER_CLOSE, 'Slow consumer: too much unsent data; reconnect and resume from your cursor');
    return true;
  }
}
