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
 * A Citus coordinator that cannot reach a worker (seen with Citus 13.2.2 on a worker stopped or restarted with
 * `pg_ctl -m immediate`, test/cluster-restart.test.ts):
 * - the worker refuses the connection, or the coordinator finds its connection gone before sending a
 *   statement: SQLSTATE 08006, "connection to the remote node … failed with the following error: …"
 *   (`ReportConnectionError`): a connection exception, matched by its class above;
 * - the worker went away while a statement or a PREPARE TRANSACTION was on its connection: Citus re-raises the
 *   result libpq made up for the lost connection, which has no SQLSTATE, so it is XX000 with libpq's own text
 *   ("SSL SYSCALL error: EOF detected", "server closed the connection unexpectedly", …) and the context
 *   "while executing command on host:port" (`ReportResultError`). A worker's own error keeps its own SQLSTATE
 *   (a 57P01 of the worker's shutdown stays 57P01), so an XX000 with that context and libpq's words is
 *   the connection, not the worker;
 * - a one-phase commit whose worker's COMMIT did not answer: XX000 "could not commit transaction for shard N on
 *   at least one active node" (`ErrorIfPostCommitFailedShardPlacements`): the outcome on that worker is unknown,
 *   the coordinator's own part rolled back;
 * - a connection of the transaction that failed after it was marked essential (it had written): XX000
 *   "failure on connection marked as essential: host:port" (`CheckRemoteTransactionsHealth`,
 *   `MarkRemoteTransactionFailed`).
 * Citus gives the last two no SQLSTATE of their own (XX000 is every internal error) and no field naming the
 * cause, so only their text tells them: matched whole, as Citus writes them, and only under XX000.
 */
const CITUS_LOST_NODE = [
  /^could not commit transaction for shard \d+ on at least one active node$/,
  /^failure on connection marked as essential: \S+:\d+$/,
];
/** libpq's words for a connection that broke under a statement (fe-misc.c, fe-secure*.c), as Citus passes them on. */
const LIBPQ_CONNECTION_LOST = /^(SSL SYSCALL error|SSL error|server closed the connection unexpectedly|no connection to the server|could not (receive|send) data (from|to) server|connection not open|lost synchronization with server)/;

/** An error a Citus coordinator raised because a worker it needs could not be reached (see CITUS_LOST_NODE). */
export function isClusterNodeUnreachable(err: { code?: unknown; message?: unknown; where?: unknown }): boolean {
  if (err.code !== 'XX000' || typeof err.message !== 'string') return false;
  if (CITUS_LOST_NODE.some((re) => re.test(err.message as string))) return true;
  return typeof err.where === 'string' && err.where.includes('while executing command on ') && LIBPQ_CONNECTION_LOST.test(err.message);
}

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
    if (isClusterNodeUnreachable(err as { code?: unknown; message?: unknown; where?: unknown })) return true;
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
