import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { newId } from '../domain/ids.js';
import { SYSTEM } from '../domain/access.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { backgroundJob, finishJob, startJob as startJobNow } from '../domain/jobs.js';
import { appendMessage } from '../domain/messages.js';
import { correctMessagePart } from '../domain/corrections.js';
import { createSession as createSessionNow } from '../domain/sessions.js';
import { registerHost as registerHostNow } from '../domain/hosts.js';
import { appendText, begin, createSession, lapseLease, ok, registerHost, result, settle, snapshotCounts, startJob } from './fixtures.js';

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway({ sweepIntervalMs: 100 }); });
afterAll(async () => { await g?.stop(); });

const FINISH = `mutation($input: FinishJobInput!) { finishJob(input: $input) { ${result('JobNotFoundError', 'InvalidRequestError')} ... on Job { id status exitCode completedAt } } }`;
const BACKGROUND = `mutation($input: BackgroundJobInput!) { backgroundJob(input: $input) { ${result('SessionSealedError', 'JobNotFoundError', 'InvalidRequestError')} ... on Job { id background } } }`;
const RESTORE = `mutation($input: RestoreJobInput!) { restoreJob(input: $input) { ${result('JobNotFoundError', 'HostNotFoundError', 'InvalidRequestError')} ... on Job { id status restored } } }`;

describe('host registration and leases', () => {
  it('registers with capabilities and renews its lease', async () => {
    const token = await g.token('host');
    const h = await ok(g, `mutation { registerHost(input: { name: "h", leaseMs: 5000, capabilities: { cancel: true, generate: true }, models: [{ providerID: "p", modelID: "m" }] }) {
      __typename ... on Host { id leaseMs leaseExpiresAt capabilities { cancel compact generate } models { providerID modelID } } } }`, undefined, token);
    expect(h).toMatchObject({ __typename: 'Host', leaseMs: 5000, capabilities: { cancel: true, compact: false, generate: true }, models: [{ providerID: 'p', modelID: 'm' }] });
    expect(h.id).toMatch(/^hst_/);
    await new Promise((r) => setTimeout(r, 20));
    const r = await ok(g, `mutation($id: ID!) { renewHostLease(input: { hostID: $id }) { __typename ... on Host { leaseExpiresAt } } }`, { id: h.id }, token);
    expect(new Date(r.leaseExpiresAt).getTime()).toBeGreaterThan(new Date(h.leaseExpiresAt).getTime());
  });

  it('refuses bad lease lengths and another token\'s host', async () => {
    const token = await g.token('host');
    const bad = await ok(g, `mutation { registerHost(input: { name: "h", leaseMs: 5 }) { ${result('HostNotFoundError', 'InvalidRequestError')} } }`, undefined, token);
    expect(bad).toMatchObject({ __typename: 'InvalidRequestError', field: 'leaseMs' });
    const mine = await registerHost(g, { token });
    const other = await g.token('host');
    const r = await ok(g, `mutation($id: ID!) { renewHostLease(input: { hostID: $id }) { ${result('HostNotFoundError', 'InvalidRequestError')} } }`, { id: mine.hostID }, other);
    expect(r).toMatchObject({ __typename: 'HostNotFoundError', hostID: mine.hostID });
  });
});

