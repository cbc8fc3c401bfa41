/**
 * Seal benchmark: a session with 20 running background shell jobs (real processes run by
 * the reference host) is sealed; repeated ROUNDS times on a fresh database of DATABASE_URL's server (the embedded one when unset).
 *
 * Prints, as medians over the rounds:
 * - seal time: from sending sealSession to receiving SessionSealed (plugin side);
 * - answer delay after the last exit report: from the moment the host got the answer to its last
 *   finishJob to the moment the plugin got SessionSealed (same process, same clock; can be negative
 *   when the seal's answer overtakes the host's), and the same gap on the server's clock
 *   (sealed_at − the last job's completed_at, both clock_timestamp() in their transactions).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/seal.ts [rounds]
 */
import { performance } from 'node:perf_hooks';
import { GatewayClient, SealSessionDocument, CreateSessionDocument } from '../client/index.js';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { createToken } from '../domain/tokens.js';
import { ReferenceHost } from '../host/host.js';
import { buildApp } from '../server/app.js';

const JOBS = 20;
const ROUNDS = Number(process.argv[2] ?? 10);

async function main() {
  const server = await openDatabase();
  const scratch = await createScratchDatabase(server.url, 'gw_bench_seal');
  const sql = connect(scratch.url, { max: 20 });
  await migrate(sql);
  const app = buildApp({ sql, gateway: { sweepIntervalMs: 1_000 } });
  await app.start();
  const hostToken = (await createToken(sql, { role: 'host' })).secret;
  const pluginToken = (await createToken(sql, { role: 'plugin' })).secret;
  const plugin = new GatewayClient({ url: app.url, token: pluginToken });
  const host = new ReferenceHost({ url: app.url, token: hostToken, killGraceMs: 2_000 });
  await host.start();

  const sealMs: number[] = [];
  const clientGap: number[] = [];
  const serverGap: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const s: any = await plugin.call(CreateSessionDocument, { input: { directory: '/bench/seal', title: `round ${round}` } });
      const jobs = await Promise.all(Array.from({ length: JOBS }, () => host.runJob(s.id, null, 'sleep 60', { background: true })));
      let lastReport = 0;
      for (const j of jobs) void j.done.then(() => { lastReport = Math.max(lastReport, performance.now()); });
      const t0 = performance.now();
      const r = (await plugin.request(SealSessionDocument, { input: { sessionID: s.id, timeoutMs: 30_000 } })).sealSession;
      const t1 = performance.now();
      if (r.__typename !== 'SessionSealed') throw new Error(`round ${round}: ${JSON.stringify(r)}`);
      if (r.cancelledJobs.length !== JOBS || r.cancelledJobs.some((j) => j.status !== 'CANCELLED')) throw new Error('not every job was cancelled');
      await Promise.all(jobs.map((j) => j.done));
      const [gap] = await sql`
        SELECT extract(epoch FROM s.sealed_at - max(j.completed_at)) * 1000 AS ms
        FROM sessions s JOIN jobs j ON j.session_id = s.id WHERE s.id = ${s.id} GROUP BY s.sealed_at`;
      sealMs.push(t1 - t0);
      clientGap.push(t1 - lastReport);
      serverGap.push(Number(gap.ms));
    }
  } finally {
    await host.stop();
    await plugin.close();
    await app.stop();
    await sql.end({ timeout: 1 });
    await scratch.drop();
    await server.stop();
  }
  const median = (xs: number[]) => { const a = [...xs].sort((x, y) => x - y); const m = a.length >> 1; return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2; };
  const f = (x: number) => x.toFixed(1);
  console.log(`seal of a session with ${JOBS} running background shell jobs, ${ROUNDS} rounds`);
  console.log(`  seal request -> SessionSealed:                    median ${f(median(sealMs))} ms (min ${f(Math.min(...sealMs))}, max ${f(Math.max(...sealMs))})`);
  console.log(`  last exit report answered -> seal answered:       median ${f(median(clientGap))} ms (min ${f(Math.min(...clientGap))}, max ${f(Math.max(...clientGap))})`);
  console.log(`  last exit committed -> seal committed (server):   median ${f(median(serverGap))} ms (min ${f(Math.min(...serverGap))}, max ${f(Math.max(...serverGap))})`);
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
