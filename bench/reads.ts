/**
 * Read benchmark: the same tables served three ways in one run.
 *
 *   npx tsx bench/reads.ts
 *   CLIENTS=32 SECONDS=3 WARMUP=1 ROUNDS=5 QUERIES=changeset50,sessions20 npx tsx bench/reads.ts
 *   SERVERS=gateway QUERIES=sessions20 node --import tsx --cpu-prof bench/reads.ts   (profile one server)
 *   QUERIES=typename npx tsx bench/reads.ts   (the fixed cost of a request: `{ __typename }`, no SQL; not in the default set)
 *
 * A fresh database (DATABASE_URL's server, embedded PostgreSQL when unset) is seeded with SESSIONS
 * sessions of 8 settled executions each (a changeset of 3 files each), plus one execution whose
 * changeset has 50 files (with an omission: CoverageOmitted) and one with 500 files and their patches.
 * The rows are written directly (the read path is what is measured, not the host protocol). In this
 * process, each on its own HTTP server, with a pool of DB_POOL connections each:
 * - the gateway (`buildApp`, a reader token: auth, roles, limits, masking, its log line per request
 *   (BENCH_LOG, below), everything a user gets);
 * - PostGraphile v5 (`postgraphile` with its amber preset over the same schema, no auth);
 * - the ceiling: node:http and postgres.js running the gateway's own SQL statements (the same round
 *   trips, the same columns) and building the same JSON by hand, no GraphQL.
 * The process runs with NODE_ENV=production (graphql-js without its development checks; Grafast too),
 * and the gateway and the ceiling's gateway SQL and helpers from dist/, the code `npm start` runs
 * (built first when stale; BENCH_GATEWAY_CODE=tsx runs the sources through tsx: bench/support/gateway-code.ts).
 * CLIENTS keep-alive clients in a child process (bench/support/drive.ts) send one query back to back
 * for SECONDS after WARMUP, the three servers in turn (rotating order, ROUNDS times). Prints medians of
 * req/s, latency, this process's CPU per request (the servers' own work), the per-round ratios, CPU
 * per extra session (5 executions each) from the `first` 5..100 runs, the CPU of this machine's PostgreSQL
 * processes per request (when the database runs here: what the servers' SQL costs the shared cores), and the gateway's SQL round trips (counted on a second instance, outside the measured runs).
 * Before measuring, it checks that the three answer the same data for every query.
 * BENCH_LOG: the gateway's log level, `info` by default as with `npm start` (a JSON line per request, written
 * synchronously to /dev/null); `silent` measures it without its log lines.
 * BASELINE_REF=<git ref>: also serves that commit's gateway (built into a temporary directory of its own,
 * with the dependency patches it had: bench/support/baseline.ts) over the same database as a fourth server
 * in the same rounds, and prints this gateway's throughput and p50 against it per query.
 * HISTORY=<n> (n > 1): also a second database whose history is n times larger (the same rows, under
 * SESSIONS × (n − 1) older sessions of 16 executions on average, each with a changeset and two messages
 * of 5 parts: bench/support/history-data.ts), served by the gateway as another server in the same
 * rounds; prints its p50 and p99 against the small history's per query (one page must cost the same:
 * target <= 1.5). HISTORY_KEEP=1 keeps that database on the server between runs (reused when present).
 * BENCH_ALLOC=1: also samples this process's heap allocations during each run (V8's sampling heap
 * profiler, collected objects included) and prints the bytes allocated per request by each server: on
 * this machine a steadier figure than CPU time for changes of a few percent. Sampling costs CPU, so the
 * other figures of such a run are not comparable with a plain run's. BENCH_ALLOC_OUT=dir: also writes each
 * run's sampled heap profile there (`<server>-<time>.heapprofile`, for DevTools or a script).
 * SERVERS=…,yoga (only when named): Yoga's own floor beside the others: `createYoga` over the gateway's
 * schema, every option that costs per request turned off (CORS, error masking, logging, multipart, the
 * body limit), the gateway's compiled executor as its only plugin, the gateway's context for a reader
 * given as is: no authentication, roles, limits, log line or metrics. What a request costs through
 * Yoga's HTTP layer before the gateway adds anything; printed against the baseline and the gateway.
 */
import './support/production.js';
import './support/node20.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { isDeepStrictEqual } from 'node:util';
import type { Sql } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import type { ChangesetCounts, ChangesetFileRow, ChangesetRow } from '../domain/changesets.js';
import type { ExecutionRow } from '../domain/rows.js';
import { drive, median, type Run } from './support/drive.js';
import { seedReads } from './support/reads-data.js';
import { seedHistory } from './support/history-data.js';
import { buildBaseline } from './support/baseline.js';
import { ensureBuilt, gatewayModule } from './support/gateway-code.js';