describe('executions', () => {
  it('numbers executions per session and reads them newest first', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/ex' });
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const e = await begin(g, host, s.id);
      expect(e).toMatchObject({ __typename: 'Execution', sequence: i + 1, status: 'RUNNING' });
      const busy = await ok(g, `query($id: ID!) { session(id: $id) { status } }`, { id: s.id });
      expect(busy.status).toBe('BUSY');
      expect(await settle(g, host, e.id)).toMatchObject({ status: 'SUCCEEDED' });
      ids.push(e.id);
    }
    const read = await ok(g, `query($id: ID!) { session(id: $id) { status lastSettledExecution { id } executions(first: 2) { edges { node { id sequence session { id } } } pageInfo { hasNextPage } } } }`, { id: s.id });
    expect(read.status).toBe('IDLE');
    expect(read.lastSettledExecution.id).toBe(ids[2]);
    expect(read.executions.edges.map((e: any) => e.node.sequence)).toEqual([3, 2]);
    expect(read.executions.pageInfo.hasNextPage).toBe(true);
  });

  it('admits exactly one of many concurrent beginExecution calls', async () => {
    const host = await registerHost(g);
    for (let round = 0; round < 10; round++) {
      const s = await createSession(g, { directory: '/work/race' });
      const results = await Promise.all(Array.from({ length: 12 }, () => begin(g, host, s.id)));
      const admitted = results.filter((r) => r.__typename === 'Execution');
      expect(admitted).toHaveLength(1);
      for (const r of results) {
        if (r.__typename !== 'Execution') expect(r).toMatchObject({ __typename: 'SessionBusyError', code: 409, sessionID: s.id, executionID: admitted[0].id });
      }
      const [{ n }] = await g.sql`SELECT count(*)::int AS n FROM executions WHERE session_id = ${s.id}`;
      expect(n).toBe(1);
    }
  });

  it('refuses settling twice with another outcome, settling a non-running execution, and bad settle input, changing nothing; the same settle again answers the execution', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/settle' });
    const e = await begin(g, host, s.id);
    const before0 = await snapshotCounts(g);
    expect(await settle(g, host, e.id, 'INTERRUPTED')).toMatchObject({ __typename: 'InvalidRequestError', field: 'interruptReason' });
    expect(await settle(g, host, e.id, 'SUCCEEDED', { interruptReason: 'USER' })).toMatchObject({ __typename: 'InvalidRequestError', field: 'interruptReason' });
    expect(await settle(g, host, e.id, 'RUNNING')).toMatchObject({ __typename: 'InvalidRequestError', field: 'status' });
    expect(await settle(g, host, e.id, 'ABANDONED')).toMatchObject({ __typename: 'InvalidRequestError', field: 'status' });
    expect(await snapshotCounts(g)).toEqual(before0);
    expect(await settle(g, host, e.id, 'INTERRUPTED', { interruptReason: 'USER' })).toMatchObject({ __typename: 'Execution', status: 'INTERRUPTED', interruptReason: 'USER' });
    const before = await snapshotCounts(g);
    // The same settle again (a retry whose first answer was lost) answers the execution as it settled, and writes nothing.
    expect(await settle(g, host, e.id, 'INTERRUPTED', { interruptReason: 'USER' })).toMatchObject({ __typename: 'Execution', id: e.id, status: 'INTERRUPTED', interruptReason: 'USER' });
    expect(await settle(g, host, e.id, 'INTERRUPTED', { interruptReason: 'SEAL' })).toMatchObject({ __typename: 'InvalidRequestError', field: 'executionID' });
    expect(await settle(g, host, e.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'executionID' });
    expect(await settle(g, host, 'exe_00000000000000000000000000')).toMatchObject({ __typename: 'ExecutionNotFoundError' });
    expect(await settle(g, host, 'ses_1')).toMatchObject({ __typename: 'InvalidRequestError', field: 'executionID' });
    expect(await snapshotCounts(g)).toEqual(before);
  });

  it('settling an ID that carries a real session but names no execution of it is not found, and leaves the session free', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/made-up' });
    const e = await begin(g, host, s.id);
    // The session is locked through the ID before the execution is read: a made-up execution of it,
    // one of a session that does not exist, and another host's token answer alike, changing nothing.
    const before = await snapshotCounts(g);
    expect(await settle(g, host, newId('execution', s.id))).toMatchObject({ __typename: 'ExecutionNotFoundError' });
    expect(await settle(g, host, newId('execution', 'ses_00000000000000000000000000'))).toMatchObject({ __typename: 'ExecutionNotFoundError' });
    const other = await registerHost(g);
    expect(await settle(g, other, e.id)).toMatchObject({ __typename: 'ExecutionNotFoundError' });
    expect(await snapshotCounts(g)).toEqual(before);
    // Nothing held the session's lock: its execution settles, and the next one is admitted.
    expect(await settle(g, host, e.id)).toMatchObject({ __typename: 'Execution', status: 'SUCCEEDED' });
    expect(await begin(g, host, s.id)).toMatchObject({ __typename: 'Execution', sequence: 2 });
  });

  it('checks a begin in one order whatever else is wrong with it (busy, then the host, then the start snapshot), changing nothing', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/order' });
    const BEGIN = `mutation($input: BeginExecutionInput!) { beginExecution(input: $input) {
      ${result('SessionBusyError', 'HostNotFoundError', 'InvalidRequestError')} ... on Execution { id } } }`;
    const attempt = (input: Record<string, unknown>) => ok(g, BEGIN, { input: { sessionID: s.id, hostID: host.hostID, trigger: 'PROMPT', ...input } }, host.token);
    const badSnapshot = { startSnapshot: 'snp_00000000000000000000000000' };
    const unknownHost = { hostID: 'hst_00000000000000000000000000' };
    const before = await snapshotCounts(g);
    expect(await attempt(badSnapshot)).toMatchObject({ __typename: 'InvalidRequestError', field: 'startSnapshot' });
    expect(await attempt({ ...badSnapshot, ...unknownHost })).toMatchObject({ __typename: 'HostNotFoundError' });
    expect(await snapshotCounts(g)).toEqual(before);
    const e = await begin(g, host, s.id);
    expect(await attempt({ ...badSnapshot, ...unknownHost })).toMatchObject({ __typename: 'SessionBusyError', executionID: e.id });
    expect(await attempt(badSnapshot)).toMatchObject({ __typename: 'SessionBusyError', executionID: e.id });
    const [{ n }] = await g.sql`SELECT count(*)::int AS n FROM executions WHERE session_id = ${s.id}`;
    expect(n).toBe(1);
  });

  it('answers typed errors for unknown sessions and hosts', async () => {
    const host = await registerHost(g);
    expect(await begin(g, host, 'ses_00000000000000000000000000')).toMatchObject({ __typename: 'SessionNotFoundError' });
    const s = await createSession(g, { directory: '/work/x' });
    expect(await begin(g, { ...host, hostID: 'hst_00000000000000000000000000' }, s.id)).toMatchObject({ __typename: 'HostNotFoundError' });
    expect(await begin(g, { ...host, hostID: 'job_1' }, s.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'hostID' });
  });
});

