/**
 * What an idle gateway instance costs a Citus cluster: statements that run on more than one shard, per
 * second, with nothing to do.
 *
 *   CITUS_URL=postgres://postgres@127.0.0.1:9700/postgres npx tsx bench/citus-idle.ts
 *   CITUS_URL=… SECONDS=20 ROUNDS=3 npx tsx bench/citus-idle.ts
 *
 * A fresh database on the cluster (made on every node, distributed by migrate) gets some history: 20
 * sessions with settled executions, a live host and 5 hosts whose lease lapsed an hour ago (bridges that
 * went away). One gateway instance's services (bus, sequencer, lease sweep; no client) then idle for
 * SECONDS, once as before (`before`: the sequencer's safety pass every second, every lapsed host swept
 * every second) and once as configured now (`now`: the defaults), in turn, ROUNDS times. The instance's
 * connections ask Citus for a notice on every statement it splits into more than one task
 * (`citus.multi_task_query_log_level`), so each notice is a statement that went to every shard. Prints
 * multi-shard statements per second per mode (median over rounds), the shard tasks that makes
 * (`citus.shard_count` each) and the ratio.
 */
import { loadavg } from 'node:os';
import { connect, type Sql } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { createScratchDatabase } from '../db/scratch.js';
import { SYSTEM } from '../domain/access.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { registerHost } from '../domain/hosts.js';
import { createSession } from '../domain/sessions.js';
import { Gateway, type GatewayConfig } from '../server/gateway.js';
import { silentLogger } from '../server/logging.js';
import { median } from './support/drive.js';

const SECONDS = Number(process.env.SECONDS) || 10;
const ROUNDS = Number(process.env.ROUNDS) || 3;
const server = process.env.CITUS_URL;
if (!server) {
  console.error('bench/citus-idle: set CITUS_URL to a Citus coordinator with workers (see docs/citus.md, "Running a cluster")');
  process.exit(2);
}

const MODES: Record<string, GatewayConfig> = {
  before: { sweepIntervalMs: 1_000, sweepWindowMs: 0, sequencerSafetyMs: 1_000, retentionIntervalMs: 0, feedPollMs: 0 },
  now: { sweepIntervalMs: 1_000, retentionIntervalMs: 0, feedPollMs: 0 },
};

const db = await createScratchDatabase(server, 'bench_idle');
const admin = connect(db.url, { max: 2 });
let multiShard = 0;
const sql = connect(db.url, {
  max: 4,
  settings: { 'citus.multi_task_query_log_level': 'notice' },
  onNotice: (n) => { if (/multi-task/i.test(n.message ?? '')) multiShard++; },
});
try {
  await migrate(admin);
  const shards = Number((await admin`SELECT current_setting('citus.shard_count')::int AS n`)[0].n);

  // Some history: a live host that ran 20 sessions' executions, and 5 hosts that lapsed an hour ago.
  const live = await registerHost(admin, SYSTEM, { name: 'live', leaseMs: 600_000 });
  for (let i = 0; i < 20; i++) {
    const s = await createSession(admin, SYSTEM, { title: `s${i}`, directory: `/work/s${i}` });
    const e = await beginExecution(admin, SYSTEM, { sessionID: s.id, hostID: live.id, trigger: 'PROMPT' });
    await settleExecution(admin, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
  }
  for (let i = 0; i < 5; i++) await registerHost(admin, SYSTEM, { name: `gone${i}`, leaseMs: 1_000 });
  await admin`UPDATE hosts SET lease_expires_at = now() - interval '1 hour' WHERE name LIKE 'gone%'`;

  const rates: Record<string, number[]> = Object.fromEntries(Object.keys(MODES).map((m) => [m, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? Object.keys(MODES).reverse() : Object.keys(MODES);
    for (const mode of order) {
      const gateway = new Gateway(sql, MODES[mode], silentLogger());
      await gateway.start();
      await gateway.sweep(); // its start (a first sweep of every lapsed host, a first sequencer pass) is not idling
      await gateway.sequencer.caughtUp();
      const n0 = multiShard;
      const start = performance.now();
      await new Promise((r) => setTimeout(r, SECONDS * 1_000));
      rates[mode].push((multiShard - n0) / ((performance.now() - start) / 1_000));
      await gateway.stop();
    }
  }
  const before = median(rates.before);
  const now = median(rates.now);
  const row = (label: string, m: string, v: number) =>
    console.log(`  ${label} ${v.toFixed(2)} multi-shard statements/s (${(v * shards).toFixed(1)} shard tasks/s)  [${rates[m].map((r) => r.toFixed(2)).join(', ')}]`);
  console.log(`idle instance, ${SECONDS} s x ${ROUNDS} rounds, ${shards} shards, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  row('before (safety pass 1 s, every lapsed host swept):', 'before', before);
  row('now    (defaults):                                 ', 'now', now);
  console.log(`  now/before: ${before > 0 ? (now / before).toFixed(3) : 'n/a'}`);
} finally {
  await sql.end();
  await admin.end();
  await db.drop();
}