// The gateway, and the ceiling's use of its SQL and helpers, as `npm start` runs them: dist/ (built
// first when stale; BENCH_GATEWAY_CODE=tsx: the sources through tsx), one copy of each module.
ensureBuilt();
const { connect } = await import(gatewayModule('db/connection.js')) as typeof import('../db/connection.js');
const { buildApp } = await import(gatewayModule('server/app.js')) as typeof import('../server/app.js');
const { createToken } = await import(gatewayModule('domain/tokens.js')) as typeof import('../domain/tokens.js');
const { changesetFiles, coverageOf, hasFiles } = await import(gatewayModule('domain/changesets.js')) as typeof import('../domain/changesets.js');
const { executionsWithChangesets, sessionsWithExecutions } = await import(gatewayModule('resolvers/loaders.js')) as typeof import('../resolvers/loaders.js');
const { encodeCursor } = await import(gatewayModule('resolvers/cursors.js')) as typeof import('../resolvers/cursors.js');
const { sessionOf } = await import(gatewayModule('domain/ids.js')) as typeof import('../domain/ids.js');
const { createLogger } = await import(gatewayModule('server/logging.js')) as typeof import('../server/logging.js');

// The gateway logs as `npm start` does (a line per request at info), into /dev/null with synchronous writes
// (pino's default for stdout); BENCH_LOG=silent: no lines, another level: that level.
const BENCH_LOG = (process.env.BENCH_LOG ?? 'info') as Parameters<typeof createLogger>[0];
const benchLogger = BENCH_LOG === 'silent' ? undefined : createLogger(BENCH_LOG, pino.destination({ dest: '/dev/null', sync: true }));

/** A run, with its server's allocation per request when BENCH_ALLOC=1. */
type Measured = Run & { allocKB?: number };

async function measured(label: string, run: () => Promise<Run>): Promise<Measured> {
  if (process.env.BENCH_ALLOC !== '1') return run();
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
    const r = await run();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    if (process.env.BENCH_ALLOC_OUT) {
      const { mkdirSync, writeFileSync } = await import('node:fs');
      mkdirSync(process.env.BENCH_ALLOC_OUT, { recursive: true });
      writeFileSync(`${process.env.BENCH_ALLOC_OUT}/${label}-${Date.now()}.heapprofile`, JSON.stringify(profile));
    }
    let bytes = 0;
    const walk = (n: typeof profile.head) => { bytes += n.selfSize; for (const c of n.children) walk(c); };
    walk(profile.head);
    // drive()'s total counts the warm-up's requests too, and so does the sampling.
    return { ...r, allocKB: bytes / 1024 / Math.max(1, r.total) };
  } finally {
    session.disconnect();
  }
}

const CLIENTS = Number(process.env.CLIENTS ?? 32);
const SECONDS = Number(process.env.SECONDS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 1);
// Five rounds: on a shared two-core machine a single round's ratio swings by a third; the median of five holds steadier.
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const POOL = Number(process.env.DB_POOL ?? 20);
const SESSIONS = Math.max(101, Number(process.env.SESSIONS ?? 120));
const PAGES = [5, 20, 50, 100];
/** Which servers to drive (all of them unless profiling one: gateway, postgraphile, ceiling, baseline, history). */
const SERVERS = (process.env.SERVERS ?? 'gateway,postgraphile,ceiling').split(',');
/** BASELINE_REF: another commit's gateway beside this one; HISTORY: a history that many times larger beside this one. */
const BASELINE_REF = process.env.BASELINE_REF || null;
const HISTORY = Number(process.env.HISTORY ?? 1);
const QUERIES = (process.env.QUERIES ?? ['changeset50', ...PAGES.map((n) => `sessions${n}`), 'changeset500'].join(',')).split(',');

// ---- the queries, as each server spells them ---------------------------------------------------------

const gatewayChangeset = (patch: boolean) => `query Changeset($id: ID!) { execution(id: $id) { id status changeset {
  fileCount additions deletions
  coverage { __typename ... on CoverageOmitted { omissions { path reason detail } } ... on CoverageUnavailable { reason detail } }
  files { path status additions deletions binary${patch ? ' patch' : ''} } } } }`;
const pglChangeset = (patch: boolean) => `query Changeset($session: String!, $id: String!) { executionBySessionIdAndRowId(sessionId: $session, rowId: $id) { rowId status changesetBySessionIdAndExecutionId {
  fileCount additions deletions coverage unavailableReason detail omissions prunedAt
  changesetFilesBySessionIdAndExecutionId(orderBy: ORD_ASC) { nodes { path status additions deletions binary${patch ? ' patch' : ''} } } } } }`;
