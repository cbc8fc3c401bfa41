/**
 * Write-path benchmark: what one domain operation costs through `commitEvent` (domain/events/commit.ts),
 * against the floor of any session state change measured in the same run.
 *
 *   npx tsx bench/writes.ts
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test ROUNDS=5 N=40 npx tsx bench/writes.ts
 *
 * A fresh database is created on the DATABASE_URL server (embedded PostgreSQL when unset) and dropped at
 * the end. Each round runs N session lifecycles (create, update, begin, append a message, start and
 * finish a job, settle, correct, retract, remove) through the domain functions the resolvers call, and
 * N times the baseline: one transaction that locks a session row and appends one journal row (the least
 * any journaled change can do). Prints per operation its SQL statements (BEGIN and COMMIT included;
 * exact, independent of the machine), its waits for the server (statements handed to the connection in
 * the same turn of the event loop travel together and are answered together: one wait), and the median
 * over rounds of its time divided by the baseline's (time itself swings with the neighbours' load; the
 * ratio much less).
 */
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { SYSTEM } from '../domain/access.js';
import { correctMessagePart, retractMessage } from '../domain/corrections.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { registerHost } from '../domain/hosts.js';
import { finishJob, startJob } from '../domain/jobs.js';
import { appendMessage } from '../domain/messages.js';
import { createSession, removeSession, updateSession } from '../domain/sessions.js';
import { median } from './support/drive.js';

const ROUNDS = Number(process.env.ROUNDS) || 5;
const N = Number(process.env.N) || 40;

async function main() {
  const db = await openDatabase();
  const scratch = await createScratchDatabase(db.url, 'gw_bench_writes');
  let trips = 0;
  let waits = 0;
  let batchOpen = false;
  // A statement handed over while no batch is open starts one (a wait); the batch closes once this turn
  // of the event loop is over (setImmediate runs after the I/O callbacks and their microtasks).
  const sql = connect(scratch.url, { max: 2, onQuery: () => {
    trips++;
    if (!batchOpen) { batchOpen = true; waits++; setImmediate(() => { batchOpen = false; }); }
  } });
  try {
    await migrate(sql);
    const host = await registerHost(sql, SYSTEM, { name: 'bench', leaseMs: 600_000, capabilities: { cancel: true } });
    const floorSession = await createSession(sql, SYSTEM, { directory: '/bench' });
    const roundTrips: Record<string, number> = {};
    const serverWaits: Record<string, number> = {};
    const ratios: Record<string, number[]> = {};
    const baseMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ms: Record<string, number> = {};
      const op = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
        trips = 0;
        waits = 0;
        const t = performance.now();
        const r = await f();
        ms[name] = (ms[name] ?? 0) + performance.now() - t;
        roundTrips[name] = trips;
        serverWaits[name] = waits;
        return r;
      };
      let t = performance.now();
      for (let i = 0; i < N; i++) {
        await sql.begin(async (tx) => {
          await tx`SELECT id FROM sessions WHERE id = ${floorSession.id} FOR UPDATE`;
          await tx`WITH s AS (UPDATE sessions SET last_seq = last_seq + 1 WHERE id = ${floorSession.id} RETURNING last_seq)
            INSERT INTO journal (session_id, seq, type, payload) SELECT ${floorSession.id}, last_seq, 'bench.floor', '{}' FROM s`;
        });
      }
      const base = (performance.now() - t) / N;
      baseMs.push(base);
      t = performance.now();
      for (let i = 0; i < N; i++) {
        const s = await op('createSession', () => createSession(sql, SYSTEM, { directory: '/bench' }));
        await op('updateSession', () => updateSession(sql, SYSTEM, { sessionID: s.id, title: 'x' }));
        const e = await op('beginExecution', () => beginExecution(sql, SYSTEM, { sessionID: s.id, hostID: host.id, trigger: 'PROMPT' }));
        const m = await op('appendMessage', () => appendMessage(sql, SYSTEM, {
          sessionID: s.id, executionID: e.id, role: 'ASSISTANT', origin: 'MODEL', parts: [{ type: 'TEXT', text: 'a' }, { type: 'TEXT', text: 'b' }],
        }));
        const j = await op('startJob', () => startJob(sql, SYSTEM, { sessionID: s.id, hostID: host.id, kind: 'SHELL', title: 'j' }));
        await op('finishJob', () => finishJob(sql, SYSTEM, { jobID: j.id, status: 'COMPLETED', exitCode: 0 }));
        await op('settleExecution', () => settleExecution(sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' }));
        const [p] = await sql<{ id: string }[]>`SELECT id FROM parts WHERE message_id = ${m.id} ORDER BY index LIMIT 1`;
        await op('correctMessagePart', () => correctMessagePart(sql, SYSTEM, { messageID: m.id, partID: p.id, text: 'c' }));
        await op('retractMessage', () => retractMessage(sql, SYSTEM, { messageID: m.id }));
        await op('removeSession', () => removeSession(sql, SYSTEM, { sessionID: s.id }));
      }
      for (const [name, total] of Object.entries(ms)) (ratios[name] ??= []).push(total / N / base);
      console.log(`round ${round + 1}: baseline ${base.toFixed(2)} ms, lifecycle ${((performance.now() - t) / N).toFixed(1)} ms`);
    }
    console.log(`baseline (lock + one journal row): median ${median(baseMs).toFixed(2)} ms per transaction, 4 statements, 4 waits`);
    console.log('operation             statements   waits   time / baseline (median of rounds)');
    for (const name of Object.keys(roundTrips)) {
      console.log(`${name.padEnd(22)}${String(roundTrips[name]).padStart(10)}${String(serverWaits[name]).padStart(8)}   ${median(ratios[name]).toFixed(2)}`);
    }
  } finally {
    await sql.end({ timeout: 1 });
    await scratch.drop();
    await db.stop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
