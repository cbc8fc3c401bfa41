import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GatewayCallError, GatewayClient } from '../client/index.js';
import { buildApp } from '../server/app.js';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { alive, groupAlive, sealKit } from './seal-fixtures.js';
import { until } from './support/until.js';

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

describe('sealSession', () => {
  it('cancels and awaits the execution and every job the session owns (foreground, background, handed off, subagent); children untouched', async () => {
    const host = await kit.host();
    const s = await kit.session();
    const child = await kit.session({ parentID: s });
    const exe: any = await host.beginExecution(s);
    await host.appendText(s, exe.id, 'working on it');
    const bg = await host.runJob(s, exe.id, 'sleep 30', { background: true });
    const fg = await host.runJob(s, exe.id, 'sleep 30 & sleep 30 & wait');
    const sub = await host.runJob(s, null, 'sleep 30', { kind: 'SUBAGENT' });
    const childJob = await host.runJob(child, null, 'sleep 30');
    const childExe: any = await host.beginExecution(child);
    // The handoff lands just before the seal: the job stays the session's and is cancelled too.
    const moved: any = await host.backgroundJob(fg.id);
    expect(moved.background).toBe(true);



    const r = await kit.seal(s, 10_000);


    // Checked the moment the answer arrives: nothing of the session may still run.
    const pids = [bg.pid, fg.pid, sub.pid];
    const stillAlive = pids.filter((p) => groupAlive(p));
    expect(stillAlive).toEqual([]);
    expect(r.__typename).toBe('SessionSealed');
    if (r.__typename !== 'SessionSealed') return;
    expect(r.sessionID).toBe(s);
    expect(r.session.status).toBe('SEALED');
    expect(r.cancelledJobs.map((j) => j.id).sort()).toEqual([bg.id, fg.id, sub.id].sort());
    for (const j of r.cancelledJobs) expect(j.status).toBe('CANCELLED');
    expect(r.cancelledJobs.find((j) => j.id === fg.id)!.background).toBe(true);
    expect(r.interruptedExecution).toMatchObject({ id: exe.id, status: 'INTERRUPTED', interruptReason: 'SEAL' });
    for (const p of pids) expect(alive(p)).toBe(false);

    // The child session and its work are not touched.
    expect(alive(childJob.pid)).toBe(true);
    const cs = await kit.state(child);
    expect(cs.status).toBe('BUSY');
    expect(cs.jobs.edges[0].node.status).toBe('RUNNING');
    await host.settleExecution(childExe.id, 'SUCCEEDED');
    host.cancelJob(childJob.id);
    await childJob.done;

    // History stays readable.
    const st = await kit.state(s);
    expect(st.status).toBe('SEALED');
    expect(st.sealedAt).toBe(r.sealedAt);
    expect(st.messages.edges).toHaveLength(1);
    expect(st.executions.edges[0].node).toMatchObject({ id: exe.id, status: 'INTERRUPTED' });
    expect(st.jobs.edges).toHaveLength(3);

    // Admissions are closed for good; after SEALED nothing writes.
    expect(await tagOf(host.beginExecution(s))).toBe('SessionSealedError');
    expect(await tagOf(host.appendText(s, null, 'again', 'PROMPT'))).toBe('SessionSealedError');
    expect(await tagOf(host.appendText(s, null, 'again', 'SYNTHETIC'))).toBe('SessionSealedError');
    expect(await tagOf(host.appendText(s, exe.id, 'late output', 'MODEL'))).toBe('SessionSealedError');
    expect(await tagOf(host.runJob(s, null, 'sleep 30'))).toBe('SessionSealedError');
    expect((await kit.state(s)).messages.edges).toHaveLength(1);

    // Idempotent: the same answer again.
    const again = await kit.seal(s, 0);
    expect(again).toEqual(r);
  });

  it('repeated and concurrent calls, on two instances, all agree', async () => {
    const host = await kit.host();
    const s = await kit.session();
    const jobs = await Promise.all([1, 2, 3].map(() => host.runJob(s, null, 'sleep 30', { background: true })));
    const other = await g.startInstance();
    const viaOther = new GatewayClient({ url: other.url, token: kit.pluginToken });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => kit.seal(s, 10_000, i % 2 ? viaOther : undefined)));
    await viaOther.close();
    for (const r of results) expect(r).toEqual(results[0]);
    expect(results[0].__typename).toBe('SessionSealed');
    if (results[0].__typename !== 'SessionSealed') return;
    expect(results[0].cancelledJobs.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    for (const j of jobs) expect(groupAlive(j.pid)).toBe(false);
    // One sealing and one sealed event in the journal, whatever the number of calls.
    const types = (await kit.journal(s)).map((e) => e.type);
    expect(types.filter((t) => t === 'session.sealing')).toHaveLength(1);
    expect(types.filter((t) => t === 'session.sealed')).toHaveLength(1);
    expect(types.filter((t) => t === 'job.cancelling')).toHaveLength(3);
  });

  it('unknown, removed, out-of-scope and malformed sessions, bad timeouts and wrong roles: typed answers, nothing committed', async () => {
    const r1 = await kit.seal('ses_doesnotexist000000000000', 0);
    expect(r1).toMatchObject({ __typename: 'SessionNotFoundError', sessionID: 'ses_doesnotexist000000000000', code: 404 });

    const removed = await kit.session();
    const rm = await g.gql(`mutation($id: ID!) { removeSession(input: { sessionID: $id }) { __typename } }`, { id: removed }, kit.pluginToken);
    expect(rm.data.removeSession.__typename).toBe('SessionRemoved');
    expect((await kit.seal(removed, 0)).__typename).toBe('SessionNotFoundError');

    const s = await kit.session({ directory: '/work/elsewhere' });
    const scoped = new GatewayClient({ url: g.url, token: await g.token('plugin', '/work/seal') });
    expect(await kit.seal(s, 0, scoped)).toMatchObject({ __typename: 'SessionNotFoundError', sessionID: s });
    await scoped.close();

    expect(await kit.seal('exe_notasession', 0)).toMatchObject({ __typename: 'InvalidRequestError', field: 'sessionID', code: 400 });
    expect(await kit.seal(s, -1)).toMatchObject({ __typename: 'InvalidRequestError', field: 'timeoutMs' });

    for (const role of ['reader', 'host'] as const) {
      const r = await g.gql(`mutation($id: ID!) { sealSession(input: { sessionID: $id, timeoutMs: 0 }) { __typename } }`, { id: s }, await g.token(role));
      expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    // None of that sealed anything: the session still admits work.
    expect((await kit.state(s)).status).toBe('IDLE');
    expect((await kit.journal(s)).map((e) => e.type)).toEqual(['session.created']);
    const host = await kit.host();
    const e: any = await host.beginExecution(s);
    expect(e.status).toBe('RUNNING');
    await host.settleExecution(e.id, 'SUCCEEDED');
  });

  it('times out on a job that ignores SIGTERM (long grace): admissions stay closed, a later call completes once it is gone', async () => {
    const host = await kit.host({ killGraceMs: 60_000 });
    const s = await kit.session();
    const stubborn = await host.runJob(s, null, `trap '' TERM; sleep 30`, { background: true });
    const quick = await host.runJob(s, null, 'sleep 30');
    const r = await kit.seal(s, 400);
    expect(r.__typename).toBe('SealTimeoutError');
    if (r.__typename !== 'SealTimeoutError') return;
    expect(r.code).toBe(504);
    expect(r.sessionID).toBe(s);
    expect(r.pendingJobs.map((j) => j.id)).toContain(stubborn.id);
    expect(r.pendingJobs.find((j) => j.id === stubborn.id)!.status).toBe('CANCELLING');
    expect(groupAlive(stubborn.pid)).toBe(true);
    expect((await kit.state(s)).status).toBe('SEALING');
    expect(await tagOf(host.beginExecution(s))).toBe('SessionSealedError');
    expect(await tagOf(host.appendText(s, null, 'x', 'PROMPT'))).toBe('SessionSealedError');
    expect(await tagOf(host.runJob(s, null, 'sleep 30'))).toBe('SessionSealedError');
    // timeoutMs is capped by configuration.
    const capped = buildApp({ sql: g.sql, gateway: { sweepIntervalMs: 0, sealMaxTimeoutMs: 250 } });
    await capped.start();
    const viaCapped = new GatewayClient({ url: capped.url, token: kit.pluginToken });
    const started = Date.now();
    const rc = await kit.seal(s, 60_000, viaCapped);
    expect(rc).toMatchObject({ __typename: 'SealTimeoutError', timeoutMs: 250 });
    expect(Date.now() - started).toBeLessThan(30_000);
    await viaCapped.close();
    await capped.stop();
    // A second call keeps waiting for the same work, and answers only once it is gone. The order is
    // made certain with the session's row lock held here: the second call's step queues on it, then
    // the stubborn job's end report (after the kill) queues behind the step; on release the step
    // finds the job still cancelling and waits, and the report's commit is what wakes it (long before
    // the call's deadline, when a last step would also find the job gone).
    await quick.done;
    let second!: Promise<Awaited<ReturnType<typeof kit.seal>>>;
    // Who waits for a lock `id` holds or waits for ahead of them: PostgreSQL's view of its backends, or on
    // a cluster (where the row lock is taken on a worker) Citus's, by global process ID across the nodes.
    const citus = inject('citus');
    const blockedBy = async (id: string) => (citus
      ? await g.sql<{ id: string }[]>`SELECT waiting_gpid::text AS id FROM citus_lock_waits WHERE blocking_gpid = ${id}::bigint`
      : await g.sql<{ id: string }[]>`SELECT pid::text AS id FROM pg_stat_activity WHERE ${id}::int = ANY(pg_blocking_pids(pid))`).map((r) => r.id);
    await g.sql.begin(async (tx) => {
      await tx`SELECT 1 FROM sessions WHERE id = ${s} FOR UPDATE`;
      const [{ holder }] = citus ? await tx<{ holder: string }[]>`SELECT citus_backend_gpid()::text AS holder`
        : await tx<{ holder: string }[]>`SELECT pg_backend_pid()::text AS holder`;
      second = kit.seal(s, 30_000);
      const [step] = await until("the second call's step queued on the session", async () => { const b = await blockedBy(holder); return b.length ? b : null; }, 10_000);
      expect(groupAlive(stubborn.pid)).toBe(true);
      process.kill(-stubborn.pid, 'SIGKILL');
      await until("the job's end report queued behind the step", async () => (await blockedBy(step)).length > 0, 10_000);
    });
    const released = Date.now();
    const r2 = await second;
    expect(Date.now() - released).toBeLessThan(15_000);
    expect(groupAlive(stubborn.pid)).toBe(false);
    expect(r2.__typename).toBe('SessionSealed');
    const journal = await kit.journal(s);
    const ended = journal.findIndex((e) => e.type === 'job.finished' && e.payload.jobID === stubborn.id);
    expect(ended).toBeGreaterThan(-1);
    expect(journal.findIndex((e) => e.type === 'session.sealed')).toBeGreaterThan(ended);
    if (r2.__typename === 'SessionSealed') expect(r2.cancelledJobs.map((j) => j.id).sort()).toEqual([stubborn.id, quick.id].sort());
  });

  it('a host that cannot cancel gives SealUnsupportedError (admissions closed); sealed once its work has ended', async () => {
    const host = await kit.host({ capabilities: { cancel: false } });
    const s = await kit.session();
    const exe: any = await host.beginExecution(s);
    const job = await host.runJob(s, exe.id, 'sleep 30');
    const r = await kit.seal(s, 5_000);
    expect(r).toMatchObject({ __typename: 'SealUnsupportedError', code: 501, sessionID: s, reason: 'HOST_CANNOT_CANCEL' });
    if (r.__typename === 'SealUnsupportedError') expect(r.jobs.map((j) => j.id)).toEqual([job.id]);
    expect(groupAlive(job.pid)).toBe(true);
    expect(await tagOf(host.beginExecution(s))).toBe('SessionSealedError');
    // No command was sent to a host that said it cannot obey.
    expect((await g.sql`SELECT count(*)::int AS n FROM host_commands WHERE host_id = ${host.id}`)[0].n).toBe(0);
    // The job is still running: the execution alone is the reason now.
    process.kill(-job.pid, 'SIGKILL');
    await job.done;
    const r2 = await kit.seal(s, 0);
    expect(r2).toMatchObject({ __typename: 'SealUnsupportedError', reason: 'HOST_CANNOT_CANCEL', jobs: [], execution: { id: exe.id } });
    await host.settleExecution(exe.id, 'SUCCEEDED');
    expect((await kit.seal(s, 0)).__typename).toBe('SessionSealed');
  });

  it('a host that can start work behind the gateway (exclusiveAdmission: false) never gets SessionSealed, only the honest reason', async () => {
    const host = await kit.host({ capabilities: { cancel: true, exclusiveAdmission: false }, killGraceMs: 300 });
    const s = await kit.session();
    const exe: any = await host.beginExecution(s);
    const job = await host.runJob(s, exe.id, 'sleep 30', { background: true });
    const r = await kit.seal(s, 10_000);
    // Everything the gateway knows of was cancelled and awaited first...
    expect(groupAlive(job.pid)).toBe(false);
    expect((await job.done).status).toBe('CANCELLED');
    const st = await kit.state(s);
    expect(st.executions.edges[0].node).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'SEAL' });
    // ...but nothing proves the host will not start more: not reported as success.
    // It names the jobs it did cancel, and says why it is unproven (not that it "cannot cancel").
    expect(r).toMatchObject({ __typename: 'SealUnsupportedError', code: 501, sessionID: s, reason: 'ADMISSION_NOT_EXCLUSIVE',
      jobs: [{ id: job.id, status: 'CANCELLED' }] });
    const msg = (r as { message?: string }).message ?? '';
    expect(msg).toContain('1 job(s) cancelled');
    expect(msg).toContain('without the gateway');
    expect(msg).not.toContain('cannot cancel');
    // It names the host that can (an agent the gateway does not know: by its registered name), not another agent.
    expect(msg).toContain('(it registered with capabilities.exclusiveAdmission false)');
    expect(msg).not.toContain('OpenCode');
    // Nothing known runs and admissions are closed: SEALED, not SEALING forever.
    expect(st.status).toBe('SEALED');
    expect(st.sealedAt).not.toBeNull();
    expect(await tagOf(host.beginExecution(s))).toBe('SessionSealedError');
    // Every later call gives the same answer.
    expect((await kit.seal(s, 0))).toMatchObject({ __typename: 'SealUnsupportedError', reason: 'ADMISSION_NOT_EXCLUSIVE', jobs: [{ id: job.id }] });
  });

  it('a session created for such a host (createSession hostID) gets the honest reason even before anything ran; for an exclusive host it seals', async () => {
    const open = await kit.host({ capabilities: { cancel: true, exclusiveAdmission: false } });
    const closed = await kit.host();
    const s1 = await kit.session({ hostID: open.id! });
    expect(await kit.seal(s1, 0)).toMatchObject({ __typename: 'SealUnsupportedError', reason: 'ADMISSION_NOT_EXCLUSIVE', jobs: [] });
    expect((await kit.state(s1)).status).toBe('SEALED');
    const s2 = await kit.session({ hostID: closed.id! });
    expect((await kit.seal(s2, 0)).__typename).toBe('SessionSealed');
    // An unknown host is refused.
    const r = await g.gql(`mutation { createSession(input: { directory: "/work/seal", hostID: "hst_00000000000000aaaaaaaaaaaa" }) {
      __typename ... on InvalidRequestError { field } } }`, undefined, kit.pluginToken);
    expect(r.data.createSession).toMatchObject({ __typename: 'InvalidRequestError', field: 'hostID' });
  });

  it('a lapsed lease (LOST job) gives SealUnsupportedError; after the host restarts and restores the job, the seal completes only when it is gone', async () => {
    const h1 = await kit.host({ leaseMs: 3_000 });
    const s = await kit.session();
    const job = await h1.runJob(s, null, `trap '' TERM; sleep 30`, { background: true });
    await h1.stop({ crash: true }); // the host dies; its job's process group lives on
    await until('job LOST', async () => (await kit.state(s)).jobs.edges[0].node.status === 'LOST', 10_000);
    const r = await kit.seal(s, 5_000);
    expect(r).toMatchObject({ __typename: 'SealUnsupportedError', reason: 'JOB_LOST', jobs: [{ id: job.id, status: 'LOST' }] });
    expect(groupAlive(job.pid)).toBe(true);

    // The host comes back under its ID, takes the job back; the sealing session has it cancelled.
    const h2 = await kit.host({ hostID: h1.id!, leaseMs: 5_000, killGraceMs: 300 });
    const adopted = await h2.adoptJob(job.id, job.pid);
    const r2 = await kit.seal(s, 15_000);
    expect(groupAlive(job.pid)).toBe(false);
    expect(r2.__typename).toBe('SessionSealed');
    if (r2.__typename === 'SessionSealed') expect(r2.cancelledJobs).toMatchObject([{ id: job.id, status: 'CANCELLED', restored: true }]);
    expect((await adopted.done).status).toBe('CANCELLED');
    // The restarted host was told to cancel the job it took back.
    expect(h2.commands.map((c) => [c.kind, c.jobID])).toEqual([['CANCEL_JOB', job.id]]);
  });

  it('hostCommands: host role and own hosts only; a command is delivered again on every reconnect until acknowledged, new ones live', async () => {
    const q = (query: string, vars: Record<string, unknown>, token = kit.hostToken) => g.gql(query, vars, token);
    const reg = await q(`mutation { registerHost(input: { name: "quiet", capabilities: { cancel: true } }) { ... on Host { id } } }`, {});
    const hostID = reg.data.registerHost.id;
    const start = async (sessionID: string) => (await q(`mutation($i: StartJobInput!) { startJob(input: $i) { ... on Job { id } } }`,
      { i: { sessionID, hostID, kind: 'SHELL', command: 'sleep 1' } })).data.startJob.id as string;
    const s1 = await kit.session();
    const j1 = await start(s1);
    expect((await kit.seal(s1, 0)).__typename).toBe('SealTimeoutError');

    const SUB = `subscription($h: ID!) { hostCommands(hostID: $h) { id kind reason jobID sessionID } }`;
    const forbidden = subscribe(g.ws(kit.pluginToken), SUB, { h: hostID });
    await until('forbidden', () => forbidden.errors.length > 0 || forbidden.done);
    expect(JSON.stringify(forbidden.errors)).toContain('FORBIDDEN');
    const foreign = subscribe(g.ws(await g.token('host')), SUB, { h: hostID });
    await until('not found', () => foreign.errors.length > 0 || foreign.done);
    expect(JSON.stringify(foreign.errors)).toContain('NOT_FOUND');
    expect(foreign.events).toEqual([]);

    const a = subscribe(g.ws(kit.hostToken), SUB, { h: hostID });
    const [first] = await a.waitFor((e) => e.length >= 1);
    expect(first.hostCommands).toMatchObject({ kind: 'CANCEL_JOB', reason: 'SEAL', jobID: j1, sessionID: s1 });
    a.unsubscribe();
    // Not acknowledged: a new connection gets it again.
    const b = subscribe(g.ws(kit.hostToken), SUB, { h: hostID });
    const [again] = await b.waitFor((e) => e.length >= 1);
    expect(again.hostCommands.id).toBe(first.hostCommands.id);
    b.unsubscribe();

    const ACK = `mutation($id: ID!) { acknowledgeHostCommand(input: { commandID: $id }) { __typename ... on HostCommand { id acknowledgedAt } ... on InvalidRequestError { field } } }`;
    const otherHostToken = await g.token('host');
    expect((await q(ACK, { id: first.hostCommands.id }, otherHostToken)).data.acknowledgeHostCommand).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
    expect((await q(ACK, { id: 'cmd_unknown' })).data.acknowledgeHostCommand.__typename).toBe('InvalidRequestError');
    expect((await q(ACK, { id: first.hostCommands.id }, kit.pluginToken)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const acked = (await q(ACK, { id: first.hostCommands.id })).data.acknowledgeHostCommand;
    expect(acked.acknowledgedAt).toBeTruthy();
    expect((await q(ACK, { id: first.hostCommands.id })).data.acknowledgeHostCommand.acknowledgedAt).toBe(acked.acknowledgedAt);

    // Acknowledged: not delivered again; a new command arrives live.
    // (Delivered in order, pending ones first: had the acknowledged one come again, it would be the first event.)
    const c = subscribe(g.ws(kit.hostToken), SUB, { h: hostID });
    const s2 = await kit.session();
    const j2 = await start(s2);
    expect((await kit.seal(s2, 0)).__typename).toBe('SealTimeoutError');
    const [live] = await c.waitFor((e) => e.length >= 1);
    expect(live.hostCommands).toMatchObject({ kind: 'CANCEL_JOB', jobID: j2, sessionID: s2 });
    c.unsubscribe();

    // The host reports the ends; the seals complete.
    for (const j of [j1, j2]) await q(`mutation($id: ID!) { finishJob(input: { jobID: $id, status: CANCELLED }) { __typename } }`, { id: j });
    expect((await kit.seal(s1, 0)).__typename).toBe('SessionSealed');
    expect((await kit.seal(s2, 0)).__typename).toBe('SessionSealed');
  });
});

