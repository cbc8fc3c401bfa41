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
