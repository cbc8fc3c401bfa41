import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayCallError } from '../client/index.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { groupAlive, sealKit } from './seal-fixtures.js';
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


describe('late admission races the seal, end to end', () => {
  it('end to end with real processes through the reference host: SessionSealed only once everything admitted is gone', async () => {
    const host = await kit.host({ killGraceMs: 500 });
    await fc.assert(
      fc.asyncProperty(planArb, async (plan) => {
        const s = await kit.session();
        const pids: number[] = [];
        let preJob: string | null = null;
        if (plan.prelude) {
          const e: any = await host.beginExecution(s);
          const j = await host.runJob(s, e.id, 'sleep 30');
          pids.push(j.pid);
          preJob = j.id;
        }
        const admitted: { kind: Admission }[] = [];
        const tag = (e: unknown) => (e instanceof GatewayCallError ? e.error._tag : String(e));
        const run = async (op: { kind: Admission; delay: number; background: boolean }) => {
          await sleep(op.delay);
          try {
            switch (op.kind) {
              case 'begin': await host.beginExecution(s); break;
              case 'prompt': await host.appendText(s, null, 'x', 'PROMPT'); break;
              case 'synthetic': await host.appendText(s, null, 'x', 'SYNTHETIC'); break;
              case 'job': pids.push((await host.runJob(s, null, 'sleep 30', { background: op.background })).pid); break;
              case 'background':
                if (!preJob) return;
                await host.backgroundJob(preJob);
                // Only the first handoff writes an event; later ones are no-ops.
                if (admitted.some((a) => a.kind === 'background')) return;
                break;
            }
            admitted.push({ kind: op.kind });
          } catch (e) {
            expect(['SessionSealedError', 'SessionBusyError', 'InvalidRequestError']).toContain(tag(e));
          }
        };
        let aliveAtAnswer: number[] = [];
        const seal = (async () => {
          await sleep(plan.sealDelay);
          const r = await kit.seal(s, 20_000);
          aliveAtAnswer = pids.filter((p) => groupAlive(p)); // the moment the answer arrives
          return r;
        })();
        const [r] = await Promise.all([seal, ...plan.ops.map(run)]);
        expect(r.__typename).toBe('SessionSealed');
        expect(aliveAtAnswer).toEqual([]);
        checkFence(await kit.journal(s), admitted, plan.prelude ? 1 : 0);
        const st = await kit.state(s);
        expect(st.runningExecution).toBeNull();
        expect(st.jobs.edges.filter((e: any) => e.node.status === 'RUNNING' || e.node.status === 'CANCELLING')).toEqual([]);
      }),
      { numRuns: Number(process.env.SEAL_RACE_E2E_RUNS ?? 20) },
    );
  });
});
