import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'graphql';
import { connect, type Sql } from '../db/connection.js';
import { startEmbedded, type EmbeddedServer } from '../db/embedded.js';
import { createScratchDatabase } from '../db/scratch.js';
import { PROJECT_DIR } from '../db/index.js';
import { GatewayClient } from '../client/index.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { createSession, registerHost } from './fixtures.js';
import { until } from './support/until.js';
import { encodeCursor } from '../resolvers/cursors.js';
import { pgBinDir, startPgCluster, type PgCluster } from './support/pg-cluster.js';

/**
 * CONTRACT 9: an instance rides out the loss of all its database connections.
 * Run twice, each against a database server of this file's own that the test can stop and start again:
 * - the embedded PostgreSQL (started with the default options, so it is also the check that the default
 *   server is durable);
 * - a PostgreSQL server of the machine's installation (Debian's pg_ctl, as an operator runs one), stopped
 *   with `pg_ctl stop -m fast` and started again; skipped, saying so, where no such binaries are installed.
 */

/** A database server the test can stop and start again on the same port. */
interface Server { url: string; stop(): Promise<void>; start(): Promise<void>; destroy(): Promise<void> }

async function embeddedServer(dir: string): Promise<Server> {
  let pg: EmbeddedServer = await startEmbedded({ dir: path.join(dir, 'pg') });
  const port = Number(new URL(pg.url).port);
  const server: Server = {
    url: pg.url,
    async stop() { await pg.stop(); },
    async start() {
      pg = await startEmbedded({ dir: path.join(dir, 'pg'), port });
      expect(Number(new URL(pg.url).port)).toBe(port);
    },
    async destroy() { await pg.stop().catch(() => {}); },
  };
  return server;
}

async function clusterServer(): Promise<Server> {
  const c: PgCluster | null = await startPgCluster();
  if (!c) throw new Error('no PostgreSQL binaries');
  return c;
}

const KINDS = [
  { kind: 'the embedded PostgreSQL', make: embeddedServer, available: true },
  { kind: `a PostgreSQL ${pgBinDir() ? pgBinDir()!.split('/').at(-2) + ' ' : ''}server run with pg_ctl`, make: () => clusterServer(), available: pgBinDir() !== null },
];
if (!KINDS[1].available) console.log('outage.test.ts: no /usr/lib/postgresql/<version>/bin here: the pg_ctl server variant is skipped');

