/**
 * Per-request overhead benchmark: the gateway against a bare graphql-yoga over the same schema.
 *
 *   npx tsx bench/requests.ts
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test CLIENTS=32 SECONDS=4 ROUNDS=4 WARMUP=2 OPS=typename,session npx tsx bench/requests.ts
 *
 * A fresh database is created on the DATABASE_URL server (embedded PostgreSQL when unset) and dropped
 * at the end. In this process:
 * - the gateway (`buildApp`: auth, roles, limits, armor, masking, its instance services);
 * - the baseline: `createYoga({ schema })` on its own HTTP server, no auth, no limits, no masking,
 *   with the context the resolvers need (pool, a fixed actor; the loaders are cached per context object).
 * Both use one pool of the same size. CLIENTS keep-alive HTTP clients (node:http, one socket each)
 * run in a child process and send requests back to back for SECONDS after a warm-up, against the
 * baseline and the gateway in turn (ROUNDS times, alternating, to even out drift), for two operations:
 * - `{ __typename }`: nothing but the server's own per-request work;
 * - `session(id) { id title directory }`: a small real read (one SELECT through the loaders).
 * Prints medians over the rounds of req/s, p50/p99 latency and this process's CPU time per request
 * (the server's own work, the clients being elsewhere; Postgres not included), the median of each
 * round's gateway/baseline ratio, and the gateway's SQL round trips per request. On a shared or small
 * machine throughput and latency swing with the load of the neighbours; CPU per request much less.
 * The machine's cores are shared by Postgres, the servers and the clients.
 */
import { createServer, type Server } from 'node:http';
import { drive, median, type Run } from './support/drive.js';
import { createYoga } from 'graphql-yoga';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { buildApp } from '../server/app.js';
import { createToken } from '../domain/tokens.js';
import { createSession } from '../domain/sessions.js';
import { SYSTEM, type Actor } from '../domain/access.js';
import { schema } from '../schema/index.js';

const CLIENTS = Number(process.env.CLIENTS ?? 32);
const SECONDS = Number(process.env.SECONDS ?? 4);
const WARMUP = Number(process.env.WARMUP ?? 2);
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const POOL = Number(process.env.DB_POOL ?? 20);
const OPS = (process.env.OPS ?? 'typename,session').split(',');

const driveOptions = { clients: CLIENTS, warmupS: WARMUP, seconds: SECONDS };
const run = (url: string, token: string | null, query: string, variables: Record<string, unknown>): Promise<Run> =>
  drive(url, token ? { authorization: `Bearer ${token}` } : {}, JSON.stringify({ query, variables }), driveOptions);

async function main() {
  const db = await openDatabase();
  const scratch = await createScratchDatabase(db.url, 'gw_bench_req');
  let gatewayQueries = 0;
  const sql = connect(scratch.url, { max: POOL, onQuery: () => { gatewayQueries++; } });
  const baseSql = connect(scratch.url, { max: POOL });
  let app: ReturnType<typeof buildApp> | null = null;
  let bare: Server | null = null;
  try {
    await migrate(sql);
    app = buildApp({ sql, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 } });
    await app.start();
    const reader = await createToken(sql, { role: 'reader' });
    const actor: Actor = { tokenID: reader.id, role: 'reader', directory: null };
    const session = await createSession(sql, SYSTEM, { title: 'bench', directory: '/bench/requests' });

    const gw = app.gateway;
    const yoga = createYoga({
      schema,
      graphqlEndpoint: '/graphql',
      landingPage: false,
      graphiql: false,
      maskedErrors: false,
      context: () => ({ sql: baseSql, actor, gateway: gw }),
    });
    bare = createServer(yoga);
    await new Promise<void>((r) => bare!.listen(0, '127.0.0.1', () => r()));
    const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}/graphql`;

    const ops = [
      { name: 'typename', label: '{ __typename }', query: '{ __typename }', variables: {} },
      { name: 'session', label: 'session(id) { id title directory }', query: 'query($id: ID!) { session(id: $id) { id title directory } }', variables: { id: session.id } },
    ].filter((o) => OPS.includes(o.name));
    console.log(`${CLIENTS} keep-alive clients, ${SECONDS} s per run after ${WARMUP} s warm-up, ${ROUNDS} rounds (baseline and gateway in turn), medians, pool ${POOL}, ${db.embedded ? 'embedded' : 'DATABASE_URL'} PostgreSQL`);
    const f = (x: number) => x.toFixed(2);
    for (const op of ops) {
      const base: Run[] = [];
      const gate: Run[] = [];
      let gwReqs = 0;
      let gwQueries = 0;
      for (let r = 0; r < ROUNDS; r++) {
        // Alternate which goes first, so a drift of the machine's load spreads over both.
        const runGateway = async () => {
          const q0 = gatewayQueries;
          const g = await run(app!.url, reader.secret, op.query, op.variables);
          gwQueries += gatewayQueries - q0;
          gwReqs += g.total;
          return g;
        };
        if (r % 2 === 0) { base.push(await run(bareUrl, null, op.query, op.variables)); gate.push(await runGateway()); }
        else { gate.push(await runGateway()); base.push(await run(bareUrl, null, op.query, op.variables)); }
      }
      const fails = [...base, ...gate].filter((x) => x.failures);
      if (fails.length) throw new Error(`${op.label}: failed requests: ${fails[0].failures} (${fails[0].firstFailure})`);
      const med = median;
      const line = (who: string, xs: Run[]) =>
        `  ${who.padEnd(9)} ${med(xs.map((x) => x.rps)).toFixed(0).padStart(6)} req/s   p50 ${f(med(xs.map((x) => x.p50))).padStart(6)} ms   p99 ${f(med(xs.map((x) => x.p99))).padStart(6)} ms   server CPU ${med(xs.map((x) => x.cpuUs)).toFixed(0).padStart(4)} µs/req   (rounds: ${xs.map((x) => x.rps.toFixed(0)).join(', ')} req/s)`;
      const ratios = base.map((b, i) => gate[i].rps / b.rps);
      console.log(`\n${op.label}`);
      console.log(line('baseline', base));
      console.log(line('gateway', gate));
      const cpuRatios = base.map((b, i) => gate[i].cpuUs / b.cpuUs);
      console.log(`  gateway/baseline: throughput ${med(ratios).toFixed(2)} (median of the rounds' ratios: ${ratios.map((x) => x.toFixed(2)).join(', ')}), p50 ${(med(gate.map((x) => x.p50)) / med(base.map((x) => x.p50))).toFixed(2)}x, p99 ${(med(gate.map((x) => x.p99)) / med(base.map((x) => x.p99))).toFixed(2)}x, server CPU per request ${med(cpuRatios).toFixed(2)}x`);
      console.log(`  gateway SQL round trips per request: ${(gwQueries / Math.max(1, gwReqs)).toFixed(2)}`);
    }
  } finally {
    await new Promise<void>((r) => (bare ? bare.close(() => r()) : r()));
    await app?.stop().catch(() => {});
    await sql.end({ timeout: 1 });
    await baseSql.end({ timeout: 1 });
    await scratch.drop();
    await db.stop();
  }
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