describe('messages', () => {
  it('stores text, tool and file parts and reads them back in order', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/msg' });
    const e = await begin(g, host, s.id);
    await appendText(g, host, s.id, 'hello', { executionID: e.id });
    const m2 = await ok(g, `mutation($input: AppendMessageInput!) { appendMessage(input: $input) { __typename ... on Message { id } } }`, {
      input: { sessionID: s.id, executionID: e.id, role: 'ASSISTANT', origin: 'MODEL', parts: [
        { type: 'TEXT', text: 'running it' },
        { type: 'TOOL', tool: 'bash', input: { command: 'ls' }, output: 'a.txt', status: 'completed' },
        { type: 'FILE', path: 'a.txt', mime: 'text/plain' },
      ] },
    }, host.token);
    const read = await ok(g, `query($id: ID!) { session(id: $id) { messages { edges { node { id role origin revision execution { id } parts { __typename id index
      ... on TextPart { text revision } ... on ToolPart { tool input output status } ... on FilePart { path mime } } } } } } }`, { id: s.id });
    const msgs = read.messages.edges.map((x: any) => x.node);
    expect(msgs.map((m: any) => m.origin)).toEqual(['PROMPT', 'MODEL']);
    expect(msgs[1].id).toBe(m2.id);
    expect(msgs[1].execution.id).toBe(e.id);
    expect(msgs[1].parts).toMatchObject([
      { __typename: 'TextPart', index: 0, text: 'running it', revision: 1 },
      { __typename: 'ToolPart', index: 1, tool: 'bash', input: { command: 'ls' }, output: 'a.txt' },
      { __typename: 'FilePart', index: 2, path: 'a.txt', mime: 'text/plain' },
    ]);
    expect(msgs[1].parts.every((p: any) => /^prt_/.test(p.id))).toBe(true);
  });

  it('refuses malformed messages with the offending field, storing nothing', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/msg2' });
    const other = await createSession(g, { directory: '/work/msg3' });
    const e = await begin(g, host, other.id);
    const before = await snapshotCounts(g);
    const send = (input: Record<string, unknown>) => ok(g, `mutation($input: AppendMessageInput!) { appendMessage(input: $input) { ${result('SessionSealedError', 'SessionNotFoundError', 'InvalidRequestError')} } }`,
      { input: { sessionID: s.id, role: 'USER', origin: 'PROMPT', ...input } }, host.token);
    expect(await send({ parts: [] })).toMatchObject({ __typename: 'InvalidRequestError', field: 'parts' });
    expect(await send({ parts: [{ type: 'TEXT' }] })).toMatchObject({ field: 'parts[0].text' });
    expect(await send({ parts: [{ type: 'TEXT', text: 'a', tool: 'x' }] })).toMatchObject({ field: 'parts[0].tool' });
    expect(await send({ parts: [{ type: 'TOOL', text: 'a' }] })).toMatchObject({ field: 'parts[0].text' });
    expect(await send({ parts: [{ type: 'FILE' }] })).toMatchObject({ field: 'parts[0].path' });
    expect(await send({ parts: [{ type: 'TEXT', text: 'x'.repeat(1024 * 1024 + 1) }] })).toMatchObject({ field: 'parts[0].text' });
    expect(await send({ parts: [{ type: 'TEXT', text: 'ok' }], executionID: e.id })).toMatchObject({ field: 'executionID' });
    expect(await send({ parts: [{ type: 'TEXT', text: 'ok' }], role: 'USER', origin: 'MODEL' })).toMatchObject({ field: 'role' });
    expect(await send({ sessionID: 'ses_00000000000000000000000000', parts: [{ type: 'TEXT', text: 'ok' }] })).toMatchObject({ __typename: 'SessionNotFoundError' });
    expect(await snapshotCounts(g)).toEqual(before);
  });
});