describe.each(KINDS)('against $kind', ({ kind, make, available }) => {

  let pg: Server;
  let dir: string;
  let db: { url: string; drop(): Promise<void> };
  let g: TestGateway;
  let killer: Sql;
  const crashes: unknown[] = [];
  const onCrash = (e: unknown) => { crashes.push(e); };

  beforeAll(async () => {
    process.on('uncaughtException', onCrash);
    process.on('unhandledRejection', onCrash);
    dir = mkdtempSync(path.join(PROJECT_DIR, '.data', 'outage-'));
    chmodSync(dir, 0o755); // initdb may run as another user (the embedded server's, when we are root)
    if (!available) return;
    pg = await make(dir);
    db = await createScratchDatabase(pg.url, 'gw_outage');
    g = await startTestGateway({ dbUrl: db.url });
    killer = connect(db.url, { max: 1, applicationName: 'outage-test-killer' });
  }, 120_000);

  afterAll(async () => {
    await g?.stop().catch(() => {});
    await killer?.end({ timeout: 1 }).catch(() => {});
    await db?.drop().catch(() => {});
    await pg?.destroy().catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
  });

  /** Every answer the load got, by kind; `bad` holds anything that is not GraphQL JSON with masked errors. */
  const answers = { ok: 0, unavailable: 0, bad: [] as string[] };

  async function call(query: string, variables: Record<string, unknown>, token: string): Promise<any | null> {
    const res = await fetch(g.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    let body: any = null;
    try { body = JSON.parse(text); } catch { /* recorded below */ }
    const leak = /\bat \S+ \(|\.ts:\d+|node_modules|ECONN|CONNECTION_|127\.0\.0\.1:\d+/.test(text);
    if (!type.includes('application/json') || !body || leak) {
      answers.bad.push(`${res.status} ${type} ${text.slice(0, 300)}`);
      return null;
    }
    if (res.status === 503) {
      const codes = (body.errors ?? []).map((e: any) => e.extensions?.code);
      if (codes.length && codes.every((c: string) => c === 'DATABASE_UNAVAILABLE') && res.headers.get('retry-after')) answers.unavailable++;
      else answers.bad.push(`503 ${text.slice(0, 300)}`);
      return null;
    }
    if (res.status !== 200 || body.errors?.length) {
      answers.bad.push(`${res.status} ${text.slice(0, 300)}`);
      return null;
    }
    answers.ok++;
    return Object.values(body.data)[0];
  }

  const BEGIN = `mutation($input: BeginExecutionInput!) { beginExecution(input: $input) {
    __typename ... on Execution { id } ... on SessionBusyError { executionID } } }`;
  const SETTLE = `mutation($input: SettleExecutionInput!) { settleExecution(input: $input) {
    __typename ... on Execution { id status } ... on InvalidRequestError { field } } }`;

  /** One host driving one session: begin, settle, again, until stopped. Unanswered calls are simply tried again. */
  async function driver(host: { hostID: string; token: string }, sessionID: string, stop: { now: boolean }, progress: { settled: number; last: number }) {
    while (!stop.now) {
      const b = await call(BEGIN, { input: { sessionID, hostID: host.hostID, trigger: 'PROMPT' } }, host.token).catch(() => null);
      if (!b) continue;
      const executionID = b.__typename === 'Execution' ? b.id : b.__typename === 'SessionBusyError' ? b.executionID : null;
      if (!executionID) throw new Error(`unexpected begin answer ${JSON.stringify(b)}`);
      for (;;) {
        const s = await call(SETTLE, { input: { executionID, status: 'SUCCEEDED' } }, host.token).catch(() => null);
        if (!s) { if (stop.now) return; continue; }
        // InvalidRequestError: it settled, the answer was lost with the connection.
        if (s.__typename !== 'Execution' && s.__typename !== 'InvalidRequestError') throw new Error(`unexpected settle answer ${JSON.stringify(s)}`);
        progress.settled++;
        progress.last = Date.now();
        break;
      }
    }
  }

  async function terminateGatewayConnections(): Promise<number> {
    const [r] = await killer`
      SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE 'agent-history-gateway%'`;
    return r.n;
  }

  test.skipIf(!available)('the server is durable (fsync on; for the embedded one: its default)', async () => {
    const [r] = await killer`SHOW fsync`;
    expect(r.fsync).toBe('on');
  });

  test.skipIf(!available)('an instance rides out all its connections terminated 20 times under load, then a database restart', { timeout: 300_000 }, async () => {
    answers.ok = 0;
    answers.unavailable = 0;
    answers.bad = [];
    const host = await registerHost(g, { leaseMs: 120_000 });
    const sessions: string[] = [];
    for (let i = 0; i < 3; i++) sessions.push((await createSession(g, { title: `load ${i}`, directory: '/outage' })).id);

    // A cursor-resuming analytics client (the typed client) on the settlement stream.
    const client = new GatewayClient({ url: g.url, token: g.admin });
    const received: string[] = [];
    const streamErrors: unknown[] = [];
    const doc = parse('subscription($after: String) { executionSettled(after: $after) { cursor executionID } }') as any;
    const unsubscribe = client.subscribe(doc, { after: encodeCursor('settlement', 0) }, {
      next: (d: any) => received.push(d.executionSettled.executionID),
      error: (e) => streamErrors.push(e),
    });

    const stop = { now: false };
    const progress = { settled: 0, last: 0 };
    const drivers = sessions.map((s) => driver(host, s, stop, progress));
    const recoveries: number[] = [];
    try {
      await until('load started', () => progress.settled >= 5, 30_000);
      let killed = 0;
      for (let i = 0; i < 20; i++) {
        const before = progress.settled;
        const t0 = Date.now();
        killed += await terminateGatewayConnections();
        await until(`settlements after termination ${i + 1}`, () => progress.settled > before + 1, 30_000);
        recoveries.push(Date.now() - t0);
      }
      expect(killed).toBeGreaterThanOrEqual(20); // every round found connections of the instance to cut

      // The database itself goes away: every answer meanwhile is 503 JSON, /ready says so.
      await pg.stop();
      const down = Date.now();
      const ready = await fetch(g.url.replace('/graphql', '/ready'));
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
      const during = await fetch(g.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${g.admin}` },
        body: JSON.stringify({ query: '{ sessions(first: 1) { edges { node { id } } } }' }),
      });
      expect(during.status).toBe(503);
      expect(during.headers.get('content-type')).toContain('application/json');
      const duringBody = await during.json();
      expect(duringBody.errors[0].extensions.code).toBe('DATABASE_UNAVAILABLE');
      expect(JSON.stringify(duringBody)).not.toMatch(/\bat |\.ts:|node_modules|ECONNREFUSED/);
      const settledWhileDown = progress.settled;
      await pg.start();
      const restarted = Date.now();
      await until('settlements after the database restart', () => progress.settled > settledWhileDown + 1, 30_000);
      const backAfterRestart = Date.now() - restarted;
      await until('/ready', async () => (await fetch(g.url.replace('/graphql', '/ready'))).status === 200, 30_000);

      stop.now = true;
      await Promise.all(drivers);
      // Nothing lost, nothing twice, in log order: the stream equals the settlement log (once the
      // sequencer has positioned every staged row).
      await until('log sequenced', async () => (await killer`SELECT count(*)::int AS n FROM settlements WHERE pos IS NULL`)[0].n === 0, 30_000);
      const log = (await killer`SELECT execution_id FROM settlements WHERE pos IS NOT NULL ORDER BY pos`).map((r) => r.executionId as string);
      await until(`stream caught up (${received.length}/${log.length})`, () => received.length >= log.length, 30_000);
      expect(received).toEqual(log);
      expect(new Set(received).size).toBe(received.length);
      expect(streamErrors).toEqual([]);
      // This attempt's settlements (a retry finds the first attempt's in the log too).
      const [{ mine }] = await killer`SELECT count(*)::int AS mine FROM settlements WHERE pos IS NOT NULL AND session_id = ANY(${sessions})`;
      expect(mine).toBe(progress.settled);

      console.log(`outage (${kind}): ${log.length} settlements, ${killed} connections terminated in 20 rounds; ` +
        `recovery after a termination max ${Math.max(...recoveries)} ms (median ${recoveries.sort((a, b) => a - b)[10]} ms); ` +
        `database down ${restarted - down} ms, service back ${backAfterRestart} ms after its restart; ` +
        `answers: ${answers.ok} ok, ${answers.unavailable} 503 DATABASE_UNAVAILABLE, ${answers.bad.length} bad`);
      expect(answers.bad).toEqual([]);
      expect(answers.unavailable).toBeGreaterThan(0);
      expect(Math.max(...recoveries)).toBeLessThan(10_000);
      expect(backAfterRestart).toBeLessThan(15_000);
      expect(crashes).toEqual([]);
    } finally {
      stop.now = true;
      await Promise.allSettled(drivers);
      unsubscribe();
      await client.close();
    }
  });
});
