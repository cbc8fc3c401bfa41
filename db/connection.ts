import postgres from 'postgres';

export type Sql = postgres.Sql<{}>;
export type Tx = postgres.TransactionSql<{}>;
/** A handle that can run queries: the pool or a transaction. */
export type Db = Sql | Tx;

export interface ConnectOptions {
  max?: number;
  /** Called once per round trip to the server (tests count them). */
  onQuery?: (query: string) => void;
  applicationName?: string;
  /** Server settings for every connection of the pool (startup parameters). */
  settings?: Record<string, string>;
  /** Called with each notice the server sends (dropped by default). */
  onNotice?: (notice: { message?: string }) => void;
  /**
   * How long opening a connection may take, until the server's first ready answer (ms; default
   * CONNECT_TIMEOUT_MS): a server that never answers fails the queries waiting for it with CONNECT_TIMEOUT.
   */
  connectTimeoutMs?: number;
}

/** The default bound of opening a connection (DB_CONNECT_TIMEOUT_MS of `gateway serve`). */
export const CONNECT_TIMEOUT_MS = 10_000;

export function connect(url: string, opts: ConnectOptions = {}): Sql {
  return postgres(url, {
    max: opts.max ?? 10,
    onnotice: opts.onNotice ?? (() => {}),
    // Rows come back with camelCase keys (session_id -> sessionId).
    transform: { column: { from: postgres.toCamel } },
    idle_timeout: 30,
    connect_timeout: (opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS) / 1000,
    connection: { application_name: opts.applicationName ?? 'agent-history-gateway', ...opts.settings },
    debug: opts.onQuery ? (_conn, query) => opts.onQuery!(query) : undefined,
    types: {
      // bigint columns (journal seq, settlement pos) fit in a JS number for any realistic history.
      bigint: {
        to: 20,
        from: [20],
        serialize: (x: number | bigint) => x.toString(),
        parse: (x: string) => Number(x),
      },
    } as any,
  });
}

/**
 * A LIMIT written into the statement's text instead of sent as a parameter, for the lists that read the
 * first rows of a table that grows with the history (sessions, settlements, tokens). A prepared
 * statement's generic plan takes a parameter LIMIT for a tenth of the rows, so once such a table holds a
 * few thousand rows the plan cache finds the generic plan dearer than a custom one and plans every
 * execution again (the newest sessions with their executions spent more on planning than on running).
 * With the number in the text, each page size is a statement of its own with one cached plan. `n` must
 * be an integer the caller has checked (a page size): it is never text from a client.
 */
export function literalLimit(sql: Db, n: number): postgres.PendingQuery<postgres.Row[]> {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`a LIMIT must be a non-negative integer, got ${n}`);
  return sql.unsafe(String(n));
}

/**
 * A separate single-connection client on the same server and database as `sql`, for LISTEN: the
 * notification bus can throw it away and make a new one when its connection stops answering.
 */
export function listenerFor(sql: Sql): Sql {
  const o = sql.options as any;
  return postgres({
    host: o.host, port: o.port, database: o.database, user: o.user, pass: o.pass, ssl: o.ssl, path: o.path || undefined,
    max: 1,
    idle_timeout: 0,
    connect_timeout: o.connect_timeout,
    onnotice: () => {},
    connection: { application_name: 'agent-history-gateway-listener' },
  }) as unknown as Sql;
}

/** Error codes of the Node socket layer and of postgres.js meaning "no usable connection". */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'CONNECTION_ENDED',
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  'ERR_STREAM_DESTROYED', 'ERR_SOCKET_CLOSED',
]);
/** SQLSTATEs of a server that is shutting down or starting, refusing connections, or that dropped ours. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '53400']);

/**
 * Thrown by the gateway when the database answers but a part of it that a statement needs cannot be seen
 * for longer than the gateway waits (a cluster node that has not committed its part of a transaction): as
 * the database being away, to be tried again (DATABASE_UNAVAILABLE, HTTP 503 with Retry-After).
 */
export class DatabaseLaggingError extends Error {
  readonly code = 'DATABASE_LAGGING';
}

/**
 * True when `e` (or an error it wraps: GraphQL's originalError, `cause`, an AggregateError's errors)
 * says the database cannot be reached right now, as opposed to a query that failed on a working one.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (let cur: unknown = e, depth = 0; cur && typeof cur === 'object' && depth < 8; depth++) {
    const err = cur as { code?: unknown; extensions?: { code?: unknown }; originalError?: unknown; cause?: unknown; errors?: unknown[] };
    if (err.extensions?.code === 'DATABASE_UNAVAILABLE') return true;
    const code = typeof err.code === 'string' ? err.code : '';
    if (CONNECTION_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || cur instanceof DatabaseLaggingError) return true;
    if (Array.isArray(err.errors) && err.errors.some((x) => isDatabaseUnavailable(x))) return true;
    cur = err.originalError ?? err.cause;
  }
  return false;
}

/**
 * Runs `fn` until it succeeds or fails for another reason than the database being away (then that
 * error is thrown); between attempts waits 100 ms, doubling up to 2 s. `stopped()` ends the wait early
 * (the last error is thrown).
 */
export async function whenAvailable<T>(fn: () => Promise<T>, stopped: () => boolean = () => false): Promise<T> {
  for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
    try {
      return await fn();
    } catch (e) {
      if (!isDatabaseUnavailable(e) || stopped()) throw e;
      await new Promise((r) => setTimeout(r, wait));
      if (stopped()) throw e;
    }
  }
}
