// On the gateway side, for any host: the optional step facts, reasoning parts, part details and
// host IDs are stored, exposed and rebuilt by replay; bad values are typed errors that change nothing;
// host-owned session metadata survives updateSession; a host's LOST report is not an end; session
// mutations under a session whose host manages sessions go to that host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { rebuildProjections } from '../domain/replay.js';

let g: TestGateway;
let plugin: string;
beforeAll(async () => {
  g = await startTestGateway();
  plugin = await g.token('plugin');
});
afterAll(async () => { await g?.stop(); });

const ERR = `... on Error { __typename message } ... on InvalidRequestError { field }`;

async function host(capabilities: Record<string, boolean> = { cancel: true }, leaseMs = 60_000) {
  const r = await g.gql(`mutation($i: RegisterHostInput!) { registerHost(input: $i) { __typename ... on Host { id } } }`,
    { i: { name: 'fidelity host', capabilities, leaseMs } });
  return r.data.registerHost.id as string;
}
async function session(hostID: string | null, extra: Record<string, unknown> = {}) {
  const r = await g.gql(`mutation($i: CreateSessionInput!) { createSession(input: $i) { __typename ... on Session { id metadata } ${ERR} } }`,
    { i: { directory: '/work/fidelity', title: 's', ...(hostID ? { hostID } : {}), ...extra } });
  return r.data.createSession;
}
async function begin(sessionID: string, hostID: string, extra: Record<string, unknown> = {}) {
  const r = await g.gql(`mutation($i: BeginExecutionInput!) { beginExecution(input: $i) { __typename ... on Execution { id } ${ERR} } }`,
    { i: { sessionID, hostID, trigger: 'PROMPT', ...extra } });
  return r.data.beginExecution;
}
const settle = async (input: Record<string, unknown>) => (await g.gql(
  `mutation($i: SettleExecutionInput!) { settleExecution(input: $i) { __typename ... on Execution { id status } ${ERR} } }`, { i: input })).data.settleExecution;
const append = async (input: Record<string, unknown>) => (await g.gql(
  `mutation($i: AppendMessageInput!) { appendMessage(input: $i) { __typename ... on Message { id } ${ERR} } }`, { i: input })).data.appendMessage;

const EXEC_Q = `query($id: ID!) { execution(id: $id) { status externalID agent mode finishReason errorName error
  model { providerID modelID } usage { inputTokens outputTokens reasoningTokens cacheReadTokens cacheWriteTokens cost } } }`;

