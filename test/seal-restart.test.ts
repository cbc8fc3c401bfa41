import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayCallError } from '../client/index.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { groupAlive, sealKit } from './seal-fixtures.js';
import { until } from './support/until.js';

/** Reload and takeover. The seal is persisted; gateway and host restarts do not make it lie. */

let g: TestGateway;
let kit: Awaited<ReturnType<typeof sealKit>>;
beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 100 });
  kit = await sealKit(g);
});
afterAll(async () => {
  await kit?.dispose();
  await g?.stop();
});

const tagOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e) => (e instanceof GatewayCallError ? e.error._tag : `thrown: ${e}`));

describe('seal across restarts', () => {
  it('gateway restarts mid-seal, the host crashes and comes back: the seal completes only when the restored job is gone', async () => {
    const h1 = await kit.host({ leaseMs: 3_000, killGraceMs: 60_000 });
    const s = await kit.session();
    const job = await h1.runJob(s, null, `trap '' TERM; sleep 30`, { background: true });
    const first = kit.seal(s, 20_000).then((r) => r.__typename, (e) => `failed: ${e}`);
    await until('cancel command', () => h1.commands.length > 0, 10_000);
    expect(h1.commands[0]).toMatchObject({ kind: 'CANCEL_JOB', jobID: job.id, reason: 'SEAL' });

    await h1.stop({ crash: true });
    await g.restart();
    // The interrupted call never claims success.
    expect(await first).not.toBe('SessionSealed');
    // The seal survived the restart: admissions stay closed.
    expect((await kit.state(s)).status).toBe('SEALING');

    await until('job LOST', async () => (await kit.state(s)).jobs.edges[0].node.status === 'LOST', 10_000);
    expect(await kit.seal(s, 2_000)).toMatchObject({ __typename: 'SealUnsupportedError', reason: 'JOB_LOST' });
    expect(groupAlive(job.pid)).toBe(true);

    const h2 = await kit.host({ hostID: h1.id!, leaseMs: 5_000, killGraceMs: 300 });
    expect(await tagOf(h2.beginExecution(s))).toBe('SessionSealedError');
    const adopted = await h2.adoptJob(job.id, job.pid);
    const r = await kit.seal(s, 15_000);
    expect(groupAlive(job.pid)).toBe(false);
    expect(r.__typename).toBe('SessionSealed');
    if (r.__typename === 'SessionSealed') expect(r.cancelledJobs).toMatchObject([{ id: job.id, status: 'CANCELLED', restored: true }]);
    expect((await adopted.done).status).toBe('CANCELLED');
    expect(h2.commands.map((c) => [c.kind, c.jobID])).toEqual([['CANCEL_JOB', job.id]]);
  });

  it('a host restarting within its lease gets the cancel again for the job it takes back', async () => {
    const h1 = await kit.host({ leaseMs: 30_000, killGraceMs: 60_000 });
    const s = await kit.session();
    const job = await h1.runJob(s, null, `trap '' TERM; sleep 30`);
    expect((await kit.seal(s, 300)).__typename).toBe('SealTimeoutError');
    // h1 obeyed (SIGTERM, ignored) and acknowledged, then died before its SIGKILL.
    await until('ack', async () => (await g.sql`SELECT 1 FROM host_commands WHERE job_id = ${job.id} AND acknowledged_at IS NOT NULL`).length > 0, 10_000);
    await h1.stop({ crash: true });
    const h2 = await kit.host({ hostID: h1.id!, killGraceMs: 200 });
    await h2.adoptJob(job.id, job.pid);
    const r = await kit.seal(s, 15_000);
    expect(groupAlive(job.pid)).toBe(false);
    expect(r.__typename).toBe('SessionSealed');
    // The acknowledged command stays acknowledged; the takeover got its own.
    const cmds = await g.sql`SELECT acknowledged_at IS NOT NULL AS acked FROM host_commands WHERE job_id = ${job.id} ORDER BY id`;
    expect(cmds.map((c) => c.acked)).toEqual([true, true]);
  });

  it('the wait is woken by notifications, not a timer: a notification lost while LISTEN was down is made up by the resync', async () => {
    const host = await kit.host({ killGraceMs: 60_000 });
    const s = await kit.session();
    const job = await host.runJob(s, null, `trap '' TERM; sleep 30`);
    let answer: string | null = null;
    const sealing = kit.seal(s, 20_000).then((r) => (answer = r.__typename));
    await until('cancel command', () => host.commands.length > 0, 10_000);
    await until('ack', async () => (await g.sql`SELECT 1 FROM host_commands WHERE job_id = ${job.id} AND acknowledged_at IS NOT NULL`).length > 0, 10_000);
    const bus = g.app.gateway.bus;
    // Positive signals that the instance is working: a notification committed after a point reached
    // this instance's bus (notices arrive in commit order), and a lease sweep ran.
    const heardFrom = new Set<string>();
    const off = bus.on('*', (n) => { if (n.k === 'j') heardFrom.add(n.s); });
    const marker = async () => {
      const m = await kit.session({ directory: '/work/seal/marker' });
      await until("the marker's notification", () => heardFrom.has(m), 10_000);
      await g.app.gateway.sweep();
    };
    // The notifications of the ack (and of everything before it) reach the seal's wait first: a wake-up
    // by them is a notification's, and would read the job's end if it came after it.
    await marker();
    const [resyncs, relistens] = [bus.resyncs, bus.relistens];
    // A job end committed without its notification (as if the listening connection was down then).
    await g.sql`UPDATE jobs SET status = 'CANCELLED', completed_at = statement_timestamp() WHERE id = ${job.id}`;
    // The instance goes on working meanwhile (markers after the update, sweeps): the seal stays waiting.
    for (let i = 0; i < 5; i++) await marker();
    off();
    // (A resync the bus ran by itself meanwhile, a ping gap under load, is a legitimate wake-up.)
    if (bus.resyncs === resyncs && bus.relistens === relistens) {
      expect((await kit.state(s)).status).toBe('SEALING');
      expect(answer).toBeNull();
    }
    bus.simulateResync();
    expect(await sealing).toBe('SessionSealed');
    process.kill(-job.pid, 'SIGKILL');
  });
});