const gatewaySessions = `query Sessions($n: Int!) { sessions(first: $n) { pageInfo { hasNextPage endCursor } edges { cursor node {
  id title directory createdAt
  executions(first: 5) { edges { node { id sequence status settledAt changeset { fileCount additions deletions } } } } } } } }`;
const pglSessions = `query Sessions($n: Int!) { allSessions(first: $n, orderBy: PRIMARY_KEY_DESC) { pageInfo { hasNextPage } edges { node {
  rowId title directory createdAt
  executionsBySessionId(first: 5, orderBy: SEQUENCE_DESC) { edges { node { rowId sequence status settledAt changesetBySessionIdAndExecutionId { fileCount additions deletions } } } } } } } }`;

// ---- the ceiling: the gateway's SQL through postgres.js, JSON by hand -------------------------------

const iso = (d: Date | null) => (d == null ? null : d.toISOString());

/** What the gateway's coverage union answers, as JSON (CoverageComplete has only __typename selected). */
function coverageJson(e: ExecutionRow, cs: ChangesetRow | null) {
  const c = coverageOf(e, cs);
  if (c.kind === 'complete') return { __typename: 'CoverageComplete' };
  if (c.kind === 'omitted') return { __typename: 'CoverageOmitted', omissions: c.omissions.map((o) => ({ path: o.path, reason: o.reason, detail: o.detail })) };
  return { __typename: 'CoverageUnavailable', reason: c.reason, detail: c.detail };
}

async function ceilingChangeset(sql: Sql, id: string, patch: boolean) {
  // The gateway's statement: the execution (scoped by its session's directory) with its changeset row and files.
  // With patches, the file rows in the same wave (the gateway's schema/execution.ts).
  const [[r], rows] = await Promise.all([executionsWithChangesets(sql, [id], sql`TRUE`, !patch), patch ? changesetFiles(sql, [id]) : null]);
  if (!r) return { data: { execution: null } };
  const { execution: e, changeset: cs } = r;
  const files = (rows ?? r.files)!;
  const readable = e.status !== 'RUNNING' && hasFiles(cs);
  return {
    data: {
      execution: {
        id: e.id, status: e.status,
        changeset: {
          fileCount: readable ? cs!.fileCount : 0, additions: readable ? cs!.additions : 0, deletions: readable ? cs!.deletions : 0,
          coverage: coverageJson(e, e.status === 'RUNNING' ? null : cs),
          files: readable ? files.map((f) => (patch
            ? { path: f.path, status: f.status, additions: f.additions, deletions: f.deletions, binary: f.binary, patch: (f as ChangesetFileRow).patch }
            : { path: f.path, status: f.status, additions: f.additions, deletions: f.deletions, binary: f.binary })) : [],
        },
      },
    },
  };
}

async function ceilingSessions(sql: Sql, n: number) {
  // The gateway's statement (resolvers/loaders.ts sessionsWithExecutions): the sessions with the columns it reads for this
  // selection (resolvers/plans.ts) and, in the same statement, each one's page of executions with their changesets' counts.
  const { sessions: rows, pages } = await sessionsWithExecutions(sql, { where: sql`TRUE`, limit: n + 1, sessionColumns: ['created_at', 'directory', 'id', 'title'],
    page: { limit: 5, after: null, columns: ['id', 'sequence', 'session_id', 'settled_at', 'status'], changesets: 'counts' } });
  const sessions = rows.slice(0, n);
  const ids = sessions.map((s) => s.id);
  const bySession = new Map<string, ExecutionRow[]>();
  const cs = new Map<string, ChangesetCounts | null>();
  for (const id of ids) {
    const page = pages.get(id)!;
    bySession.set(id, page.map((r) => r.execution));
    for (const r of page) cs.set(r.execution.id, r.changeset);
  }
  const edges = sessions.map((s) => ({
    cursor: encodeCursor('session', s.id),
    node: {
      id: s.id, title: s.title, directory: s.directory, createdAt: iso(s.createdAt),
      executions: {
        edges: bySession.get(s.id)!.slice(0, 5).map((e) => {
          const c = e.status === 'RUNNING' ? null : cs.get(e.id) ?? null;
          const ok = hasFiles(c);
          return { node: { id: e.id, sequence: e.sequence, status: e.status, settledAt: iso(e.settledAt),
            changeset: { fileCount: ok ? c!.fileCount : 0, additions: ok ? c!.additions : 0, deletions: ok ? c!.deletions : 0 } } };
        }),
      },
    },
  }));
  return { data: { sessions: { pageInfo: { hasNextPage: rows.length > n, endCursor: edges.at(-1)?.cursor ?? null }, edges } } };
}