describe('step facts (Execution.usage, model, agent, mode, finishReason, errorName, externalID)', () => {
  it('stores what the host sent at begin and settle, and exposes it', async () => {
    const h = await host();
    const s = await session(h);
    const e = await begin(s.id, h, { externalID: 'msg_step1', model: { providerID: 'anthropic', modelID: 'claude-x' }, agent: 'build', mode: 'build' });
    expect(e.__typename).toBe('Execution');
    const before = (await g.gql(EXEC_Q, { id: e.id })).data.execution;
    expect(before).toMatchObject({ status: 'RUNNING', externalID: 'msg_step1', agent: 'build', model: { providerID: 'anthropic', modelID: 'claude-x' }, usage: null });
    expect(await settle({
      executionID: e.id, status: 'FAILED', error: 'the provider said no', errorName: 'APIError', finishReason: 'error',
      usage: { inputTokens: 1234, outputTokens: 56, reasoningTokens: 7, cacheReadTokens: 800, cacheWriteTokens: 0, cost: 0.0123 },
    })).toMatchObject({ __typename: 'Execution', status: 'FAILED' });
    const after = (await g.gql(EXEC_Q, { id: e.id })).data.execution;
    expect(after).toEqual({
      status: 'FAILED', externalID: 'msg_step1', agent: 'build', mode: 'build', finishReason: 'error', errorName: 'APIError',
      error: 'the provider said no', model: { providerID: 'anthropic', modelID: 'claude-x' },
      usage: { inputTokens: 1234, outputTokens: 56, reasoningTokens: 7, cacheReadTokens: 800, cacheWriteTokens: 0, cost: 0.0123 },
    });
  });

  it('refuses bad values with a typed error and settles nothing', async () => {
    const h = await host();
    const s = await session(h);
    expect(await begin(s.id, h, { agent: '' })).toMatchObject({ __typename: 'InvalidRequestError', field: 'agent' });
    expect(await begin(s.id, h, { model: { providerID: '', modelID: 'm' } })).toMatchObject({ __typename: 'InvalidRequestError', field: 'model.providerID' });
    expect(await begin(s.id, h, { externalID: 'x'.repeat(201) })).toMatchObject({ __typename: 'InvalidRequestError', field: 'externalID' });
    const e = await begin(s.id, h);
    const bad: [Record<string, unknown>, string][] = [
      [{ usage: { inputTokens: -1 } }, 'usage.inputTokens'],
      [{ usage: { cost: -0.5 } }, 'usage.cost'],
      [{ finishReason: '' }, 'finishReason'],
      [{ errorName: 'x'.repeat(201) }, 'errorName'],
    ];
    for (const [extra, field] of bad) {
      expect(await settle({ executionID: e.id, status: 'SUCCEEDED', ...extra })).toMatchObject({ __typename: 'InvalidRequestError', field });
    }
    expect((await g.gql(EXEC_Q, { id: e.id })).data.execution).toMatchObject({ status: 'RUNNING', usage: null, finishReason: null });
  });

  it('stores the model calls of an execution (model, usage, finish reason, the agent\'s times or the host\'s), in order; replay rebuilds them', async () => {
    const h = await host();
    const s = await session(h);
    const e = await begin(s.id, h);
    const usage = (o: object) => ({ inputTokens: null, outputTokens: null, reasoningTokens: null, cacheReadTokens: null, cacheWriteTokens: null,
      cacheWrite5mTokens: null, cacheWrite1hTokens: null, cost: null, ...o });
    // Two calls of two models, the first across midnight and 70 s long; the second timed by its host.
    const calls = [
      { externalID: 'msg_a', model: { providerID: 'anthropic', modelID: 'claude-big' }, startedAt: '2026-12-01T23:59:30.000Z', endedAt: '2026-12-02T00:00:40.500Z',
        timesFrom: 'AGENT', finishReason: 'tool_use', usage: { inputTokens: 1000, outputTokens: 50, cacheReadTokens: 600, cacheWriteTokens: 100, cacheWrite5mTokens: 100, cacheWrite1hTokens: 0 } },
      { externalID: null, model: { providerID: 'anthropic', modelID: 'claude-small' }, startedAt: '2026-12-02T00:00:41.000Z', endedAt: '2026-12-02T00:00:42.000Z',
        timesFrom: 'HOST', finishReason: 'end_turn', usage: { inputTokens: 500, outputTokens: 30, cost: 0.01 } },
    ];
    const bad: [Record<string, unknown>, string][] = [
      [{ ...calls[0], endedAt: '2026-12-01T23:00:00Z' }, 'modelCalls[0].endedAt'],
      [{ ...calls[0], usage: { inputTokens: 300, cacheReadTokens: 600 } }, 'modelCalls[0].usage.inputTokens'],
      [{ ...calls[0], model: { providerID: '', modelID: 'x' } }, 'modelCalls[0].model.providerID'],
    ];
    for (const [c, field] of bad) expect(await settle({ executionID: e.id, status: 'SUCCEEDED', modelCalls: [c] })).toMatchObject({ __typename: 'InvalidRequestError', field });
    expect(await settle({ executionID: e.id, status: 'SUCCEEDED', usage: { inputTokens: 1500, outputTokens: 80, cacheReadTokens: 600, cacheWriteTokens: 100 }, modelCalls: calls }))
      .toMatchObject({ status: 'SUCCEEDED' });
    const q = `query($id: ID!) { execution(id: $id) { modelCalls { index externalID model { providerID modelID } startedAt endedAt durationMs timesFrom finishReason
      usage { inputTokens outputTokens reasoningTokens cacheReadTokens cacheWriteTokens cacheWrite5mTokens cacheWrite1hTokens cost } } } }`;
    expect((await g.gql(q, { id: e.id })).data.execution.modelCalls).toEqual([
      { ...calls[0], index: 0, durationMs: 70_500, usage: usage(calls[0].usage) },
      { ...calls[1], index: 1, durationMs: 1_000, usage: usage(calls[1].usage) },
    ]);
    const stats = await rebuildProjections(g.sql);
    expect(stats.changed).toEqual({ deleted: 0, updated: 0, inserted: 0 });
    expect(stats.rows.model_calls).toBeGreaterThanOrEqual(2);
  });

  it('takes the cost an agent reports after the execution settled, once, from its host', async () => {
    const report = async (input: Record<string, unknown>, token?: string) => (await g.gql(
      `mutation($i: ReportExecutionCostInput!) { reportExecutionCost(input: $i) { __typename ... on Execution { id usage { inputTokens cost } } ${ERR} } }`,
      { i: input }, token)).data.reportExecutionCost;
    const h = await host();
    const s = await session(h);
    const e = await begin(s.id, h);
    expect(await report({ executionID: e.id, cost: 0.5 })).toMatchObject({ __typename: 'InvalidRequestError', field: 'executionID' }); // still running
    expect(await settle({ executionID: e.id, status: 'SUCCEEDED', usage: { inputTokens: 100 } })).toMatchObject({ status: 'SUCCEEDED' });
    expect(await report({ executionID: e.id, cost: -1 })).toMatchObject({ __typename: 'InvalidRequestError', field: 'cost' });
    expect(await report({ executionID: e.id, cost: 0.0123 })).toEqual({ __typename: 'Execution', id: e.id, usage: { inputTokens: 100, cost: 0.0123 } });
    expect(await report({ executionID: e.id, cost: 0.0123 })).toMatchObject({ __typename: 'Execution' }); // a retry answers the same
    expect(await report({ executionID: e.id, cost: 0.5 })).toMatchObject({ __typename: 'InvalidRequestError', field: 'cost' });
    const other = await g.token('host');
    expect(await report({ executionID: e.id, cost: 0.0123 }, other)).toMatchObject({ __typename: 'ExecutionNotFoundError' });
    const events = await g.sql`SELECT type, payload FROM journal WHERE session_id = ${s.id} AND type = 'execution.cost_reported'`;
    expect(events).toEqual([{ type: 'execution.cost_reported', payload: { executionID: e.id, hostID: h, cost: 0.0123 } }]);
  });
});

