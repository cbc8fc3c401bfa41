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
}

export function connect(url: string, opts: ConnectOptions = {}): Sql {
  return postgres(url, {
    max: opts.max ?? 10,
    onnotice: () => {},
    // Rows come back with camelCase keys (session_id -> sessionId).
    transform: { column: { from: postgres.toCamel } },
    idle_timeout: 30,
    connection: { application_name: opts.applicationName ?? 'agent-history-gateway' },
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
 * A separate single-connection client on the same server and database as `sql`, for LISTEN: the
 * notification bus can throw it away and make a new one when its connection stops answering.
 */
export function listenerFor(sql: Sql): Sql {
  const o = sql.options as any;
  return postgres({
    host: o.host, port: o.port, database: o.database, user: o.user, pass: o.pass, ssl: o.ssl, path: o.path || undefined,
    max: 1,
    idle_timeout: 0,
    onnotice: () => {},
    connection: { application_name: 'agent-history-gateway-listener' },
  }) as unknown as Sql;
}
