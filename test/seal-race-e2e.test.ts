import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayCallError } from '../client/index.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { groupAlive, sealKit } from './seal-fixtures.js';

/**
 * Issue 4, late admission: admissions sent concurrently with the seal, in randomized interleavings.
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

const ADMISSIONS = ['begin', 'prompt', 'synthetic', 'job', 'background'] as const;
type Admission = (typeof ADMISSIONS)[number];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const opArb = fc.record({ kind: fc.constantFrom(...ADMISSIONS), delay: fc.nat(15), background: fc.boolean() });
const planArb = fc.record({ prelude: fc.boolean(), ops: fc.array(opArb, { minLength: 1, maxLength: 6 }), sealDelay: fc.nat(15) });

/** The journal event an admitted operation wrote, and every admission event in the journal. */
function admissionEvents(journal: { seq: number; type: string; payload: any }[]) {
  return journal.filter((e) =>
    e.type === 'execution.started' || e.type === 'job.started' || e.type === 'job.backgrounded' ||
    (e.type === 'message.appended' && (e.payload.origin === 'PROMPT' || e.payload.origin === 'SYNTHETIC')));
}
const eventType: Record<Admission, string> = {
  begin: 'execution.started', prompt: 'message.appended', synthetic: 'message.appended', job: 'job.started', background: 'job.backgrounded',
};

function checkFence(journal: { seq: number; type: string; payload: any }[], admitted: { kind: Admission }[], preludeEvents: number) {
  const sealing = journal.find((e) => e.type === 'session.sealing');
  expect(sealing).toBeDefined();
  const events = admissionEvents(journal);
  // Nothing admitted after the seal's commit...
  expect(events.filter((e) => e.seq > sealing!.seq)).toEqual([]);
  // ...and every admission a caller was told succeeded is one of those before it (none unaccounted).
  for (const kind of ADMISSIONS) {
    const want = admitted.filter((a) => a.kind === kind).length;
    const got = events.filter((e) => e.type === eventType[kind] && (kind === 'prompt' ? e.payload.origin === 'PROMPT' : kind === 'synthetic' ? e.payload.origin === 'SYNTHETIC' : true)).length;
    expect(got - (kind === 'begin' || kind === 'job' ? preludeEvents : 0)).toBe(want);
  }
}

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