function ceilingServer(sql: Sql): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        const v = body.variables ?? {};
        const out = body.operationName === 'Sessions' ? await ceilingSessions(sql, v.n)
          : body.operationName === 'Typename' ? { data: { __typename: 'Query' } }
          : await ceilingChangeset(sql, v.id, !!v.patch);
        const text = JSON.stringify(out);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      } catch (e) {
        res.writeHead(500).end(JSON.stringify({ errors: [{ message: String(e) }] }));
      }
    });
  });
}

// ---- PostGraphile's answers, in the gateway's shape (what a client of it would do) -------------------

function fromPglChangeset(d: any) {
  const e = d.executionBySessionIdAndRowId;
  if (!e) return { execution: null };
  const c = e.changesetBySessionIdAndExecutionId;
  const row = c && { ...c, prunedAt: c.prunedAt && new Date(c.prunedAt), executionId: e.rowId } as ChangesetRow;
  const readable = e.status !== 'RUNNING' && hasFiles(row);
  return {
    execution: {
      id: e.rowId, status: e.status,
      changeset: {
        fileCount: readable ? c.fileCount : 0, additions: readable ? c.additions : 0, deletions: readable ? c.deletions : 0,
        coverage: coverageJson(e, e.status === 'RUNNING' ? null : row),
        files: readable ? c.changesetFilesBySessionIdAndExecutionId.nodes : [],
      },
    },
  };
}

function fromPglSessions(d: any) {
  const s = d.allSessions;
  return {
    sessions: {
      pageInfo: { hasNextPage: s.pageInfo.hasNextPage },
      edges: s.edges.map(({ node: n }: any) => ({
        node: {
          id: n.rowId, title: n.title, directory: n.directory, createdAt: iso(new Date(n.createdAt)),
          executions: {
            edges: n.executionsBySessionId.edges.map(({ node: e }: any) => {
              const c = e.changesetBySessionIdAndExecutionId;
              const ok = e.status !== 'RUNNING' && !!c;
              return { node: { id: e.rowId, sequence: e.sequence, status: e.status, settledAt: e.settledAt && iso(new Date(e.settledAt)),
                changeset: { fileCount: ok ? c.fileCount : 0, additions: ok ? c.additions : 0, deletions: ok ? c.deletions : 0 } } };
            }),
          },
        },
      })),
    },
  };
}
/** The gateway's answer without what PostGraphile spells differently (cursors). */
function withoutCursors(d: any) {
  return { sessions: { pageInfo: { hasNextPage: d.sessions.pageInfo.hasNextPage }, edges: d.sessions.edges.map((e: any) => ({ node: e.node })) } };
}

// ---- main -------------------------------------------------------------------------------------------

async function post(url: string, headers: Record<string, string>, body: string): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const json = (await res.json()) as any;
  if (res.status !== 200 || json.errors) throw new Error(`${url}: ${res.status} ${JSON.stringify(json.errors ?? json).slice(0, 500)}`);
  return json.data;
}

const listen = (s: Server) => new Promise<string>((r) => s.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(s.address() as { port: number }).port}/graphql`)));

/**
 * Yoga's own floor (SERVERS=…,yoga): Yoga over the gateway's schema with the gateway's compiled executor,
 * every option that costs per request off, and the context the gateway gives a reader, with nothing of
 * the gateway's around it. The same modules as the measured gateway (its schema's loaders included).
 */
async function yogaFloor(app: ReturnType<typeof buildApp>, secret: string): Promise<Server> {
  const { createYoga } = await import('graphql-yoga');
  const { schema } = await import(gatewayModule('schema/index.js')) as typeof import('../schema/index.js');
  const { useCompiledQueries } = await import(gatewayModule('resolvers/compiled.js')) as typeof import('../resolvers/compiled.js');
  const actor = await app.tokens.authenticate(secret);
  if (!actor) throw new Error("Yoga's floor: the reader token does not authenticate");
  const yoga = createYoga({
    schema, graphqlEndpoint: '/graphql', landingPage: false, graphiql: false,
    cors: false, maskedErrors: false, logging: false, multipart: false, maxRequestBodySize: false,
    plugins: [useCompiledQueries()],
    context: () => ({ sql: app.gateway.sql, actor, gateway: app.gateway, tokens: app.tokens }),
  });
  return createServer(yoga);
}

/** The database of a HISTORY run: a scratch one, or with HISTORY_KEEP=1 one kept on the server by its size (seeded once). */
async function historyDatabase(serverUrl: string): Promise<{ url: string; fresh: boolean; drop(): Promise<void> }> {
  if (process.env.HISTORY_KEEP !== '1') return { ...(await createScratchDatabase(serverUrl, 'gw_bench_history')), fresh: true };
  const name = `gw_bench_history_${HISTORY}x_${SESSIONS}`;
  const admin = connect(serverUrl, { max: 1 });
  try {
    const [row] = await admin<{ seeded: string | null }[]>`SELECT shobj_description(oid, 'pg_database') AS seeded FROM pg_database WHERE datname = ${name}`;
    if (row && row.seeded === 'seeded') return { url: withDatabaseName(serverUrl, name), fresh: false, drop: async () => {} };
    if (row) await admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE ${name}`);
    // Marked `seeded` (its comment) once seeded: a run stopped half-way leaves one that the next drops.
    return { url: withDatabaseName(serverUrl, name), fresh: true, drop: async () => {} };
  } finally {
    await admin.end();
  }
}

