import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { createSession, ok } from './fixtures.js';
import { ReferenceHost } from '../host/host.js';
import { GatewayCallError } from '../client/index.js';

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

/** How many processes are in the process group `pgid`. */
function groupSize(pgid: number): number {
  try { return execFileSync('pgrep', ['-g', String(pgid)], { encoding: 'utf8' }).trim().split('\n').length; } catch { return 0; }
}

function alive(pid: number) {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

describe('reference host', () => {
  it('runs shell jobs as real processes and reports their exits', async () => {
    const host = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 5000 });
    await host.start();
    const s = await createSession(g, { directory: '/work/ref' });
    const e: any = await host.beginExecution(s.id);
    const good = await host.runJob(s.id, e.id, 'sleep 0.3; exit 0');
    const bad = await host.runJob(s.id, e.id, 'exit 3', { background: true });
    expect(alive(good.pid)).toBe(true);
    expect(await bad.done).toEqual({ status: 'ERROR', exitCode: 3 });
    expect(await good.done).toEqual({ status: 'COMPLETED', exitCode: 0 });
    expect(alive(good.pid)).toBe(false);
    const jobs = await ok(g, `query($id: ID!) { execution(id: $id) { jobs { edges { node { id status exitCode background completedAt } } } } }`, { id: e.id });
    const byId = Object.fromEntries(jobs.jobs.edges.map((x: any) => [x.node.id, x.node]));
    expect(byId[good.id]).toMatchObject({ status: 'COMPLETED', exitCode: 0, background: false });
    expect(byId[bad.id]).toMatchObject({ status: 'ERROR', exitCode: 3, background: true });
    await host.settleExecution(e.id, 'SUCCEEDED');
    await host.stop();
  });

  it('surfaces typed errors the way plugins compare them (_tag)', async () => {
    const host = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 5000 });
    await host.start();
    const s = await createSession(g, { directory: '/work/ref2' });
    const e: any = await host.beginExecution(s.id);
    const err = await host.beginExecution(s.id).catch((x) => x);
    expect(err).toBeInstanceOf(GatewayCallError);
    expect(err.error).toMatchObject({ _tag: 'SessionBusyError', code: 409, sessionID: s.id, executionID: e.id });
    const missing = await host.beginExecution('ses_00000000000000000000000000').catch((x) => x);
    expect(missing.error).toMatchObject({ _tag: 'SessionNotFoundError', sessionID: 'ses_00000000000000000000000000' });
    await host.settleExecution(e.id, 'SUCCEEDED');
    await host.stop();
  });

  it('stop() cancels its running jobs by process group', async () => {
    const host = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 5000, killGraceMs: 300 });
    await host.start();
    const s = await createSession(g, { directory: '/work/ref3' });
    // A job that starts a grandchild: the whole group must go.
    const j = await host.runJob(s.id, null, 'sleep 30 & sleep 30; wait');
    // Both sleeps are running in the job's process group before the host stops.
    await expect.poll(() => groupSize(j.pid), { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    await host.stop();
    expect(await j.done).toMatchObject({ status: 'CANCELLED' });
    expect(alive(j.pid)).toBe(false);
    const read = await ok(g, `query($id: ID!) { job(id: $id) { status } }`, { id: j.id });
    expect(read.status).toBe('CANCELLED');
  });
});
