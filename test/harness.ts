import { inject } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createScratchDatabase } from '../db/scratch.js';
import { connect, type Sql } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { createToken } from '../domain/tokens.js';
import { buildApp, type App, type AppOptions } from '../server/app.js';
import type { Role } from '../domain/access.js';
import { createLogger } from '../server/logging.js';

// TEST_LOG=error (or warn, info, debug) prints the log of the gateways startTestGateway starts while the
// tests run: the cause of a masked "Unexpected error." is there.
export const testLogger = process.env.TEST_LOG ? createLogger(process.env.TEST_LOG as never) : undefined;

/**
 * A database of its own for one test file, on the run's server (embedded or DATABASE_URL): empty, or with
 * `migrated`, a copy of the run's migrated template (test/global-setup.ts) where there is one.
 */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const template = opts.migrated ? inject('templateDatabase') : null;
  return createScratchDatabase(inject('databaseUrl'), 'gw_test', template ? { template } : {});
}

export interface GqlResult<T = any> { status: number; data?: T; errors?: { message: string; locations?: { line: number; column: number }[]; path?: (string | number)[]; extensions?: Record<string, unknown> }[] }

export async function gql<T = any>(url: string, token: string | null, query: string, variables?: Record<string, unknown>): Promise<GqlResult<T>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json().catch(() => ({}));
  return { status: res.status, ...body };
}