describe('parts: REASONING, externalID, title, metadata, timing', () => {
  const MSG_Q = `query($id: ID!) { message(id: $id) { externalID retraction { reason } parts { __typename externalID startedAt endedAt
    ... on ReasoningPart { text } ... on TextPart { text } ... on ToolPart { tool title metadata } } } }`;

  it('stores and exposes them, keeps them out of Session.context, and replay rebuilds them exactly', async () => {
    const h = await host();
    const s = await session(h);
    const m = await append({
      sessionID: s.id, role: 'ASSISTANT', origin: 'MODEL', externalID: 'msg_oc1', parts: [
        { type: 'REASONING', text: 'I should list the files.', externalID: 'prt_r', startedAt: '2026-12-01T09:00:00.000Z', endedAt: '2026-12-01T09:00:01.500Z' },
        { type: 'TOOL', tool: 'bash', input: { command: 'ls' }, output: 'a.txt', status: 'completed', externalID: 'prt_t',
          title: 'List files', metadata: { exit: 0, truncated: false }, startedAt: '2026-12-01T09:00:02.000Z', endedAt: '2026-12-01T09:00:02.250Z' },
        { type: 'TEXT', text: 'There is a.txt.', externalID: 'prt_x' },
      ],
    });
    expect(m.__typename).toBe('Message');
    const read = (await g.gql(MSG_Q, { id: m.id })).data.message;
    expect(read).toEqual({
      externalID: 'msg_oc1', retraction: null, parts: [
        { __typename: 'ReasoningPart', externalID: 'prt_r', text: 'I should list the files.', startedAt: '2026-12-01T09:00:00.000Z', endedAt: '2026-12-01T09:00:01.500Z' },
        { __typename: 'ToolPart', externalID: 'prt_t', tool: 'bash', title: 'List files', metadata: { exit: 0, truncated: false },
          startedAt: '2026-12-01T09:00:02.000Z', endedAt: '2026-12-01T09:00:02.250Z' },
        { __typename: 'TextPart', externalID: 'prt_x', text: 'There is a.txt.', startedAt: null, endedAt: null },
      ],
    });
    const ctx = (await g.gql(`query($id: ID!) { session(id: $id) { context { text } } }`, { id: s.id })).data.session.context;
    expect(ctx).toEqual([{ text: 'There is a.txt.' }]);
    // A retraction hides the title and metadata too.
    const m2 = await append({ sessionID: s.id, role: 'ASSISTANT', origin: 'MODEL', parts: [
      { type: 'TOOL', tool: 'bash', title: 'cat secrets.txt', metadata: { output: 'hunter2' } }] });
    await g.gql(`mutation($i: RetractMessageInput!) { retractMessage(input: $i) { __typename } }`, { i: { messageID: m2.id, reason: 'leak' } });
    expect(JSON.stringify((await g.gql(MSG_Q, { id: m2.id })).data.message)).not.toMatch(/hunter2|secrets/);
    // The journal rebuilds the same rows (new columns included).
    const stats = await rebuildProjections(g.sql);
    expect(stats.changed).toEqual({ deleted: 0, updated: 0, inserted: 0 });
  });

  it('refuses bad parts with a typed error and stores nothing', async () => {
    const h = await host();
    const s = await session(h);
    const bad: [Record<string, unknown>, string][] = [
      [{ type: 'REASONING' }, 'parts[0].text'],
      [{ type: 'REASONING', text: 'x', tool: 'bash' }, 'parts[0].tool'],
      [{ type: 'TEXT', text: 'x', startedAt: 'yesterday' }, 'parts[0].startedAt'],
      [{ type: 'TEXT', text: 'x', startedAt: '2026-12-01T10:00:00Z', endedAt: '2026-12-01T09:00:00Z' }, 'parts[0].endedAt'],
      [{ type: 'TOOL', tool: 'bash', metadata: [1, 2] }, 'parts[0].metadata'],
      [{ type: 'TEXT', text: 'x', externalID: '' }, 'parts[0].externalID'],
    ];
    for (const [part, field] of bad) {
      const r = await g.gql(`mutation($i: AppendMessageInput!) { appendMessage(input: $i) { __typename ${ERR} } }`,
        { i: { sessionID: s.id, role: 'ASSISTANT', origin: 'MODEL', parts: [part] } });
      // (A DateTime the scalar rejects is a GraphQL error before the resolver: nothing is stored either way.)
      if (r.errors) expect(field).toMatch(/startedAt/);
      else expect(r.data.appendMessage, JSON.stringify(part)).toMatchObject({ __typename: 'InvalidRequestError', field });
    }
    const n = (await g.gql(`query($id: ID!) { session(id: $id) { messages(first: 10) { edges { node { id } } } } }`, { id: s.id })).data.session.messages.edges.length;
    expect(n).toBe(0);
  });
});

