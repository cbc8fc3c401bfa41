import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { appendText, begin, createSession, ok, registerHost, result, settle, snapshotCounts, startJob } from './fixtures.js';

// Idempotency keys (domain/idempotency.ts): a client that cannot know whether its call landed sends
// it again with the same key and gets the first call's object, never a second one.

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

const SEAL = `mutation($id: ID!) { sealSession(input: { sessionID: $id, timeoutMs: 5000 }) { __typename } }`;
const REMOVE = `mutation($id: ID!) { removeSession(input: { sessionID: $id }) { __typename } }`;

async function events(sessionID: string, type: string): Promise<number> {
  const [r] = await g.sql`SELECT count(*)::int AS n FROM journal WHERE session_id = ${sessionID} AND type = ${type}`;
  return r.n;
}

describe('createSession with an idempotencyKey', () => {
  it('answers the same session to every repeat, including 30 concurrent ones, and records it once', async () => {
    const before = await snapshotCounts(g);
    const input = { directory: '/work/idem', title: 'once', metadata: { b: 1, a: [1, 2] }, idempotencyKey: 'create-1' };
    const all = await Promise.all(Array.from({ length: 30 }, () => createSession(g, input)));
    expect(new Set(all.map((s) => s.__typename))).toEqual(new Set(['Session']));
    expect(new Set(all.map((s) => s.id)).size).toBe(1);
    // Key order of the metadata object does not make it another request.
    const again = await createSession(g, { ...input, metadata: { a: [1, 2], b: 1 } });
    expect(again.id).toBe(all[0].id);
    const after = await snapshotCounts(g);
    expect(after.sessions - before.sessions).toBe(1);
    expect(after.journal - before.journal).toBe(1);
  });

  it('refuses the same key with a different request, writing nothing', async () => {
    const first = await createSession(g, { directory: '/work/idem', title: 'a', idempotencyKey: 'create-2' });
    expect(first.__typename).toBe('Session');
    const before = await snapshotCounts(g);
    for (const change of [{ title: 'b' }, { directory: '/work/other' }, { metadata: { x: 1 } }, { parentID: first.id }]) {
      const r = await createSession(g, { directory: '/work/idem', title: 'a', ...change, idempotencyKey: 'create-2' });
      expect(r, JSON.stringify(change)).toMatchObject({ __typename: 'InvalidRequestError', field: 'idempotencyKey' });
    }
    expect(await snapshotCounts(g)).toEqual(before);
  });

  it('refuses malformed keys with a typed error', async () => {
    const before = await snapshotCounts(g);
    for (const key of ['', '   ', 'x'.repeat(201), 'nul\u0000']) {
      const r = await createSession(g, { directory: '/work/idem', idempotencyKey: key });
      expect(r, JSON.stringify(key)).toMatchObject({ __typename: 'InvalidRequestError', field: 'idempotencyKey' });
    }
    expect(await snapshotCounts(g)).toEqual(before);
  });

  it('does not resurrect a removed session: the retry answers SessionNotFoundError', async () => {
    const s = await createSession(g, { directory: '/work/idem', idempotencyKey: 'create-removed' });
    expect((await ok(g, REMOVE, { id: s.id })).__typename).toBe('SessionRemoved');
    const before = await snapshotCounts(g);
    const r = await createSession(g, { directory: '/work/idem', idempotencyKey: 'create-removed' });
    expect(r).toMatchObject({ __typename: 'SessionNotFoundError', sessionID: s.id });
    expect(await snapshotCounts(g)).toEqual(before);
  });

  it('does not show another directory scope\'s session through a key', async () => {
    const s = await createSession(g, { directory: '/work/scope-a/x', idempotencyKey: 'create-scoped' });
    const scoped = await g.token('plugin', '/work/scope-b');
    const r = await createSession(g, { directory: '/work/scope-a/x', idempotencyKey: 'create-scoped' }, scoped);
    expect(r.__typename).toBe('InvalidRequestError'); // outside its scope either way; never the session
    expect(r.id).toBeUndefined();
    expect(s.__typename).toBe('Session');
  });
});

