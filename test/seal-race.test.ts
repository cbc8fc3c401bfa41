import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM } from '../domain/access.js';
import { beginExecution } from '../domain/executions.js';
import { registerHost } from '../domain/hosts.js';
import { backgroundJob, startJob } from '../domain/jobs.js';
import { appendMessage } from '../domain/messages.js';
import { sealSession } from '../domain/seal.js';
import { createSession } from '../domain/sessions.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { sealKit } from './seal-fixtures.js';
import { checkFence, planArb, sleep, type Admission } from './seal-fixtures.js';

/**
 * Late admission: admissions sent concurrently with the seal, in randomized interleavings.
 * Never is anything admitted after the seal's commit (journal order = commit order per session), and
 * never is a seal reported SessionSealed while admitted work still runs.
 */

let g: TestGateway;
let kit: Awaited<ReturnType<typeof sealKit>>;
beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  kit = await sealKit(g);
});
afterAll(async () => {
  await kit?.dispose();
  await g?.stop();
});


describe('late admission races the seal', () => {
  it('200 interleavings at the domain level (one gateway pool, direct calls): the fence holds', async () => {
    const host = await registerHost(g.sql, SYSTEM, { name: 'race', capabilities: { cancel: true }, leaseMs: 600_000 });
    const bus = g.app.gateway.bus;
    // Independent sessions: the plans run five at a time (more interleavings per second, and the
    // shared pool adds its own jitter). A failure names its plan; the seed reproduces the set.
    const seed = Number(process.env.SEAL_RACE_SEED ?? Date.now() % 1_000_000);
    const plans = fc.sample(planArb, { numRuns: Number(process.env.SEAL_RACE_RUNS ?? 200), seed });
    const tally = { admitted: 0, sealedOut: 0 };
    const check = async (plan: (typeof plans)[number]) => {
      const s = await createSession(g.sql, SYSTEM, { directory: '/race' });
      let preJob: string | null = null;
      if (plan.prelude) {
        const e = await beginExecution(g.sql, SYSTEM, { sessionID: s.id, hostID: host.id, trigger: 'PROMPT' });
        preJob = (await startJob(g.sql, SYSTEM, { sessionID: s.id, executionID: e.id, hostID: host.id, kind: 'SHELL', command: 'x' })).id;
      }
      const admitted: { kind: Admission }[] = [];
      const run = async (op: { kind: Admission; delay: number; background: boolean }) => {
        await sleep(op.delay);
        try {
          switch (op.kind) {
            case 'begin': await beginExecution(g.sql, SYSTEM, { sessionID: s.id, hostID: host.id, trigger: 'PROMPT' }); break;
            case 'prompt': case 'synthetic':
              await appendMessage(g.sql, SYSTEM, { sessionID: s.id, role: 'USER', origin: op.kind === 'prompt' ? 'PROMPT' : 'SYNTHETIC', parts: [{ type: 'TEXT', text: 'x' }] });
              break;
            case 'job': await startJob(g.sql, SYSTEM, { sessionID: s.id, hostID: host.id, kind: 'SHELL', command: 'x', background: op.background }); break;
            case 'background':
              if (!preJob) return;
              if ((await backgroundJob(g.sql, SYSTEM, { jobID: preJob })).background) {
                // Only the first handoff writes an event; later ones are no-ops.
                if (admitted.some((a) => a.kind === 'background')) return;
              }
              break;
          }
          admitted.push({ kind: op.kind });
          tally.admitted++;
        } catch (e: any) {
          expect(['SessionSealedError', 'SessionBusyError', 'InvalidRequestError']).toContain(e.constructor.name);
          if (e.constructor.name === 'SessionSealedError') tally.sealedOut++;
        }
      };
      const seal = (async () => {
        await sleep(plan.sealDelay);
        return sealSession(g.sql, SYSTEM, { sessionID: s.id, timeoutMs: 0 }, { bus }).then(() => 'SessionSealed', (e) => e.constructor.name);
      })();
      const [sealed] = await Promise.all([seal, ...plan.ops.map(run)]);
      const journal = (await g.sql`SELECT seq, type, payload FROM journal WHERE session_id = ${s.id} ORDER BY seq`) as any[];
      checkFence(journal, admitted, plan.prelude ? 1 : 0);
      // With timeoutMs 0 nobody obeys the commands: the seal is sealed only if nothing was running.
      const running = await g.sql`
        SELECT (SELECT count(*) FROM jobs WHERE session_id = ${s.id} AND status IN ('RUNNING', 'CANCELLING'))::int
             + (SELECT count(*) FROM executions WHERE session_id = ${s.id} AND status = 'RUNNING')::int AS n`;
      if (sealed === 'SessionSealed') expect(running[0].n).toBe(0);
      else expect(sealed).toBe('SealTimeoutError');
      // Every unfinished job was asked to stop.
      const unasked = await g.sql`SELECT id FROM jobs WHERE session_id = ${s.id} AND status = 'RUNNING'`;
      expect(unasked).toEqual([]);
    };
    for (let i = 0; i < plans.length; i += 5) {
      await Promise.all(plans.slice(i, i + 5).map((plan) => check(plan).catch((e) => {
        throw new Error(`seed ${seed}, plan ${JSON.stringify(plan)}: ${e?.message ?? e}`);
      })));
    }
    // The plans did race: some admissions landed before the seal, some were turned away by it.
    expect(tally.admitted).toBeGreaterThan(0);
    expect(tally.sealedOut).toBeGreaterThan(0);
  });
});