export interface TestGateway {
  url: string;
  wsUrl: string;
  app: App;
  sql: Sql;
  dbUrl: string;
  /** Round trips to Postgres made through the gateway's pool since the last reset. */
  queries: { count: number; log: string[]; reset(): void; requestLog(): string[] };
  admin: string;
  token(role: Role, directory?: string): Promise<string>;
  /** A GraphQL request with the given token (admin by default). */
  gql<T = any>(query: string, variables?: Record<string, unknown>, token?: string | null): Promise<GqlResult<T>>;
  ws(token?: string, opts?: Partial<Parameters<typeof createClient>[0]>): Client;
  /** Another gateway instance on the same database. */
  startInstance(): Promise<App>;
  /** Stops the server and starts a new one on the same port and database; `whileDown` runs in between. */
  restart(whileDown?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Connections of one test instance's pool (TEST_DB_POOL, default 5). With two workers (vitest.config.ts)
 * and at most three instances per file, each with its pool and one LISTEN connection, the suite holds at
 * most 2 × 3 × (5 + 1) = 36 connections (plus a short-lived one per scratch database), so it runs against
 * a server with max_connections 100 that others share.
 */
export const TEST_POOL = Math.max(2, Number(process.env.TEST_DB_POOL) || 5);

const BACKGROUND_QUERY = /^\s*(begin|commit)\s*$|clocks|pos IS NULL|WITH todo|sequence_settlements|FROM settlements|FROM tokens WHERE hash|pg_catalog\.pg_type|^\s*SELECT pg_notify\(/;

export async function startTestGateway(opts: { sweepIntervalMs?: number; dbUrl?: string; app?: Partial<AppOptions> } = {}): Promise<TestGateway> {
  const db = opts.dbUrl ? { url: opts.dbUrl, drop: async () => {} } : await createTestDatabase({ migrated: true });
  const queries = {
    count: 0,
    log: [] as string[],
    reset() { this.count = 0; this.log = []; },
    /** The log without what is not a request's own work: transaction brackets, the instance's background
     *  passes (sequencer, clocks, token lookups, the bus's liveness ping: a bare `SELECT pg_notify`, which
     *  no read request sends) and postgres.js's per-connection type lookups, which run whenever the pool
     *  opens a new connection. */
    requestLog() { return this.log.filter((q) => !BACKGROUND_QUERY.test(q)); },
  };
  const sql = connect(db.url, { max: TEST_POOL, onQuery: (q) => { queries.count++; queries.log.push(q.replace(/\s+/g, ' ').slice(0, 2000)); } });
  try {
    await migrate(sql);
  } catch (e) {
    await sql.end({ timeout: 1 });
    await db.drop();
    throw e;
  }
  const extra: { app: App; sql: Sql }[] = [];
  const gatewayConfig = { sweepIntervalMs: opts.sweepIntervalMs ?? 200 };
  let app = buildApp({ logger: testLogger, ...opts.app, sql, gateway: gatewayConfig });
  await app.start();
  const admin = (await createToken(sql, { role: 'admin', label: 'test' })).secret;
  const clients: Client[] = [];
  const t: TestGateway = {
    get url() { return app.url; },
    get wsUrl() { return app.wsUrl; },
    get app() { return app; },
    sql,
    dbUrl: db.url,
    queries,
    admin,
    async token(role, directory) {
      return (await createToken(sql, { role, directory })).secret;
    },
    gql: (query, variables, token) => gql(app.url, token === undefined ? admin : token, query, variables),
    ws(token = admin, o = {}) {
      const c = createClient({
        url: app.wsUrl,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${token}` },
        retryAttempts: 0,
        lazy: true,
        ...o,
      });
      clients.push(c);
      return c;
    },
    async startInstance() {
      const s2 = connect(db.url, { max: TEST_POOL });
      const a = buildApp({ logger: testLogger, ...opts.app, sql: s2, gateway: gatewayConfig });
      await a.start();
      extra.push({ app: a, sql: s2 });
      return a;
    },
    async restart(whileDown) {
      const port = app.port;
      await app.stop();
      try {
        await whileDown?.();
      } finally {
        app = buildApp({ logger: testLogger, ...opts.app, sql, port, gateway: gatewayConfig });
        await app.start();
      }
    },
    /** Stops everything, whatever fails on the way: nothing of this gateway keeps running afterwards. */
    async stop() {
      for (const c of clients) await Promise.resolve(c.dispose()).catch(() => {});
      for (const e of extra) { await e.app.stop().catch(() => {}); await e.sql.end({ timeout: 1 }).catch(() => {}); }
      await app.stop().catch(() => {});
      await sql.end({ timeout: 1 }).catch(() => {});
      await db.drop();
    },
  };
  return t;
}

/**
 * Resolves once `count()` (a feed's live subscribers: `app.gateway.settlements.subscribers`,
 * `app.gateway.journal(sessionID).subscribers`) is `n`: a subscription without `after` is on its feed
 * then, and sees everything that commits from then on. Polls the count, not the clock.
 */
export async function onFeed(count: () => number, n: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (count() !== n) {
    if (Date.now() > deadline) throw new Error(`the feed has ${count()} subscribers, not ${n}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const openSubscriptions = new Set<() => void>();

/**
 * Ends every subscription `subscribe` started that is still open: for `afterEach`, so that a test that
 * fails before its own `unsubscribe` does not leave subscribers on the feeds the next test counts.
 */
export function unsubscribeAll(): void {
  for (const unsubscribe of [...openSubscriptions]) unsubscribe();
}

/** Collects events of a graphql-ws subscription until `until` says stop (or the timeout passes). */
export function subscribe<T = any>(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const events: T[] = [];
  const errors: unknown[] = [];
  let done = false;
  const waiters: (() => void)[] = [];
  const close = client.subscribe<T>(
    { query, variables },
    {
      next: (v) => {
        if (v.errors) errors.push(v.errors);
        if (v.data) events.push(v.data as T);
        waiters.splice(0).forEach((w) => w());
      },
      error: (e) => { errors.push(e); done = true; waiters.splice(0).forEach((w) => w()); },
      complete: () => { done = true; waiters.splice(0).forEach((w) => w()); },
    },
  );
  const unsubscribe = () => { openSubscriptions.delete(unsubscribe); close(); };
  openSubscriptions.add(unsubscribe);
  return {
    events,
    errors,
    get done() { return done; },
    unsubscribe,
    async waitFor(pred: (events: T[]) => boolean, timeoutMs = 10_000): Promise<T[]> {
      const deadline = Date.now() + timeoutMs;
      while (!pred(events)) {
        if (done) throw new Error(`subscription ended: ${JSON.stringify(errors)}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting; have ${events.length} events; errors ${JSON.stringify(errors)}`);
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, Math.min(left, 200)); });
      }
      return events;
    },
  };
}