describe('jobs', () => {
  it('starts, backgrounds and finishes a job; finishing twice is an error', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/jobs' });
    const e = await begin(g, host, s.id);
    const j = await startJob(g, host, s.id, { executionID: e.id, kind: 'SUBAGENT' });
    expect(j).toMatchObject({ __typename: 'Job', status: 'RUNNING', background: false });
    expect(await ok(g, BACKGROUND, { input: { jobID: j.id } }, host.token)).toMatchObject({ __typename: 'Job', background: true });
    const f = await ok(g, FINISH, { input: { jobID: j.id, status: 'COMPLETED', exitCode: 0 } }, host.token);
    expect(f).toMatchObject({ __typename: 'Job', status: 'COMPLETED', exitCode: 0 });
    const before = await snapshotCounts(g);
    expect(await ok(g, FINISH, { input: { jobID: j.id, status: 'ERROR', exitCode: 1 } }, host.token)).toMatchObject({ __typename: 'InvalidRequestError', field: 'jobID' });
    expect(await ok(g, FINISH, { input: { jobID: j.id, status: 'RUNNING' } }, host.token)).toMatchObject({ __typename: 'InvalidRequestError', field: 'status' });
    expect(await ok(g, FINISH, { input: { jobID: 'job_00000000000000000000000000', status: 'COMPLETED' } }, host.token)).toMatchObject({ __typename: 'JobNotFoundError' });
    expect(await ok(g, BACKGROUND, { input: { jobID: j.id } }, host.token)).toMatchObject({ __typename: 'InvalidRequestError' });
    expect(await snapshotCounts(g)).toEqual(before);
    const read = await ok(g, `query($id: ID!) { execution(id: $id) { jobs { edges { node { id kind status execution { id } session { id } } } } } }`, { id: e.id });
    expect(read.jobs.edges[0].node).toMatchObject({ id: j.id, kind: 'SUBAGENT', status: 'COMPLETED', execution: { id: e.id }, session: { id: s.id } });
  });
});