describe('host-owned metadata', () => {
  const UPD = `mutation($i: UpdateSessionInput!) { updateSession(input: $i) { __typename ... on Session { metadata } ${ERR} } }`;

  it('is shown in Session.metadata and survives every updateSession; changing it is refused', async () => {
    const h = await host();
    const s = await session(h, { metadata: { plugin: 1 }, hostMetadata: { runtime: { id: 'r1' } } });
    expect(s.metadata).toEqual({ plugin: 1, runtime: { id: 'r1' } });
    expect((await g.gql(UPD, { i: { sessionID: s.id, metadata: { other: 2 } } }, plugin)).data.updateSession.metadata)
      .toEqual({ other: 2, runtime: { id: 'r1' } });
    expect((await g.gql(UPD, { i: { sessionID: s.id, metadata: {} } }, plugin)).data.updateSession.metadata).toEqual({ runtime: { id: 'r1' } });
    expect((await g.gql(UPD, { i: { sessionID: s.id, metadata: { runtime: { id: 'r1' }, x: 1 } } }, plugin)).data.updateSession.metadata)
      .toEqual({ x: 1, runtime: { id: 'r1' } });
    for (const v of [null, { id: 'r2' }, 'r1']) {
      expect((await g.gql(UPD, { i: { sessionID: s.id, metadata: { runtime: v } } }, plugin)).data.updateSession)
        .toMatchObject({ __typename: 'InvalidRequestError', field: 'metadata.runtime' });
    }
    expect((await g.gql(`query($id: ID!) { session(id: $id) { metadata } }`, { id: s.id })).data.session.metadata).toEqual({ x: 1, runtime: { id: 'r1' } });
    expect(await session(null, { hostMetadata: { runtime: 1 } })).toMatchObject({ __typename: 'InvalidRequestError', field: 'hostMetadata' });
  });
});