function withDatabaseName(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function main() {
  const db = await openDatabase();
  const scratch = await createScratchDatabase(db.url, 'gw_bench_reads');
  // The measured gateway's pool counts nothing: postgres.js's `debug` hook (what counts round trips)
  // makes every query capture a stack trace, which a deployed gateway does not pay. Round trips are
  // counted on a second instance with a counting pool, outside the measured runs.
  let gatewayQueries = 0;
  const sql = connect(scratch.url, { max: POOL });
  const countSql = connect(scratch.url, { max: 4, onQuery: () => { gatewayQueries++; } });
  const ceilSql = connect(scratch.url, { max: POOL });
  let app: ReturnType<typeof buildApp> | null = null;
  let counting: ReturnType<typeof buildApp> | null = null;
  let ceiling: Server | null = null;
  let pglServer: Server | null = null;
  let pgl: { release(): unknown } | null = null;
  let pglPool: import('pg').Pool | null = null;
  // BASELINE_REF: the other commit's gateway over the same database, with its own modules and pool.
  let base: { app: { url: string; start(): Promise<void>; stop(): Promise<void> }; sql: { end(o: { timeout: number }): Promise<void> }; commit: string } | null = null;
  // HISTORY: the gateway over the larger history.
  let hist: { app: ReturnType<typeof buildApp>; sql: Sql; db: Awaited<ReturnType<typeof historyDatabase>>; e50: string; e500: string; secret: string } | null = null;
  let floor: Server | null = null;
  try {
    await migrate(sql);
    const { e50, e500 } = await seedReads(sql, SESSIONS);
    app = buildApp({ sql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 }, logger: benchLogger });
    await app.start();
    counting = buildApp({ sql: countSql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 }, logger: benchLogger });
    await counting.start();
    // Its sequencer's safety pass (once a second) would be counted with the requests: reads need none.
    await counting.gateway.sequencer.stop();
    const reader = await createToken(sql, { role: 'reader' });
    const gwHeaders = { authorization: `Bearer ${reader.secret}` };

    if (BASELINE_REF) {
      const b = buildBaseline(BASELINE_REF);
      const bConnect = (await import(b.module('db/connection.js'))).connect as typeof connect;
      const bBuildApp = (await import(b.module('server/app.js'))).buildApp as (o: unknown) => NonNullable<typeof base>['app'];
      // Its own logger, given as the commit takes it: `buildApp({ logger })`, or its module's setLogger
      // (commits before the logger was passed in).
      const bLogging = await import(b.module('server/logging.js')) as typeof import('../server/logging.js') & { setLogger?: (l: unknown) => void };
      const bLogger = BENCH_LOG === 'silent' ? undefined : bLogging.createLogger(BENCH_LOG, pino.destination({ dest: '/dev/null', sync: true }));
      if (bLogger) bLogging.setLogger?.(bLogger);
      const bSql = bConnect(scratch.url, { max: POOL });
      base = { app: bBuildApp({ sql: bSql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 }, logger: bLogger }), sql: bSql, commit: b.commit };
      await base.app.start();
    }

    if (HISTORY > 1) {
      const hdb = await historyDatabase(db.url);
      const hSql = connect(hdb.url, { max: POOL });
      await migrate(hSql);
      let h50: string, h500: string;
      if (hdb.fresh) {
        ({ e50: h50, e500: h500 } = await seedReads(hSql, SESSIONS));
        const seeded = await seedHistory(hSql, SESSIONS * (HISTORY - 1));
        if (process.env.HISTORY_KEEP === '1') await hSql.unsafe(`COMMENT ON DATABASE ${new URL(hdb.url).pathname.slice(1)} IS 'seeded'`);
        console.log(`history ${HISTORY}x: ${SESSIONS * HISTORY} sessions, ${seeded.executions} executions, ${seeded.messages} messages, ${seeded.parts} parts, ` +
          `${seeded.changesetFiles} changeset files (seeded in ${seeded.seconds.toFixed(0)} s)`);
      } else {
        const ids = await hSql<{ id: string }[]>`SELECT id FROM executions WHERE sequence IN (101, 102) ORDER BY sequence`;
        [h50, h500] = ids.map((r) => r.id);
        const [c] = await hSql<{ s: number; x: number; p: number }[]>`SELECT (SELECT count(*)::int FROM sessions) s, (SELECT count(*)::int FROM executions) x, (SELECT count(*)::int FROM parts) p`;
        console.log(`history ${HISTORY}x (kept): ${c.s} sessions, ${c.x} executions, ${c.p} parts`);
      }
      const hToken = await createToken(hSql, { role: 'reader' });
      const hApp = buildApp({ sql: hSql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 }, logger: benchLogger });
      hist = { app: hApp, sql: hSql, db: hdb, e50: h50, e500: h500, secret: hToken.secret };
      await hApp.start();
    }

    ceiling = ceilingServer(ceilSql);
    const ceilUrl = await listen(ceiling);
    if (SERVERS.includes('yoga')) floor = await yogaFloor(app, reader.secret);
    const floorUrl = floor ? await listen(floor) : '';

    const { postgraphile } = await import('postgraphile');
    const { PostGraphileAmberPreset } = await import('postgraphile/presets/amber');
    const { makePgService } = await import('postgraphile/adaptors/pg');
    const { grafserv } = await import('postgraphile/grafserv/node');
    const { default: pg } = await import('pg');
    pglPool = new pg.Pool({ connectionString: scratch.url, max: POOL });
    pglPool.on('error', () => {}); // the scratch database is dropped with FORCE at the end
    const instance = postgraphile({
      extends: [PostGraphileAmberPreset],
      pgServices: [makePgService({ pool: pglPool, schemas: ['public'] })],
      grafserv: { graphqlPath: '/graphql', graphiql: false },
      grafast: { explain: false },
    });
    pgl = instance;
    const serv = instance.createServ(grafserv);
    pglServer = createServer();
    serv.addTo(pglServer);
    const pglUrl = await listen(pglServer);

    type Q = { name: string; label: string; rows: number | null;
      gateway: string; pgl: string; ceiling: string; history: string; normalize: (pglData: any) => unknown; comparable: (gwData: any) => unknown };
    const changesetBody = (id: string, patch: boolean) => JSON.stringify({ query: gatewayChangeset(patch), operationName: 'Changeset', variables: { id } });
    const changeset = (name: string, label: string, id: string, historyId: string | undefined, patch: boolean): Q => ({
      name, label, rows: null,
      gateway: changesetBody(id, patch), history: changesetBody(historyId ?? id, patch),
      pgl: JSON.stringify({ query: pglChangeset(patch), operationName: 'Changeset', variables: { session: sessionOf(id), id } }),
      ceiling: JSON.stringify({ operationName: 'Changeset', variables: { id, patch } }),
      normalize: fromPglChangeset, comparable: (d) => d,
    });
    const all: Q[] = [
      changeset('changeset50', 'execution(id) { changeset { counts coverage files (50) } }', e50, hist?.e50, false),
      ...PAGES.map((n): Q => {
        const gateway = JSON.stringify({ query: gatewaySessions, operationName: 'Sessions', variables: { n } });
        return {
          name: `sessions${n}`, label: `sessions(first: ${n}) { executions(first: 5) { changeset counts } }`, rows: n, gateway, history: gateway,
          pgl: JSON.stringify({ query: pglSessions, operationName: 'Sessions', variables: { n } }),
          ceiling: JSON.stringify({ operationName: 'Sessions', variables: { n } }),
          normalize: fromPglSessions, comparable: withoutCursors,
        };
      }),
      changeset('changeset500', 'execution(id) { changeset { files (500) with patch } }', e500, hist?.e500, true),
      // Not in the default set: the fixed cost of a request (HTTP, auth, the GraphQL pipeline), no SQL.
      { name: 'typename', label: '{ __typename } (no SQL)', rows: null,
        gateway: JSON.stringify({ query: '{ __typename }' }), history: JSON.stringify({ query: '{ __typename }' }), pgl: JSON.stringify({ query: '{ __typename }' }),
        ceiling: JSON.stringify({ operationName: 'Typename' }), normalize: (d) => d, comparable: (d) => d },
    ];
    const queries = all.filter((q) => QUERIES.includes(q.name));
    const histHeaders: Record<string, string> = hist ? { authorization: `Bearer ${hist.secret}` } : {};

    // Same data from all of them, before any measuring (the larger history: the same shape, its own IDs).
    for (const q of queries) {
      const g = await post(app.url, gwHeaders, q.gateway);
      const c = await post(ceilUrl, {}, q.ceiling);
      const p = q.normalize(await post(pglUrl, {}, q.pgl));
      if (!isDeepStrictEqual(g, c)) throw new Error(`${q.name}: the ceiling's answer differs from the gateway's`);
      if (!isDeepStrictEqual(q.comparable(g), p)) throw new Error(`${q.name}: PostGraphile's answer differs from the gateway's`);
      if (base && !isDeepStrictEqual(g, await post(base.app.url, gwHeaders, q.gateway))) throw new Error(`${q.name}: the baseline's answer differs from the gateway's`);
      if (floor && !isDeepStrictEqual(g, await post(floorUrl, {}, q.gateway))) throw new Error(`${q.name}: Yoga's floor answers otherwise than the gateway`);
      if (hist) {
        const h = await post(hist.app.url, histHeaders, q.history);
        if (JSON.stringify(h).length !== JSON.stringify(g).length) throw new Error(`${q.name}: the larger history's answer is not the same shape as the small one's`);
      }
    }
    console.log(`same data from the gateway, PostGraphile and the ceiling${base ? `, the baseline (${BASELINE_REF} = ${base.commit})` : ''}` +
      `${hist ? `; the larger history answers the same shape` : ''}: ${queries.map((q) => q.name).join(', ')}`);

    const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
    const who = { gateway: () => app!.url, postgraphile: () => pglUrl, ceiling: () => ceilUrl, baseline: () => base!.app.url, history: () => hist!.app.url, yoga: () => floorUrl };
    const names = (Object.keys(who) as (keyof typeof who)[])
      .filter((n) => (n === 'baseline' ? !!base : n === 'history' ? !!hist : n === 'yoga' ? !!floor : true) && (SERVERS.includes(n) || (!process.env.SERVERS && (n === 'baseline' || n === 'history'))));
    console.log(`${CLIENTS} keep-alive clients, ${SECONDS} s per run after ${WARMUP} s warm-up, ${ROUNDS} rounds (${names.length} servers in rotating order: ${names.join(', ')}), medians, pool ${POOL}, ` +
      `${db.embedded ? 'embedded' : 'DATABASE_URL'} PostgreSQL, NODE_ENV=${process.env.NODE_ENV}, gateway log level ${BENCH_LOG}; load average at start: ${load()}`);
    const opts = { clients: CLIENTS, warmupS: WARMUP, seconds: SECONDS };
    const f = (x: number) => x.toFixed(2);
    const cpuOf: Record<string, Record<number, number>> = { gateway: {}, postgraphile: {}, ceiling: {}, baseline: {}, history: {}, yoga: {} };
    const summary: string[] = [];
    for (const q of queries) {
      const runs: Record<string, Measured[]> = { gateway: [], postgraphile: [], ceiling: [], baseline: [], history: [], yoga: [] };
      // Round trips per request, on the counting instance (warm: its statements prepared, types known).
      for (let i = 0; i < 3; i++) await post(counting.url, gwHeaders, q.gateway);
      const gwReqs = 20;
      const q0 = gatewayQueries;
      for (let i = 0; i < gwReqs; i++) await post(counting.url, gwHeaders, q.gateway);
      const gwQueries = gatewayQueries - q0;
      const run = (n: keyof typeof who) => measured(n, () => drive(who[n](),
        n === 'gateway' || n === 'baseline' ? gwHeaders : n === 'history' ? histHeaders : {},
        n === 'postgraphile' ? q.pgl : n === 'ceiling' ? q.ceiling : n === 'history' ? q.history : q.gateway, opts));
      for (let r = 0; r < ROUNDS; r++) {
        for (let k = 0; k < names.length; k++) {
          const n = names[(r + k) % names.length];
          runs[n].push(await run(n));
        }
      }
      const fails = Object.values(runs).flat().filter((x) => x.failures);
      if (fails.length) throw new Error(`${q.name}: failed requests: ${fails[0].failures} (${fails[0].firstFailure})`);
      const line = (n: string) => {
        const xs = runs[n];
        return `  ${n.padEnd(12)} ${median(xs.map((x) => x.rps)).toFixed(0).padStart(6)} req/s   p50 ${f(median(xs.map((x) => x.p50))).padStart(7)} ms   p99 ${f(median(xs.map((x) => x.p99))).padStart(7)} ms   ` +
          `server CPU ${median(xs.map((x) => x.cpuUs)).toFixed(0).padStart(5)} µs/req   ` +
          `${xs.every((x) => x.dbCpuUs !== null) ? `PostgreSQL CPU ${median(xs.map((x) => x.dbCpuUs!)).toFixed(0).padStart(5)} µs/req   ` : ''}` +
          `${xs.every((x) => x.allocKB !== undefined) ? `allocated ${median(xs.map((x) => x.allocKB!)).toFixed(1).padStart(7)} KB/req   ` : ''}(rounds: ${xs.map((x) => x.rps.toFixed(0)).join(', ')} req/s)`;
      };
      const ratio = (a: string, b: string, m: (x: Run) => number) => runs[a].map((x, i) => m(x) / m(runs[b][i]));
      const has = (n: string) => names.includes(n as keyof typeof who);
      const rounds = (xs: number[]) => `${f(median(xs))} (rounds ${xs.map(f).join(', ')})`;
      console.log(`\n${q.label}   [load ${load()}]`);
      for (const n of names) console.log(line(n));
      const sums: string[] = [];
      if (has('postgraphile') && has('gateway')) {
        const tp = ratio('gateway', 'postgraphile', (x) => x.rps);
        console.log(`  gateway/PostGraphile throughput ${rounds(tp)}; target >= 1.0   server CPU per request ${f(median(ratio('gateway', 'postgraphile', (x) => x.cpuUs)))}x`);
        sums.push(`vs PostGraphile ${f(median(tp))}`);
      }
      if (has('ceiling') && has('gateway')) {
        const tc = ratio('gateway', 'ceiling', (x) => x.rps);
        console.log(`  gateway/ceiling throughput ${rounds(tc)}   server CPU per request ${f(median(ratio('gateway', 'ceiling', (x) => x.cpuUs)))}x   gateway SQL round trips per request ${(gwQueries / Math.max(1, gwReqs)).toFixed(2)}`);
      }
      if (has('baseline') && has('gateway')) {
        const tb = ratio('gateway', 'baseline', (x) => x.rps), lb = ratio('gateway', 'baseline', (x) => x.p50);
        console.log(`  gateway/baseline (${base!.commit}) throughput ${rounds(tb)}; target >= 0.8 (no more than 25% slower)   p50 ${rounds(lb)}`);
        sums.push(`vs baseline ${f(median(tb))}`);
      }
      if (has('yoga')) {
        const parts: string[] = [];
        if (has('gateway')) parts.push(`gateway/Yoga's floor throughput ${rounds(ratio('gateway', 'yoga', (x) => x.rps))}`);
        if (has('baseline')) parts.push(`Yoga's floor/baseline throughput ${rounds(ratio('yoga', 'baseline', (x) => x.rps))}, server CPU per request ${f(median(ratio('yoga', 'baseline', (x) => x.cpuUs)))}x`);
        console.log(`  ${parts.join('   ')}`);
      }
      if (has('history') && has('gateway')) {
        const p50 = ratio('history', 'gateway', (x) => x.p50), p99 = ratio('history', 'gateway', (x) => x.p99), tput = ratio('history', 'gateway', (x) => x.rps);
        console.log(`  history ${HISTORY}x / 1x: p50 ${rounds(p50)}   p99 ${rounds(p99)}; target <= 1.5   throughput ${rounds(tput)}`);
        sums.push(`${HISTORY}x/1x p50 ${f(median(p50))} p99 ${f(median(p99))}`);
      }
      summary.push(`  ${q.name.padEnd(13)} ${sums.join('   ')}`);
      if (q.rows != null) for (const n of names) cpuOf[n][q.rows] = median(runs[n].map((x) => x.cpuUs));
    }
    const lo = Math.min(...PAGES), hi = Math.max(...PAGES);
    if (cpuOf.gateway[lo] != null && cpuOf.gateway[hi] != null && names.includes('postgraphile') && names.includes('ceiling')) {
      const per = (n: string) => (cpuOf[n][hi] - cpuOf[n][lo]) / (hi - lo);
      console.log(`\nCPU per extra session (5 executions each, first ${lo} -> ${hi}): gateway ${per('gateway').toFixed(0)} µs, PostGraphile ${per('postgraphile').toFixed(0)} µs, ceiling ${per('ceiling').toFixed(0)} µs; ` +
        `gateway/ceiling ${f(per('gateway') / per('ceiling'))}x   [load ${load()}]`);
    }
    if (summary.length) console.log(`\nmedian ratios (throughput; history: latency)   [load ${load()}]\n${summary.join('\n')}`);
  } finally {
    await new Promise<void>((r) => (ceiling ? ceiling.close(() => r()) : r()));
    floor?.closeAllConnections();
    await new Promise<void>((r) => (floor ? floor.close(() => r()) : r()));
    pglServer?.closeAllConnections?.();
    await new Promise<void>((r) => (pglServer ? pglServer.close(() => r()) : r()));
    await Promise.resolve(pgl?.release()).catch(() => {});
    await pglPool?.end().catch(() => {});
    await app?.stop().catch(() => {});
    await counting?.stop().catch(() => {});
    await base?.app.stop().catch(() => {});
    await hist?.app.stop().catch(() => {});
    await sql.end({ timeout: 1 });
    await countSql.end({ timeout: 1 });
    await ceilSql.end({ timeout: 1 });
    await base?.sql.end({ timeout: 1 });
    await hist?.sql.end({ timeout: 1 });
    await hist?.db.drop();
    await scratch.drop();
    await db.stop();
  }
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
