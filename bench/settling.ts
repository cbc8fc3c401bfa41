/**
 * Settling under concurrency: many sessions settling at once, and what the settlement clock costs them.
 *
 *   npx tsx bench/settling.ts
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres SESSIONS=50 SECONDS=5 ROUNDS=3 npx tsx bench/settling.ts
 *   SESSIONS=10 MODES=wait,wait5,skip npx tsx bench/settling.ts
 *
 * A fresh database (DATABASE_URL's server, embedded PostgreSQL when unset) is migrated, and one gateway
 * instance's services run on it (its settlement sequencer positions what a settling commit could not).
 * SESSIONS sessions then run begin + settle back to back for SECONDS, through the domain functions the
 * resolvers call, once per mode in turn (rotating order, ROUNDS times). A mode is how a settling COMMIT
 * meets a busy settlement clock (migrations 056-058), set per connection:
 * - `wait` (the default): it waits for the clock, at most `gateway.settlement_clock_wait_ms` (20 ms);
 * - `wait5`: the same with a 5 ms bound;
 * - `skip` (`gateway.settlement_clock_wait_ms = 0`, migration 056's behaviour): it only tries the clock,
 *   and a row it cannot position goes to the sequencer.
 * Prints per mode the medians over rounds of: begin + settle pairs per second, settle time (p50/p99),
 * the share of settlements their own commit did not position (each sends a "staged" notice), and the
 * time from a settle's return to the head notice that covers its position (p50/p99: when a subscriber
 * can have it; 0 when the notice came first). The ratios are against `wait`, measured in the same run.
 */
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { connect, type Sql } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { SYSTEM } from '../domain/access.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { registerHost } from '../domain/hosts.js';
import { createSession } from '../domain/sessions.js';
import { Gateway } from '../server/gateway.js';
import { silentLogger } from '../server/logging.js';
import { median } from './support/drive.js';

const SESSIONS = Number(process.env.SESSIONS) || 50;
const SECONDS = Number(process.env.SECONDS) || 5;
const ROUNDS = Number(process.env.ROUNDS) || 3;
const POOL = Number(process.env.DB_POOL) || Math.min(SESSIONS, 40);
const MODES: Record<string, Record<string, string>> = {
  wait: {},
  wait5: { 'gateway.settlement_clock_wait_ms': '5' },
  skip: { 'gateway.settlement_clock_wait_ms': '0' },
};
const modes = (process.env.MODES ?? 'wait,skip').split(',');
for (const m of modes) if (!MODES[m]) throw new Error(`unknown mode ${m} (${Object.keys(MODES).join(', ')})`);

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

interface Round { pairs: number; settleP50: number; settleP99: number; staged: number; visibleP50: number; visibleP99: number }