describe('finishJob(status: LOST)', () => {
  it('is not an end: no completedAt, no exit code, and the real end can still be reported', async () => {
    const h = await host();
    const s = await session(h);
    const e = await begin(s.id, h);
    const j = (await g.gql(`mutation($i: StartJobInput!) { startJob(input: $i) { ... on Job { id } } }`,
      { i: { sessionID: s.id, executionID: e.id, hostID: h, kind: 'SHELL', title: 'sleep', command: 'sleep 9' } })).data.startJob;
    const finish = async (status: string, exitCode?: number) => (await g.gql(
      `mutation($i: FinishJobInput!) { finishJob(input: $i) { __typename ... on Job { status completedAt exitCode } ${ERR} } }`,
      { i: { jobID: j.id, status, ...(exitCode === undefined ? {} : { exitCode }) } })).data.finishJob;
    expect(await finish('LOST', 0)).toMatchObject({ __typename: 'InvalidRequestError', field: 'exitCode' });
    expect(await finish('LOST')).toEqual({ __typename: 'Job', status: 'LOST', completedAt: null, exitCode: null });
    expect(await finish('LOST')).toMatchObject({ status: 'LOST' });
    expect(await finish('COMPLETED', 0)).toMatchObject({ status: 'COMPLETED', exitCode: 0 });
    expect(await finish('LOST')).toMatchObject({ __typename: 'InvalidRequestError', field: 'jobID' });
  });
});