describe('lease expiry', () => {
  it('marks a lapsed host\'s running executions ABANDONED and jobs LOST, once, and lets it restore jobs', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/lease' });
    const e = await begin(g, host, s.id);
    const j = await startJob(g, host, s.id, { executionID: e.id, background: true });
    await lapseLease(g.sql, host.hostID); // the host stops renewing
    // A second instance sweeps too: the effects must be applied exactly once.
    await g.startInstance();
    await expect.poll(async () => (await ok(g, `query($id: ID!) { execution(id: $id) { status } }`, { id: e.id })).status, { timeout: 5000 }).toBe('ABANDONED');
    const job = await ok(g, `query($id: ID!) { job(id: $id) { status } }`, { id: j.id });
    expect(job.status).toBe('LOST');
    const events = await g.sql`SELECT type FROM journal WHERE session_id = ${s.id} AND type IN ('execution.abandoned', 'job.lost')`;
    expect(events.map((r) => r.type).sort()).toEqual(['execution.abandoned', 'job.lost']);
    const settlements = await g.sql`SELECT status FROM settlements WHERE execution_id = ${e.id}`;
    expect(settlements).toEqual([{ status: 'ABANDONED' }]);
    // The host is back: new work needs a re-registration, and it can take its job back.
    expect(await begin(g, host, s.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'hostID' });
    await registerHost(g, { hostID: host.hostID, token: host.token, leaseMs: 30_000 });
    expect(await ok(g, RESTORE, { input: { jobID: j.id, hostID: host.hostID } }, host.token)).toMatchObject({ __typename: 'Job', status: 'RUNNING', restored: true });
    // The abandoned execution cannot be settled any more.
    expect(await settle(g, host, e.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'executionID' });
    expect(await ok(g, FINISH, { input: { jobID: j.id, status: 'COMPLETED', exitCode: 0 } }, host.token)).toMatchObject({ status: 'COMPLETED' });
  });
});

describe('reads under the session lock', () => {
  // Each write sends its checks' reads along with its lock statement (domain/sessions.ts
  // lockSessionWith): they must still run after the lock is granted, or concurrent writes to one row
  // each see it as it was before the others and all act. Many rounds, so an order that only holds
  // sometimes fails here.
  it('concurrent handoffs, settles, finishes and corrections of one row act exactly once', async () => {
    const host = await registerHostNow(g.sql, SYSTEM, { name: 'lock-reads', leaseMs: 600_000 });
    const outcomes = async (calls: (() => Promise<unknown>)[]) =>
      (await Promise.allSettled(calls.map((c) => c()))).map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as Error).constructor.name));
    for (let round = 0; round < 15; round++) {
      const s = await createSessionNow(g.sql, SYSTEM, { directory: '/work/lock-reads' });
      const e = await beginExecution(g.sql, SYSTEM, { sessionID: s.id, hostID: host.id, trigger: 'PROMPT' });
      const j = await startJobNow(g.sql, SYSTEM, { sessionID: s.id, executionID: e.id, hostID: host.id, kind: 'SHELL', command: 'x' });
      await Promise.all([0, 1, 2].map(() => backgroundJob(g.sql, SYSTEM, { jobID: j.id })));
      const finished = await outcomes([0, 1, 2].map(() => () => finishJob(g.sql, SYSTEM, { jobID: j.id, status: 'COMPLETED', exitCode: 0 })));
      expect(finished.sort()).toEqual(['InvalidRequestError', 'InvalidRequestError', 'ok']);
      const settled = await outcomes([0, 1, 2].map(() => () => settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' })));
      // The same settle three times at once: one settles, the others answer the execution as it settled (a
      // retry's answer); the journal below has one execution.settled and the log one settlement.
      expect(settled.sort()).toEqual(['ok', 'ok', 'ok']);
      const m = await appendMessage(g.sql, SYSTEM, { sessionID: s.id, role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text: 'a' }] });
      const [part] = await g.sql<{ id: string }[]>`SELECT id FROM parts WHERE message_id = ${m.id}`;
      await Promise.all(['b', 'c', 'd'].map((text) => correctMessagePart(g.sql, SYSTEM, { messageID: m.id, partID: part.id, text })));
      const events = await g.sql<{ type: string }[]>`SELECT type FROM journal WHERE session_id = ${s.id} ORDER BY seq`;
      expect(events.map((x) => x.type)).toEqual(['session.created', 'execution.started', 'job.started', 'job.backgrounded', 'job.finished',
        'execution.settled', 'message.appended', 'message.part_corrected', 'message.part_corrected', 'message.part_corrected']);
      // Each correction read the revision the one before it left.
      const [{ revision }] = await g.sql<{ revision: number }[]>`SELECT revision FROM parts WHERE id = ${part.id}`;
      expect(revision).toBe(4);
      const [{ n }] = await g.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM settlements WHERE execution_id = ${e.id}`;
      expect(n).toBe(1);
    }
  });
});