async function main() {
  const db = await openDatabase();
  const scratch = await createScratchDatabase(db.url, 'gw_bench_settling');
  const admin = connect(scratch.url, { max: 4 });
  // One mode's pool at a time (the server's connections are shared by the whole machine).
  let pool = null as Sql | null;
  let gateway: Gateway | null = null;
  try {
    await migrate(admin);
    gateway = new Gateway(admin, { sweepIntervalMs: 0, retentionIntervalMs: 0, feedPollMs: 0 }, silentLogger());
    await gateway.start();
    const host = await registerHost(admin, SYSTEM, { name: 'bench', leaseMs: 600_000, capabilities: { cancel: true } });
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => createSession(admin, SYSTEM, { directory: '/bench' })));

    // Head notices (when each position became visible) and staged notices, as a subscriber's instance hears them.
    const heads: { p: number; at: number }[] = [];
    let staged = 0;
    await admin.listen('gateway_events', (payload) => {
      const n = JSON.parse(payload);
      if (n.k === 's') heads.push({ p: Number(n.p), at: performance.now() });
      else if (n.k === 'q') staged++;
    });

    const rounds = new Map<string, Round[]>(modes.map((m) => [m, []]));
    const run = async (mode: string, seconds: number): Promise<Round> => {
      pool = connect(scratch.url, { max: POOL, settings: MODES[mode], applicationName: `bench-settling-${mode}` });
      try {
        // Its connections opened and warm before the measured part.
        await measure(pool, 0.5);
        return await measure(pool, seconds);
      } finally {
        await pool.end({ timeout: 1 });
        pool = null;
      }
    };
    const measure = async (sql: Sql, seconds: number): Promise<Round> => {
      heads.length = 0;
      staged = 0;
      const settles: { id: string; ms: number; at: number }[] = [];
      const end = performance.now() + seconds * 1000;
      await Promise.all(sessions.map(async (s) => {
        while (performance.now() < end) {
          const e = await beginExecution(sql, SYSTEM, { sessionID: s.id, hostID: host.id, trigger: 'PROMPT' });
          const t = performance.now();
          await settleExecution(sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
          const at = performance.now();
          settles.push({ id: e.id, ms: at - t, at });
        }
      }));
      const took = performance.now() - (end - seconds * 1000);
      await gateway!.sequencer.caughtUp();
      // The head notice of the last pass may still be on its way.
      const rows = await admin<{ executionId: string; pos: number }[]>`SELECT execution_id, pos FROM settlements WHERE execution_id = ANY(${settles.map((s) => s.id)})`;
      const top = Math.max(...rows.map((r) => r.pos));
      for (let i = 0; heads.every((h) => h.p < top) && i < 200; i++) await new Promise((r) => setTimeout(r, 10));
      const pos = new Map(rows.map((r) => [r.executionId, r.pos]));
      const sortedHeads = [...heads].sort((a, b) => a.at - b.at);
      const visible: number[] = [];
      for (const s of settles) {
        const p = pos.get(s.id)!;
        const h = sortedHeads.find((x) => x.p >= p);
        if (h) visible.push(Math.max(0, h.at - s.at));
      }
      const stagedShare = staged / settles.length;
      return {
        pairs: settles.length / (took / 1000),
        settleP50: pct(settles.map((s) => s.ms), 50), settleP99: pct(settles.map((s) => s.ms), 99),
        staged: stagedShare,
        visibleP50: pct(visible, 50), visibleP99: pct(visible, 99),
      };
    };

    console.log(`${SESSIONS} sessions settling at once, ${SECONDS} s per run, ${ROUNDS} rounds (modes in rotating order), pool ${POOL}; load average at start: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    for (const m of modes) await run(m, 0.5); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < modes.length; i++) {
        const m = modes[(i + r) % modes.length];
        const x = await run(m, SECONDS);
        rounds.get(m)!.push(x);
        console.log(`  round ${r + 1} ${m.padEnd(10)} ${x.pairs.toFixed(0).padStart(5)} pairs/s   settle p50 ${x.settleP50.toFixed(1)} p99 ${x.settleP99.toFixed(1)} ms   staged ${(x.staged * 100).toFixed(0)}%   visible after p50 ${x.visibleP50.toFixed(1)} p99 ${x.visibleP99.toFixed(1)} ms`);
      }
    }
    const med = (m: string, k: keyof Round) => median(rounds.get(m)!.map((x) => x[k]));
    console.log(`\nmedians (load average ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
    console.log('mode        pairs/s  (vs wait)       settle p50   p99    staged   visible after p50   p99');
    for (const m of modes) {
      const ref = modes.includes('wait') ? med('wait', 'pairs') : NaN;
      console.log(`${m.padEnd(10)} ${med(m, 'pairs').toFixed(0).padStart(8)}  ${(med(m, 'pairs') / ref).toFixed(2).padStart(8)}x    ${med(m, 'settleP50').toFixed(1).padStart(8)} ${med(m, 'settleP99').toFixed(1).padStart(6)} ms ${(med(m, 'staged') * 100).toFixed(0).padStart(6)}%  ${med(m, 'visibleP50').toFixed(1).padStart(12)} ${med(m, 'visibleP99').toFixed(1).padStart(6)} ms`);
    }
  } finally {
    await gateway?.stop().catch(() => {});
    await pool?.end({ timeout: 1 });
    await admin.end({ timeout: 1 });
    await scratch.drop();
    await db.stop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
