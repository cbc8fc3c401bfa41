import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { lapseLease } from './fixtures.js';
import { BIG, requestsKit } from './support/requests-kit.js';
import { GatewayClient, ReplyHostCommandDocument, SealSessionDocument } from '../client/index.js';
import { fakeAnswer } from './support/fake-llm.js';

let g: TestGateway;
let kit: Awaited<ReturnType<typeof requestsKit>>;
beforeAll(async () => {
  g = await startTestGateway();
  kit = await requestsKit(g);
});
afterAll(async () => {
  await kit?.dispose();
  await g?.stop();
});
beforeEach(() => {
  kit.llm.delayMs = 0;
  kit.llm.failStatus = null;
});

describe('compactSession', () => {
  it('the session\'s host summarizes Session.context (corrections and retractions as context says); context then starts from the summary', async () => {
    const host = await kit.host();
    const { sessionID, messages } = await kit.session(host, ['please fix bug A', 'I changed a.txt', 'secret token 1234', 'ok']);
    await kit.correct(messages[1].id, messages[1].partID, 'I changed b.txt');
    await kit.retract(messages[2].id);
    const before = await kit.context(sessionID);
    const n0 = kit.llm.requests.length;

    const r = await kit.compact(sessionID, 10_000);
    expect(r.__typename).toBe('SessionCompacted');
    if (r.__typename !== 'SessionCompacted') return;
    expect(r.compactedMessages).toBe(4);

    // What reached the model: exactly Session.context before, then the instruction, with the session's model.
    const req = kit.llm.requests[n0];
    expect(kit.llm.requests.length).toBe(n0 + 1);
    expect(req.model).toBe(BIG.modelID);
    expect(req.messages.slice(0, -1)).toEqual(before.map((m) => ({ role: m.role.toLowerCase(), content: m.text })));
    expect(JSON.stringify(req.messages)).toContain('I changed b.txt');
    expect(JSON.stringify(req.messages)).not.toContain('a.txt');
    expect(JSON.stringify(req.messages)).not.toContain('secret token');
    const summaryText = fakeAnswer(BIG.modelID, req.messages);
    expect(r.summary).toMatchObject({ role: 'ASSISTANT', origin: 'HOST', parts: [{ __typename: 'TextPart', text: summaryText }] });

    // Session.context now starts from the summary; the transcript keeps every message.
    expect(r.session.context).toEqual([{ messageID: r.summary.id, role: 'ASSISTANT', text: summaryText }]);
    expect(await kit.context(sessionID)).toEqual(r.session.context);
    const journal = await kit.journal(sessionID);
    const ev = journal.find((e) => e.type === 'session.compacted')!;
    expect(ev.payload).toMatchObject({ summaryMessageID: r.summary.id, compactedMessages: 4, compactedMessageIDs: messages.map((m) => m.id) });
    expect(journal.find((e) => e.type === 'message.appended' && e.payload.messageID === r.summary.id)).toBeTruthy();
    const cmd = await g.sql`SELECT kind, reason, replied_at, acknowledged_at FROM host_commands WHERE session_id = ${sessionID}`;
    expect(cmd).toMatchObject([{ kind: 'COMPACT_SESSION', reason: 'PLUGIN' }]);
    expect(cmd[0].repliedAt).toBeTruthy();

    // Later messages follow the summary.
    const later: any = await kit.appendPrompt(host, sessionID, 'next question');
    expect((await kit.context(sessionID)).map((m) => m.messageID)).toEqual([r.summary.id, later.id]);
  });

  it('refuses a busy session, a sealed one and an unknown one, committing nothing', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host);
    const e: any = await host.beginExecution(sessionID);
    const c0 = await kit.counts(sessionID);
    const busy = await kit.compact(sessionID, 2_000);
    expect(busy).toMatchObject({ __typename: 'SessionBusyError', code: 409, sessionID, executionID: e.id });
    expect(await kit.counts(sessionID)).toEqual(c0);
    await host.settleExecution(e.id, 'SUCCEEDED');

    const sealed = await kit.plugin.request(SealSessionDocument, { input: { sessionID, timeoutMs: 2_000 } });
    expect(sealed.sealSession.__typename).toBe('SessionSealed');
    const c1 = await kit.counts(sessionID);
    expect(await kit.compact(sessionID, 2_000)).toMatchObject({ __typename: 'SessionSealedError', code: 409, sessionID });
    expect(await kit.counts(sessionID)).toEqual(c1);

    const missing = 'ses_0000000000000000000000000x';
    expect(await kit.compact(missing, 2_000)).toMatchObject({ __typename: 'SessionNotFoundError', code: 404, sessionID: missing });
    expect(await kit.compact(sessionID.replace('ses_', 'msg_'), 2_000)).toMatchObject({ __typename: 'InvalidRequestError', field: 'sessionID' });
  });

  it('bad timeouts are invalid requests; the typed client tags errors', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host);
    const c0 = await kit.counts(sessionID);
    expect(await kit.compact(sessionID, 0)).toMatchObject({ __typename: 'InvalidRequestError', code: 400, field: 'timeoutMs' });
    expect(await kit.compact(sessionID, -5)).toMatchObject({ __typename: 'InvalidRequestError', field: 'timeoutMs' });
    expect(await kit.counts(sessionID)).toEqual(c0);
    const { CompactSessionDocument } = await import('../client/index.js');
    const err = await kit.plugin.call(CompactSessionDocument, { input: { sessionID, timeoutMs: 0 } }).catch((x) => x);
    expect(err.error).toMatchObject({ _tag: 'InvalidRequestError', field: 'timeoutMs' });
  });

  it('no live host owns the session: HostUnavailableError (NO_HOST, LEASE_EXPIRED); host without the capability: UnsupportedError', async () => {
    const host = await kit.host();
    // Messages but no execution: no host owns the session.
    const r = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { ... on Session { id } } }`,
      { input: { directory: '/work/requests' } }, kit.pluginToken);
    const orphan = r.data.createSession.id;
    await kit.appendPrompt(host, orphan, 'hello');
    expect(await kit.compact(orphan, 2_000)).toMatchObject({ __typename: 'HostUnavailableError', code: 503, reason: 'NO_HOST', hostID: null });

    const plain = await kit.host({ capabilities: { cancel: true, compact: false, generate: false } });
    const { sessionID } = await kit.session(plain);
    const c0 = await kit.counts(sessionID);
    expect(await kit.compact(sessionID, 2_000)).toMatchObject({ __typename: 'UnsupportedError', code: 501, capability: 'COMPACT', hostID: plain.id });
    expect(await kit.counts(sessionID)).toEqual(c0);

    const gone = await kit.host();
    const s2 = await kit.session(gone);
    await gone.stop({ crash: true });
    await lapseLease(g.sql, gone.id!);
    expect(await kit.compact(s2.sessionID, 2_000)).toMatchObject({ __typename: 'HostUnavailableError', reason: 'LEASE_EXPIRED', hostID: gone.id });
  });

  it('times out when the host is slow; the late reply is refused and changes nothing', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host);
    const ctx0 = await kit.context(sessionID);
    kit.llm.delayMs = 3_000;
    const t0 = Date.now();
    const r = await kit.compact(sessionID, 300);
    // Answered by the 300 ms timeout, before the host could have replied (its model takes 3 s).
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(r).toMatchObject({ __typename: 'CommandTimeoutError', code: 504, sessionID, timeoutMs: 300 });
    const commandID = (r as any).commandID as string;
    const c1 = await kit.counts(sessionID);
    // The host finishes later and replies: refused as late.
    const reply = await kit.waitFor(() => host.replies.find((x) => x.commandID === commandID));
    expect(reply.result).toBe('CommandTimeoutError');
    expect(await kit.counts(sessionID)).toEqual(c1);
    expect(await kit.context(sessionID)).toEqual(ctx0);
    const [cmd] = await g.sql`SELECT replied_at, timed_out_at, reply FROM host_commands WHERE id = ${commandID}`;
    expect(cmd.repliedAt).toBeNull();
    expect(cmd.timedOutAt).toBeTruthy();
    expect(cmd.reply).toBeNull();
    // The closed command is no longer pending for the host.
    const again = await g.gql(`mutation($i: ReplyHostCommandInput!) { replyHostCommand(input: $i) { __typename } }`,
      { i: { commandID, result: { summary: 'late' } } }, kit.hostToken);
    expect(again.data.replyHostCommand.__typename).toBe('CommandTimeoutError');
  });

  it('two compactions at once are serialized: the second waits for the first, then compacts its summary', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host, ['q1', 'a1', 'q2']);
    kit.llm.delayMs = 300;
    const n0 = kit.llm.requests.length;
    const [a, b] = await Promise.all([kit.compact(sessionID, 10_000), kit.compact(sessionID, 10_000)]);
    expect(a.__typename).toBe('SessionCompacted');
    expect(b.__typename).toBe('SessionCompacted');
    if (a.__typename !== 'SessionCompacted' || b.__typename !== 'SessionCompacted') return;
    const [first, second] = a.compactedMessages === 3 ? [a, b] : [b, a];
    expect(first.compactedMessages).toBe(3);
    expect(second.compactedMessages).toBe(1);
    expect(kit.llm.requests.length).toBe(n0 + 2);
    // The second request summarized the first summary, and only it.
    const firstText = (first.summary.parts[0] as any).text;
    expect(kit.llm.requests[n0 + 1].messages.slice(0, -1)).toEqual([{ role: 'assistant', content: firstText }]);
    expect(await kit.context(sessionID)).toEqual([{ messageID: second.summary.id, role: 'ASSISTANT', text: (second.summary.parts[0] as any).text }]);
    const journal = await kit.journal(sessionID);
    expect(journal.filter((e) => e.type === 'session.compacted')).toHaveLength(2);
    // The journal stays gap-free.
    expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
  });

  it('messages appended while the host summarizes stay after the summary; the reply wakes a caller on another instance', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host, ['q1', 'a1']);
    const other = await g.startInstance();
    const remote = new GatewayClient({ url: other.url, token: kit.pluginToken });
    kit.llm.delayMs = 400;
    const n0 = kit.llm.requests.length;
    const pending = kit.compact(sessionID, 10_000, remote);
    await kit.llm.waitForRequests(n0 + 1);
    const e: any = await host.beginExecution(sessionID);
    const mid: any = await host.appendText(sessionID, e.id, 'appended meanwhile', 'PROMPT');
    const r = await pending;
    await remote.close();
    expect(r.__typename).toBe('SessionCompacted');
    if (r.__typename !== 'SessionCompacted') return;
    expect(r.compactedMessages).toBe(2);
    expect((await kit.context(sessionID)).map((m) => m.messageID)).toEqual([r.summary.id, mid.id]);
    await host.settleExecution(e.id, 'SUCCEEDED');
  });

  it('a retraction committed while the host summarizes makes the summary stale: the gateway asks again', async () => {
    const host = await kit.host();
    const { sessionID, messages } = await kit.session(host, ['keep this', 'leaked secret', 'fine']);
    kit.llm.delayMs = 400;
    const n0 = kit.llm.requests.length;
    const pending = kit.compact(sessionID, 10_000);
    await kit.llm.waitForRequests(n0 + 1);
    await kit.retract(messages[1].id);
    const r = await pending;
    expect(r.__typename).toBe('SessionCompacted');
    expect(kit.llm.requests.length).toBe(n0 + 2);
    expect(JSON.stringify(kit.llm.requests[n0 + 1].messages)).not.toContain('leaked secret');
    const ctx = await kit.context(sessionID);
    expect(ctx).toHaveLength(1);
    expect(ctx[0].text).not.toContain('leaked secret');
    expect((await kit.journal(sessionID)).filter((e) => e.type === 'session.compacted')).toHaveLength(1);
  });

  it('the host disconnecting mid-command: HostUnavailableError(LEASE_EXPIRED) once its lease lapses, before the timeout', async () => {
    const host = await kit.host({ leaseMs: 1_000 });
    const { sessionID } = await kit.session(host);
    kit.llm.delayMs = 5_000;
    const n0 = kit.llm.requests.length;
    const t0 = Date.now();
    const pending = kit.compact(sessionID, 15_000);
    await kit.llm.waitForRequests(n0 + 1);
    const c1 = await kit.counts(sessionID);
    await host.stop({ crash: true });
    const r = await pending;
    expect(r).toMatchObject({ __typename: 'HostUnavailableError', code: 503, reason: 'LEASE_EXPIRED', hostID: host.id });
    expect(Date.now() - t0).toBeLessThan(15_000); // before the command's own timeout
    expect(await kit.counts(sessionID)).toEqual(c1);
    const [cmd] = await g.sql`SELECT timed_out_at FROM host_commands WHERE session_id = ${sessionID}`;
    expect(cmd.timedOutAt).toBeTruthy();
  });

  it('a host error and a malformed reply: HostUnavailableError(HOST_FAILED); replies are the addressed host\'s only', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host);
    kit.llm.failStatus = 500;
    const c0 = await kit.counts(sessionID);
    const r = await kit.compact(sessionID, 5_000);
    expect(r).toMatchObject({ __typename: 'HostUnavailableError', reason: 'HOST_FAILED', hostID: host.id });
    expect((r as any).message).toContain('500');
    expect((await kit.counts(sessionID)).messages).toBe(c0.messages);

    // Another host's token cannot answer (or even see) this host's command.
    kit.llm.failStatus = null;
    kit.llm.delayMs = 1_000;
    const n0 = kit.llm.requests.length;
    const pending = kit.compact(sessionID, 5_000);
    await kit.llm.waitForRequests(n0 + 1);
    const [cmd] = await g.sql`SELECT id FROM host_commands WHERE session_id = ${sessionID} AND replied_at IS NULL AND timed_out_at IS NULL`;
    const stranger = new GatewayClient({ url: g.url, token: await g.token('host') });
    const bad = await stranger.request(ReplyHostCommandDocument, { input: { commandID: cmd.id, result: { summary: 'forged' } } });
    expect(bad.replyHostCommand).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
    const malformed = await host.client.request(ReplyHostCommandDocument, { input: { commandID: cmd.id, result: { summary: '' } } });
    expect(malformed.replyHostCommand).toMatchObject({ __typename: 'InvalidRequestError', field: 'result.summary' });
    const ok = await pending;
    expect(ok.__typename).toBe('SessionCompacted');
    expect(JSON.stringify(ok)).not.toContain('forged');
    await stranger.close();
  });

  it('a compaction left open by an instance that died blocks the next one only until it expires', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host, ['q1', 'a1']);
    // An open request whose waiter is gone (its instance crashed): nobody will close it.
    // (Addressed to a host with no subscriber, so nobody answers it either.)
    const ghost = await g.gql(`mutation($input: RegisterHostInput!) { registerHost(input: $input) { ... on Host { id } } }`,
      { input: { name: 'ghost', capabilities: { compact: true } } }, kit.hostToken);
    await g.sql`INSERT INTO host_commands (id, host_id, session_id, kind, reason, payload, expires_at)
      VALUES ('cmd_ghost0000000000000000001', ${ghost.data.registerHost.id}, ${sessionID}, 'COMPACT_SESSION', 'PLUGIN', '{}', clock_timestamp() + interval '700 milliseconds')`;
    const t0 = Date.now();
    const r = await kit.compact(sessionID, 10_000);
    expect(r.__typename).toBe('SessionCompacted');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(500);
    expect(Date.now() - t0).toBeLessThan(5_000);
    // And a waiter whose own deadline comes first gives up with CommandTimeoutError, changing nothing.
    await g.sql`INSERT INTO host_commands (id, host_id, session_id, kind, reason, payload, expires_at)
      VALUES ('cmd_ghost0000000000000000002', ${ghost.data.registerHost.id}, ${sessionID}, 'COMPACT_SESSION', 'PLUGIN', '{}', clock_timestamp() + interval '5 seconds')`;
    const c0 = await kit.counts(sessionID);
    expect(await kit.compact(sessionID, 200)).toMatchObject({ __typename: 'CommandTimeoutError', sessionID, commandID: null, timeoutMs: 200 });
    expect(await kit.counts(sessionID)).toEqual(c0);
  });
});