describe('session mutations routed to a host that manages sessions', () => {
  const CREATE = `mutation($i: CreateSessionInput!) { createSession(input: $i) { __typename ... on Session { id parentID title metadata }
    ${ERR} ... on HostUnavailableError { reason } ... on CommandTimeoutError { timeoutMs } } }`;

  it('createSession under its session is created by the host; rename and removal become its commands', async () => {
    const h = await host({ cancel: true, sessions: true });
    const parent = await session(h, { hostMetadata: { runtime: { id: 'p' } } });
    const ws = g.ws();
    const commands = subscribe<{ hostCommands: { id: string; kind: string; sessionID: string; payload: any } }>(ws,
      `subscription($h: ID!) { hostCommands(hostID: $h) { id kind sessionID payload } }`, { h });
    type Cmd = { hostCommands: { id: string; kind: string; sessionID: string; payload: any } };
    const kind = (k: string) => (x: Cmd) => x.hostCommands.kind === k;
    const next = async (pred: (x: Cmd) => boolean) => (await commands.waitFor((evs) => evs.some(pred), 20_000)).find(pred)!;
    // The host's side: on CREATE_SESSION, create the mirror (with hostID) and reply with it.
    const answered = (async () => {
      const c = await next(kind('CREATE_SESSION'));
      const p = c.hostCommands.payload;
      const mirror = await session(h, { parentID: p.parentID, title: `${p.title} (runtime)`, metadata: p.metadata, hostMetadata: { runtime: { id: 'c' } } });
      const r = await g.gql(`mutation($i: ReplyHostCommandInput!) { replyHostCommand(input: $i) { __typename } }`,
        { i: { commandID: c.hostCommands.id, result: { sessionID: mirror.id } } });
      expect(r.data.replyHostCommand.__typename).toBe('HostCommand');
      return mirror.id as string;
    })();
    const created = (await g.gql(CREATE, { i: { parentID: parent.id, title: 'child', metadata: { k: 1 }, timeoutMs: 20_000 } }, plugin)).data.createSession;
    expect(created).toEqual({ __typename: 'Session', id: await answered, parentID: parent.id, title: 'child (runtime)', metadata: { k: 1, runtime: { id: 'c' } } });
    // A directory other than the parent's cannot be honoured by the host's runtime.
    expect((await g.gql(CREATE, { i: { parentID: parent.id, directory: '/elsewhere' } }, plugin)).data.createSession)
      .toMatchObject({ __typename: 'InvalidRequestError', field: 'directory' });
    // Nobody answers: CommandTimeoutError, nothing created.
    const count = async () => (await g.gql(`query($id: ID!) { session(id: $id) { children(first: 50) { edges { node { id } } } } }`, { id: parent.id })).data.session.children.edges.length;
    const n = await count();
    expect((await g.gql(CREATE, { i: { parentID: parent.id, title: 'late', timeoutMs: 300 } }, plugin)).data.createSession)
      .toMatchObject({ __typename: 'CommandTimeoutError' });
    expect(await count()).toBe(n);

    await g.gql(`mutation($i: UpdateSessionInput!) { updateSession(input: $i) { __typename } }`, { i: { sessionID: created.id, title: 'new title' } }, plugin);
    const rename = await next(kind('RENAME_SESSION'));
    expect(rename.hostCommands).toMatchObject({ sessionID: created.id, payload: { title: 'new title' } });
    await g.gql(`mutation($i: RemoveSessionInput!) { removeSession(input: $i) { __typename } }`, { i: { sessionID: parent.id } }, plugin);
    const removals = await commands.waitFor((evs) => evs.filter(kind('REMOVE_SESSION')).length >= 2, 20_000);
    expect(removals.filter(kind('REMOVE_SESSION')).map((r) => r.hostCommands.sessionID).sort()).toEqual([parent.id, created.id].sort());
    await ws.dispose();
  });

  it('answers HostUnavailableError when the host\'s lease lapsed, and does not route a host without the capability', async () => {
    const gone = await host({ cancel: true, sessions: true }, 1_000);
    const p1 = await session(gone);
    await g.sql`UPDATE hosts SET lease_expires_at = now() - interval '1 second' WHERE id = ${gone}`;
    expect((await g.gql(CREATE, { i: { parentID: p1.id } }, plugin)).data.createSession).toMatchObject({ __typename: 'HostUnavailableError', reason: 'LEASE_EXPIRED' });
    const plain = await host({ cancel: true });
    const p2 = await session(plain);
    expect((await g.gql(CREATE, { i: { parentID: p2.id, title: 'local' } }, plugin)).data.createSession).toMatchObject({ __typename: 'Session', parentID: p2.id, title: 'local' });
  });
});
