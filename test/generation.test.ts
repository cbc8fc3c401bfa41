import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { BIG, CHEAP, requestsKit } from './support/requests-kit.js';
import { fakeAnswer } from './support/fake-llm.js';
import { until } from './support/until.js';
import { GatewayClient, GenerateDocument } from '../client/index.js';
import { pruneHostRequests } from '../domain/host-requests.js';

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

describe('generate', () => {
  it('runs a hidden completion with the override model (not the session\'s) on the session\'s context; nothing is stored', async () => {
    const host = await kit.host();
    const { sessionID, messages } = await kit.session(host, ['write a poem', 'roses are red', 'my password is hunter2', 'noted']);
    await kit.correct(messages[1].id, messages[1].partID, 'violets are blue');
    await kit.retract(messages[2].id);
    // The session's own model is BIG (its compactions use it): a compaction first, so both reach the LLM.
    const context = await kit.context(sessionID);
    const c0 = await kit.counts(sessionID);
    const n0 = kit.llm.requests.length;

    const r = await kit.generate(sessionID, 'classify this session in one word', CHEAP, 10_000);
    const req = kit.llm.requests[n0];
    const expected = fakeAnswer(CHEAP.modelID, req.messages);
    expect(r).toEqual({
      __typename: 'Generation', text: expected, providerID: 'fake', modelID: CHEAP.modelID,
      inputTokens: req.messages.reduce((n, m) => n + m.content.split(/\s+/).filter(Boolean).length, 0),
      outputTokens: expected.split(/\s+/).length,
    });
    expect(kit.llm.requests.length).toBe(n0 + 1);
    expect(req.model).toBe(CHEAP.modelID);
    expect(req.model).not.toBe(BIG.modelID);
    // Session.context as it reads (corrected text, retraction placeholder), then the prompt.
    expect(req.messages).toEqual([
      ...context.map((m) => ({ role: m.role.toLowerCase(), content: m.text })),
      { role: 'user', content: 'classify this session in one word' },
    ]);
    expect(JSON.stringify(req.messages)).toContain('violets are blue');
    expect(JSON.stringify(req.messages)).not.toContain('roses are red');
    expect(JSON.stringify(req.messages)).not.toContain('hunter2');
    // Nothing was added to the transcript or the journal.
    const c1 = await kit.counts(sessionID);
    expect({ ...c1, commands: 0 }).toEqual({ ...c0, commands: 0 });
    expect(c1.commands).toBe(c0.commands + 1);
    expect(await kit.context(sessionID)).toEqual(context);
  });

  it('after a compaction the hidden completion sees the summary, not the compacted messages', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host, ['q1', 'a1']);
    const c = await kit.compact(sessionID, 10_000);
    expect(c.__typename).toBe('SessionCompacted');
    const n0 = kit.llm.requests.length;
    const r = await kit.generate(sessionID, 'title?', CHEAP, 10_000);
    expect(r.__typename).toBe('Generation');
    const req = kit.llm.requests[n0];
    expect(req.messages).toHaveLength(2);
    expect(req.messages[0].content).toMatch(/^SUMMARY<big-model>/);
  });

  it('a model the host does not offer: ModelNotFoundError, never a fall-back; the host is not asked', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host);
    const c0 = await kit.counts(sessionID);
    const n0 = kit.llm.requests.length;
    const r = await kit.generate(sessionID, 'hi', { providerID: 'fake', modelID: 'gpt-unknown' }, 2_000);
    expect(r).toMatchObject({ __typename: 'ModelNotFoundError', code: 404, sessionID, hostID: host.id, providerID: 'fake', modelID: 'gpt-unknown' });
    const other = await kit.generate(sessionID, 'hi', { providerID: 'other', modelID: CHEAP.modelID }, 2_000);
    expect(other).toMatchObject({ __typename: 'ModelNotFoundError', providerID: 'other' });
    expect(kit.llm.requests.length).toBe(n0);
    expect(await kit.counts(sessionID)).toEqual(c0);
    const err = await kit.plugin.call(GenerateDocument, { input: { sessionID, prompt: 'x', model: { providerID: 'fake', modelID: 'nope' } } }).catch((x) => x);
    expect(err.error).toMatchObject({ _tag: 'ModelNotFoundError', modelID: 'nope' });
  });

  it('bad input: empty prompt, oversized prompt, empty model, bad timeout, unknown session', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host);
    const c0 = await kit.counts(sessionID);
    expect(await kit.generate(sessionID, '', CHEAP)).toMatchObject({ __typename: 'InvalidRequestError', code: 400, field: 'prompt' });
    expect(await kit.generate(sessionID, '   ', CHEAP)).toMatchObject({ __typename: 'InvalidRequestError', field: 'prompt' });
    expect(await kit.generate(sessionID, 'x'.repeat(300 * 1024), CHEAP)).toMatchObject({ __typename: 'InvalidRequestError', field: 'prompt' });
    expect(await kit.generate(sessionID, 'hi', { providerID: 'fake', modelID: '' })).toMatchObject({ __typename: 'InvalidRequestError', field: 'model.modelID' });
    expect(await kit.generate(sessionID, 'hi', CHEAP, 0)).toMatchObject({ __typename: 'InvalidRequestError', field: 'timeoutMs' });
    expect(await kit.counts(sessionID)).toEqual(c0);
    const missing = 'ses_0000000000000000000000000y';
    expect(await kit.generate(missing, 'hi', CHEAP)).toMatchObject({ __typename: 'SessionNotFoundError', code: 404, sessionID: missing });
    // Scoped out of the token's directory reads as not found.
    const scoped = new GatewayClient({ url: g.url, token: await g.token('plugin', '/elsewhere') });
    expect((await kit.generate(sessionID, 'hi', CHEAP, 2_000, scoped))).toMatchObject({ __typename: 'SessionNotFoundError' });
    await scoped.close();
    // Roles: a reader may not call it.
    const reader = await g.token('reader');
    const denied = await g.gql(`mutation { generate(input: { sessionID: "${sessionID}", prompt: "x", model: { providerID: "fake", modelID: "cheap-model" } }) { __typename } }`, {}, reader);
    expect(denied.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });

  it('host without the capability: UnsupportedError; no host: HostUnavailableError', async () => {
    const host = await kit.host({ capabilities: { cancel: true, compact: true, generate: false } });
    const { sessionID } = await kit.session(host);
    expect(await kit.generate(sessionID, 'hi', CHEAP, 2_000)).toMatchObject({ __typename: 'UnsupportedError', code: 501, capability: 'GENERATE', hostID: host.id });
    const r = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { ... on Session { id } } }`,
      { input: { directory: '/work/requests' } }, kit.pluginToken);
    expect(await kit.generate(r.data.createSession.id, 'hi', CHEAP, 2_000)).toMatchObject({ __typename: 'HostUnavailableError', reason: 'NO_HOST' });
  });

  it('times out when the host is slow; the late reply is discarded', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host);
    kit.llm.delayMs = 800;
    const r = await kit.generate(sessionID, 'slow', CHEAP, 200);
    expect(r).toMatchObject({ __typename: 'CommandTimeoutError', code: 504, sessionID, timeoutMs: 200 });
    const commandID = (r as any).commandID;
    const reply = await kit.waitFor(() => host.replies.find((x) => x.commandID === commandID));
    expect(reply.result).toBe('CommandTimeoutError');
    const [cmd] = await g.sql`SELECT reply, replied_at, timed_out_at FROM host_commands WHERE id = ${commandID}`;
    expect(cmd).toMatchObject({ reply: null, repliedAt: null });
    expect(cmd.timedOutAt).toBeTruthy();
  });

  it('the provider failing: HostUnavailableError(HOST_FAILED); a generation runs while the session is busy', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host);
    const e: any = await host.beginExecution(sessionID);
    kit.llm.failStatus = 503;
    expect(await kit.generate(sessionID, 'hi', CHEAP, 5_000)).toMatchObject({ __typename: 'HostUnavailableError', code: 503, reason: 'HOST_FAILED' });
    kit.llm.failStatus = null;
    expect((await kit.generate(sessionID, 'hi', CHEAP, 5_000)).__typename).toBe('Generation');
    await host.settleExecution(e.id, 'SUCCEEDED');
  });

  it('a host that answers with another model than the one asked is a failure, not a fall-back; a second reply is refused', async () => {
    // A hand-driven host: registered and replying through the raw API.
    const token = kit.hostToken;
    const reg = await g.gql(`mutation($input: RegisterHostInput!) { registerHost(input: $input) { ... on Host { id } } }`, {
      input: { name: 'manual', leaseMs: 30_000, capabilities: { cancel: false, generate: true }, models: [BIG, CHEAP] },
    }, token);
    const hostID = reg.data.registerHost.id;
    const s = await g.gql(`mutation($input: CreateSessionInput!) { createSession(input: $input) { ... on Session { id } } }`,
      { input: { directory: '/work/requests' } }, kit.pluginToken);
    const sessionID = s.data.createSession.id;
    const b = await g.gql(`mutation($input: BeginExecutionInput!) { beginExecution(input: $input) { ... on Execution { id } } }`,
      { input: { sessionID, hostID, trigger: 'PROMPT' } }, token);
    await g.gql(`mutation($input: SettleExecutionInput!) { settleExecution(input: $input) { __typename } }`,
      { input: { executionID: b.data.beginExecution.id, status: 'SUCCEEDED' } }, token);
    const reply = (input: Record<string, unknown>) => g.gql(
      `mutation($input: ReplyHostCommandInput!) { replyHostCommand(input: $input) { __typename ... on HostCommand { id repliedAt } ... on InvalidRequestError { field } } }`,
      { input }, token);
    const nextCommand = () => until('the next open host command', async () => {
      const [c] = await g.sql`SELECT id FROM host_commands WHERE session_id = ${sessionID} AND replied_at IS NULL AND timed_out_at IS NULL`;
      return c ? (c.id as string) : null;
    });

    const p1 = kit.generate(sessionID, 'hi', CHEAP, 5_000);
    const id1 = await nextCommand();
    // The payload the host reads: the prompt, the exact model, the context.
    const seen = await g.gql(`query($id: ID!) { hostCommand(id: $id) { kind reason payload expiresAt } }`, { id: id1 }, token);
    expect(seen.data.hostCommand).toMatchObject({ kind: 'GENERATE', reason: 'PLUGIN', payload: { prompt: 'hi', model: CHEAP, context: [] } });
    expect((await g.gql(`query($id: ID!) { hostCommand(id: $id) { id } }`, { id: id1 }, await g.token('host'))).data.hostCommand).toBeNull();
    expect((await reply({ commandID: id1, result: { text: 'from the big one', ...BIG, inputTokens: 1, outputTokens: 1 } })).data.replyHostCommand.__typename).toBe('HostCommand');
    const r1 = await p1;
    expect(r1).toMatchObject({ __typename: 'HostUnavailableError', reason: 'HOST_FAILED', hostID });
    expect((r1 as any).message).toContain('big-model');
    // Answered already: a second reply is refused.
    expect((await reply({ commandID: id1, result: { text: 'again' } })).data.replyHostCommand).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });

    // A well-formed reply for the asked model is the answer.
    const p2 = kit.generate(sessionID, 'hi again', CHEAP, 5_000);
    const id2 = await nextCommand();
    expect((await reply({ commandID: id2, result: { bogus: true } })).data.replyHostCommand).toMatchObject({ __typename: 'InvalidRequestError', field: 'result.text' });
    expect((await reply({ commandID: id2 })).data.replyHostCommand).toMatchObject({ __typename: 'InvalidRequestError', field: 'result' });
    expect((await reply({ commandID: id2, result: { text: 'fine', ...CHEAP, inputTokens: 3, outputTokens: 1 } })).data.replyHostCommand.__typename).toBe('HostCommand');
    expect(await p2).toEqual({ __typename: 'Generation', text: 'fine', ...CHEAP, inputTokens: 3, outputTokens: 1 });
  });

  it('retention: a closed request\'s prompt and reply are deleted after the retention period, nothing else', async () => {
    const host = await kit.host();
    const { sessionID } = await kit.session(host, ['hello', 'hi']);
    expect((await kit.generate(sessionID, 'secret prompt', CHEAP, 10_000)).__typename).toBe('Generation');
    expect((await kit.generate(sessionID, 'recent prompt', CHEAP, 10_000)).__typename).toBe('Generation');
    const rows = await g.sql`SELECT id FROM host_commands WHERE session_id = ${sessionID} AND kind = 'GENERATE' ORDER BY id`;
    expect(rows).toHaveLength(2);
    // The first one closed two days ago (time moved back), the second just now.
    const [c] = await g.sql<{ repliedAt: Date; expiresAt: Date }[]>`SELECT replied_at, expires_at FROM host_commands WHERE id = ${rows[0].id}`;
    const back = (t: Date) => new Date(t.getTime() - 2 * 86_400_000);
    await g.sql`UPDATE host_commands SET replied_at = ${back(c.repliedAt)}, expires_at = ${back(c.expiresAt)} WHERE id = ${rows[0].id}`;
    const before = await g.sql`SELECT count(*)::int AS n FROM host_commands WHERE kind NOT IN ('GENERATE', 'COMPACT_SESSION')`;
    expect(await pruneHostRequests(g.sql)).toBeGreaterThanOrEqual(1);
    const left = await g.sql`SELECT id, payload::text AS payload FROM host_commands WHERE session_id = ${sessionID} AND kind = 'GENERATE'`;
    expect(left.map((r) => r.id)).toEqual([rows[1].id]);
    expect(left[0].payload).toContain('recent prompt');
    expect(await g.sql`SELECT count(*)::int AS n FROM host_commands WHERE kind NOT IN ('GENERATE', 'COMPACT_SESSION')`).toEqual(before);
    // A second pass finds nothing more to do.
    expect(await pruneHostRequests(g.sql)).toBe(0);
  });
});