describe('beginExecution, appendMessage and startJob with an idempotencyKey', () => {
  it('admits one execution for 20 concurrent calls with one key, where keyless calls would be refused as busy', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/idem' });
    const call = (key: string | null, trigger = 'PROMPT') => ok(g, `mutation($input: BeginExecutionInput!) { beginExecution(input: $input) {
      ${result('SessionBusyError', 'SessionSealedError', 'InvalidRequestError')} ... on Execution { id sequence status } } }`,
    { input: { sessionID: s.id, hostID: host.hostID, trigger, idempotencyKey: key } }, host.token);
    const all = await Promise.all(Array.from({ length: 20 }, () => call('step-1')));
    expect(all.map((e) => e.__typename)).toEqual(Array(20).fill('Execution'));
    expect(new Set(all.map((e) => e.id)).size).toBe(1);
    expect(await events(s.id, 'execution.started')).toBe(1);
    // A keyless call (or another key) is a new admission: busy while the first runs.
    expect((await call(null)).__typename).toBe('SessionBusyError');
    expect((await call('step-2')).__typename).toBe('SessionBusyError');
    // The same key with another trigger is another request.
    expect(await call('step-1', 'COMMAND')).toMatchObject({ __typename: 'InvalidRequestError', field: 'idempotencyKey' });
    // After it settled, a late repeat still answers the first execution, as it is now.
    await settle(g, host, all[0].id);
    expect(await call('step-1')).toMatchObject({ id: all[0].id, sequence: 1, status: 'SUCCEEDED' });
    const second = await call('step-2');
    expect(second).toMatchObject({ __typename: 'Execution', sequence: 2 });
    await settle(g, host, second.id);
    // Sealed since: the repeat of an admitted call still answers it; a new key is refused.
    expect((await ok(g, SEAL, { id: s.id })).__typename).toBe('SessionSealed');
    expect(await call('step-2')).toMatchObject({ id: second.id, status: 'SUCCEEDED' });
    expect((await call('step-3')).__typename).toBe('SessionSealedError');
    expect(await events(s.id, 'execution.started')).toBe(2);
  });

  it('stores one message per key and session, whatever the number of retries', async () => {
    const host = await registerHost(g);
    const s1 = await createSession(g, { directory: '/work/idem' });
    const s2 = await createSession(g, { directory: '/work/idem' });
    const all = await Promise.all(Array.from({ length: 20 }, () => appendText(g, host, s1.id, 'hello', { idempotencyKey: 'msg-1' })));
    expect(new Set(all.map((m) => m.id)).size).toBe(1);
    expect(all[0].parts).toHaveLength(1);
    expect(await events(s1.id, 'message.appended')).toBe(1);
    // Keys are per session: the same key elsewhere is another message.
    const other = await appendText(g, host, s2.id, 'hello', { idempotencyKey: 'msg-1' });
    expect(other.__typename).toBe('Message');
    expect(other.id).not.toBe(all[0].id);
    // Other text under the same key: refused, nothing stored.
    const before = await snapshotCounts(g);
    expect(await appendText(g, host, s1.id, 'hello!', { idempotencyKey: 'msg-1' })).toMatchObject({ __typename: 'InvalidRequestError', field: 'idempotencyKey' });
    expect(await snapshotCounts(g)).toEqual(before);
  });

  it('starts one job per key', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/idem' });
    const e = await begin(g, host, s.id);
    const all = await Promise.all(Array.from({ length: 20 }, () => startJob(g, host, s.id, { executionID: e.id, idempotencyKey: 'job-1' })));
    expect(all.map((j) => j.__typename)).toEqual(Array(20).fill('Job'));
    expect(new Set(all.map((j) => j.id)).size).toBe(1);
    expect(await events(s.id, 'job.started')).toBe(1);
    expect(await startJob(g, host, s.id, { executionID: e.id, command: 'sleep 2', idempotencyKey: 'job-1' }))
      .toMatchObject({ __typename: 'InvalidRequestError', field: 'idempotencyKey' });
  });

  it('another host cannot read a host\'s execution or job through its key', async () => {
    const host = await registerHost(g);
    const intruder = await registerHost(g);
    const s = await createSession(g, { directory: '/work/idem' });
    const e = await ok(g, `mutation($input: BeginExecutionInput!) { beginExecution(input: $input) { __typename ... on Execution { id } } }`,
      { input: { sessionID: s.id, hostID: host.hostID, trigger: 'PROMPT', idempotencyKey: 'mine' } }, host.token);
    expect(e.__typename).toBe('Execution');
    // Same key, the victim's hostID, the intruder's token: refused like any call for a host it does not own.
    const r = await ok(g, `mutation($input: BeginExecutionInput!) { beginExecution(input: $input) { ${result('HostNotFoundError', 'InvalidRequestError')} ... on Execution { id } } }`,
      { input: { sessionID: s.id, hostID: host.hostID, trigger: 'PROMPT', idempotencyKey: 'mine' } }, intruder.token);
    expect(r.__typename).toBe('HostNotFoundError');
  });

  it('forgets a session\'s keys with the session', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/idem' });
    await appendText(g, host, s.id, 'x', { idempotencyKey: 'gone-1' });
    const [{ n }] = await g.sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE session_id = ${s.id}`;
    expect(n).toBe(1);
    expect((await ok(g, REMOVE, { id: s.id })).__typename).toBe('SessionRemoved');
    const [{ m }] = await g.sql`SELECT count(*)::int AS m FROM idempotency_keys WHERE scope = ${s.id}`;
    expect(m).toBe(0);
  });

  it('random retry storms create exactly one object per distinct key (property)', async () => {
    const host = await registerHost(g);
    let run = 0;
    await fc.assert(fc.asyncProperty(
      fc.array(fc.record({ key: fc.integer({ min: 0, max: 5 }), copies: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 8 }),
      async (calls) => {
        const s = await createSession(g, { directory: '/work/idem-prop', idempotencyKey: `prop-${run++}` });
        const sent = calls.flatMap((c) => Array.from({ length: c.copies }, () => c.key));
        const answers = await Promise.all(sent.map((k) => appendText(g, host, s.id, `text ${k}`, { idempotencyKey: `k${k}` })));
        const byKey = new Map<number, Set<string>>();
        sent.forEach((k, i) => byKey.set(k, (byKey.get(k) ?? new Set()).add(answers[i].id)));
        for (const ids of byKey.values()) expect(ids.size).toBe(1);
        const [{ n }] = await g.sql`SELECT count(*)::int AS n FROM messages WHERE session_id = ${s.id}`;
        expect(n).toBe(byKey.size);
      }), { numRuns: 15 });
  });
});
