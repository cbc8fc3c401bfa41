import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { isDatabaseUnavailable, type Sql } from '../db/connection.js';

/**
 * What a client gets while the database is away (CONTRACT 9): GraphQL JSON, HTTP 503, `extensions.code`
 * `DATABASE_UNAVAILABLE`, never a stack trace. Every other unexpected failure is a masked
 * `INTERNAL_SERVER_ERROR` (500, JSON).
 */
export const DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE';
const RETRY_AFTER_SECONDS = '1';

export { isDatabaseUnavailable };

export function databaseUnavailableError(): GraphQLError {
  return new GraphQLError('The database is unavailable; try again shortly.', {
    extensions: { code: DATABASE_UNAVAILABLE, http: { status: 503, headers: { 'retry-after': RETRY_AFTER_SECONDS } } },
  });
}

export function internalError(): GraphQLError {
  return new GraphQLError('Unexpected error.', { extensions: { code: 'INTERNAL_SERVER_ERROR', http: { status: 500 } } });
}

/**
 * Yoga's `maskedErrors.maskError`: the database's absence becomes DATABASE_UNAVAILABLE (503); anything
 * else unexpected is masked by Yoga's own masking (`fallback`), and answered 500. (Yoga itself answers a
 * masked error 500 only when the result has no `data` at all, an error before execution; one raised by a
 * resolver, the usual case, went out as 200 with `data` null, which a client could not tell from a typed answer
 * by its status.) The status is the worst thing that happened, as with 503: data that other fields of the same
 * operation read is still in the body.
 */
export function maskDatabaseErrors(fallback: (error: unknown, message: string, isDev?: boolean) => Error) {
  return (error: unknown, message: string, isDev?: boolean): Error => {
    if (isDatabaseUnavailable(error)) {
      const g = error instanceof GraphQLError ? error : null;
      const d = databaseUnavailableError();
      return new GraphQLError(d.message, { nodes: g?.nodes, source: g?.source, positions: g?.positions, path: g?.path, extensions: d.extensions });
    }
    const masked = fallback(error, message, isDev);
    if (masked !== error && masked instanceof GraphQLError && masked.extensions?.code === 'INTERNAL_SERVER_ERROR' && !masked.extensions.http) {
      (masked.extensions as Record<string, unknown>).http = { status: 500 };
    }
    return masked;
  };
}

/** A whole HTTP answer (for code that runs outside GraphQL execution: request hooks, upgrades). */
export function errorBody(e: unknown): { status: number; headers: Record<string, string>; body: string } {
  const g = isDatabaseUnavailable(e) ? databaseUnavailableError() : internalError();
  const http = g.extensions.http as { status: number; headers?: Record<string, string> };
  return {
    status: http.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...(http.headers ?? {}) },
    body: JSON.stringify({ errors: [{ message: g.message, extensions: { code: g.extensions.code } }] }),
  };
}

/**
 * Request hooks (`onRequest`) run in the server adapter, outside Yoga's error handling: one that
 * throws (a token lookup while the database is down) became a text/plain 500 with a Node stack. Every
 * plugin of the app goes through this, so such a throw answers masked GraphQL JSON instead.
 */
export function guardRequestHooks<P extends Plugin<any, any, any>>(plugins: P[]): P[] {
  return plugins.map((p) => {
    const hook = p.onRequest;
    if (!hook) return p;
    // A hook that answers synchronously stays synchronous; a promise it returns is guarded too.
    const guarded: Plugin<any, any, any>['onRequest'] = (payload) => {
      const fail = (e: unknown) => {
        const r = errorBody(e);
        payload.endResponse(new payload.fetchAPI.Response(r.body, { status: r.status, headers: r.headers }));
      };
      try {
        const r = hook.call(p, payload) as unknown;
        if (r && typeof (r as PromiseLike<unknown>).then === 'function') return (r as Promise<unknown>).then(() => undefined, fail);
      } catch (e) {
        fail(e);
      }
    };
    return { ...p, onRequest: guarded };
  });
}

/**
 * `/ready`: the database answers (with the migrations table) within `timeoutMs`. A server that is
 * down refuses at once; one that does not answer (a network partition) is given up on after the timeout.
 * `reason` says which, in words (never the database's address or credentials: /ready answers anyone).
 */
export async function readiness(sql: Sql, timeoutMs = 2_000): Promise<{ status: number; body: string; reason?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
  try {
    await Promise.race([
      sql`SELECT 1 FROM schema_migrations LIMIT 1`,
      new Promise((_, reject) => { timer = setTimeout(() => reject(timedOut), timeoutMs); }),
    ]);
    return { status: 200, body: '{"status":"ready"}' };
  } catch (e) {
    const unavailable = isDatabaseUnavailable(e);
    const reason = e === timedOut ? `the database did not answer within ${timeoutMs / 1000} s` : unavailableReason(e);
    return {
      status: 503,
      reason,
      body: JSON.stringify({
        status: unavailable ? 'database unavailable' : 'not ready',
        code: unavailable ? DATABASE_UNAVAILABLE : 'NOT_READY',
        reason,
      }),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Why the database cannot be used, in words, from the error of a statement that failed. */
export function unavailableReason(e: unknown): string {
  const code = String((e as { code?: unknown } | null)?.code ?? '');
  switch (code) {
    case 'CONNECT_TIMEOUT': return 'the database did not answer in time (DB_CONNECT_TIMEOUT_MS)';
    case 'ECONNREFUSED': return 'the database refused the connection (is it running?)';
    case 'ENOTFOUND': case 'EAI_AGAIN': return 'the database\'s host name does not resolve';
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'the database\'s host cannot be reached';
    case '57P01': case '57P02': case '57P03': return 'the database is shutting down or starting';
    case '53300': return 'the database has no connection free (too many clients)';
    case '42P01': return 'the database holds no gateway schema (gateway migrate)';
  }
  if (isDatabaseUnavailable(e)) return `the database cannot be reached${code ? ` (${code})` : ''}`;
  return 'the database answered with an error';
}
