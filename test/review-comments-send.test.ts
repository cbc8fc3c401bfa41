import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startTestGateway, type TestGateway } from './harness.js';
import { ReferenceHost, type PromptTurn } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { until } from './support/until.js';
import fc from 'fast-check';

/**
 * Sending review comments to the agent (issue 50): sendReviewComments issues a PROMPT host command; the
 * reference host carries it out as a turn of its agent, beginning the execution with the command's ID, which
 * answers the send and the comments. Real gateway, real reference host, real worktree captured at the boundaries.
 */
let g: TestGateway;
let plugin: string;
const dirs: string[] = [];
const hosts: ReferenceHost[] = [];

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  plugin = await g.token('plugin');
});
afterAll(async () => {
  for (const h of hosts) await h.stop().catch(() => {});
  await g?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const COMMENT = 'id state body anchor { kind executionID path side line startLine quote } sentAt sentCommandID answeredBy { id sequence }';
const ERRORS = `... on Error { __typename message
  ... on SessionBusyError { executionID } ... on UnsupportedError { capability } ... on HostUnavailableError { reason }
  ... on InvalidRequestError { field } ... on CommentNotFoundError { commentID } ... on CommandTimeoutError { commandID } }`;

function worktree(files: Record<string, string>): string {
  const d = mkdtempSync(path.join(tmpdir(), 'gw-rc-send-'));
  dirs.push(d);
  for (const [p, c] of Object.entries(files)) writeFileSync(path.join(d, p), c);
  return d;
}

async function startHost(opts: Partial<ConstructorParameters<typeof ReferenceHost>[0]> = {}): Promise<ReferenceHost> {
  const h = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 600_000, ...opts });
  hosts.push(h);
  await h.start();
  return h;
}

async function newSession(dir: string): Promise<string> {
  const r = await g.gql(`mutation($d: String!) { createSession(input: { title: "review", directory: $d }) { ... on Session { id } } }`, { d: dir });
  return r.data.createSession.id;
}

/** A first execution by the host that writes `file`, captured at both boundaries: the changeset to review. */
async function agentWrites(host: ReferenceHost, sessionID: string, root: string, file: string, content: string): Promise<string> {
  const cap = new WorktreeCapturer();
  try {
    const start = await cap.snapshot(host.client, sessionID, root, host.id);
    const e: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: start.id });
    writeFileSync(path.join(root, file), content);
    const end = await cap.snapshot(host.client, sessionID, root, host.id);
    await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end.id });
    return e.id;
  } finally {
    await cap.close();
  }
}

async function addComment(sessionID: string, executionID: string, path: string | null, line: number | null, body: string) {
  const r = await g.gql(`mutation($i: AddReviewCommentInput!) { addReviewComment(input: $i) { __typename ... on ReviewComment { ${COMMENT} } ${ERRORS} } }`, {
    i: { sessionID, changeset: { kind: 'EXECUTION', executionID }, path, side: line === null ? null : 'NEW', line, body },
  }, plugin);
  expect(r.errors).toBeUndefined();
  expect(r.data.addReviewComment.__typename).toBe('ReviewComment');
  return r.data.addReviewComment;
}

async function send(sessionID: string, commentIDs: string[], timeoutMs = 20_000) {
  const r = await g.gql(`mutation($i: SendReviewCommentsInput!) { sendReviewComments(input: $i) { __typename
    ... on ReviewCommentsSent { commandID prompt execution { id sequence status trigger } comments { ${COMMENT} } } ${ERRORS} } }`,
  { i: { sessionID, commentIDs, timeoutMs } }, plugin);
  expect(r.errors).toBeUndefined();
  return r.data.sendReviewComments;
}

describe('sendReviewComments on the reference host', () => {
  it('the host runs the prompt as the next execution, which answers the comments; its changeset changes the line', async () => {
    const root = worktree({});
    const turns: PromptTurn[] = [];
    const host = await startHost({
      capabilities: { prompt: true }, worktree: root,
      onPrompt: async (t) => {
        turns.push(t);
        // The agent does what the comment asks: the line it points at changes.
        writeFileSync(path.join(root, 'greeting.ts'), readFileSync(path.join(root, 'greeting.ts'), 'utf8').replace('hello', 'hello, world'));
        return { text: 'Done: the greeting says hello, world.' };
      },
    });
    const sessionID = await newSession(root);
    const first = await agentWrites(host, sessionID, root, 'greeting.ts', 'export const a = 1;\nexport const greeting = "hello";\n');
    const onLine = await addComment(sessionID, first, 'greeting.ts', 2, 'Greet the whole world.');
    expect(onLine.anchor.quote).toBe('export const greeting = "hello";');
    const onAll = await addComment(sessionID, first, null, null, 'Add a test too.');

    const sent = await send(sessionID, [onLine.id, onAll.id]);
    expect(sent.__typename).toBe('ReviewCommentsSent');
    expect(sent.prompt).toBe([
      'Review comments on your changes (2):',
      '',
      '1. greeting.ts, line 2 (new):',
      '   > export const greeting = "hello";',
      '   Greet the whole world.',
      '',
      '2. (whole changeset):',
      '   Add a test too.',
      '',
    ].join('\n'));
    expect(sent.execution).toMatchObject({ sequence: 2, trigger: 'PROMPT' });
    expect(sent.comments.map((c: any) => c.answeredBy?.id)).toEqual([sent.execution.id, sent.execution.id]);
    expect(sent.comments.every((c: any) => c.sentCommandID === sent.commandID && c.sentAt)).toBe(true);
    await until('the agent\'s turn', () => turns.length > 0);
    expect(turns.map((t) => [t.executionID, t.commandID, t.text, t.commentIDs])).toEqual([[sent.execution.id, sent.commandID, sent.prompt, [onLine.id, onAll.id]]]);

    // The execution settles with its changeset: the commented line changed.
    const settled = await until('the prompt\'s execution to settle', async () => {
      const r = await g.gql(`query($id: ID!) { execution(id: $id) { status messages { edges { node { role origin parts { ... on TextPart { text } } } } }
        changeset { files { path patch } } } }`, { id: sent.execution.id });
      return r.data.execution.status === 'SUCCEEDED' && r.data.execution;
    });
    expect(settled.changeset.files.map((f: any) => f.path)).toEqual(['greeting.ts']);
    expect(settled.changeset.files[0].patch).toContain('-export const greeting = "hello";\n+export const greeting = "hello, world";');
    expect(settled.messages.edges.map((e: any) => [e.node.role, e.node.origin, e.node.parts[0].text])).toEqual([
      ['USER', 'PROMPT', sent.prompt], ['ASSISTANT', 'MODEL', 'Done: the greeting says hello, world.'],
    ]);
    // Answered comments are not sent again.
    const again = await send(sessionID, [onLine.id]);
    expect(again).toMatchObject({ __typename: 'InvalidRequestError', field: 'commentIDs' });
  });
});

/** A settled first execution on `host`, so the session is owned by it; a whole-changeset comment on it. */
async function ownedSessionWithComments(hostBegin: (sessionID: string) => Promise<string>, n = 1, dir = '/w/review-send') {
  const sessionID = await newSession(dir);
  const executionID = await hostBegin(sessionID);
  const comments: any[] = [];
  for (let i = 0; i < n; i++) comments.push(await addComment(sessionID, executionID, null, null, `comment ${i + 1}`));
  return { sessionID, executionID, comments };
}
const viaReference = (h: ReferenceHost) => async (sessionID: string) => {
  const e: any = await h.beginExecution(sessionID, 'PROMPT');
  await h.settleExecution(e.id, 'SUCCEEDED');
  return e.id as string;
};
const commentRows = (ids: string[]) => g.sql`SELECT id, state, sent_command_id, answered_by_execution_id FROM review_comments WHERE id = ANY(${ids}) ORDER BY id`;

/** A host driven by hand over GraphQL (no reference host): what it does with a PROMPT is up to the test. */
async function rawHost() {
  const token = await g.token('host');
  const r = await g.gql(`mutation { registerHost(input: { name: "raw", leaseMs: 600000, capabilities: { prompt: true, cancel: true } }) { ... on Host { id capabilities { prompt } } } }`, {}, token);
  expect(r.data.registerHost.capabilities.prompt).toBe(true);
  const hostID = r.data.registerHost.id as string;
  const begin = async (sessionID: string, commandID?: string) => (await g.gql(`mutation($i: BeginExecutionInput!) { beginExecution(input: $i) { __typename
    ... on Execution { id status } ... on Error { message } ... on InvalidRequestError { field } ... on SessionSealedError { sessionID } } }`,
  { i: { sessionID, hostID, trigger: 'PROMPT', commandID } }, token)).data.beginExecution;
  const settle = (executionID: string) => g.gql(`mutation($e: ID!) { settleExecution(input: { executionID: $e, status: SUCCEEDED }) { __typename } }`, { e: executionID }, token);
  const reply = async (commandID: string, input: Record<string, unknown>) => (await g.gql(`mutation($i: ReplyHostCommandInput!) { replyHostCommand(input: $i) { __typename
    ... on HostCommand { id repliedAt } ... on Error { message } ... on InvalidRequestError { field } } }`, { i: { commandID, ...input } }, token)).data.replyHostCommand;
  /** The session's PROMPT command, once the send has issued it. */
  const command = (sessionID: string) => until('the PROMPT command', async () => {
    const [c] = await g.sql`SELECT id, payload FROM host_commands WHERE session_id = ${sessionID} AND kind = 'PROMPT' AND replied_at IS NULL AND timed_out_at IS NULL`;
    return c as { id: string; payload: { text: string; commentIDs: string[] } } | undefined;
  });
  const read = async (commandID: string) => (await g.gql(`query($id: ID!) { hostCommand(id: $id) { kind payload expiresAt repliedAt } }`, { id: commandID }, token)).data.hostCommand;
  return {
    hostID, token, begin, settle, reply, command, read,
    own: async (sessionID: string) => { const e = await begin(sessionID); await settle(e.id); return e.id as string; },
  };
}

describe('sendReviewComments: what it refuses', () => {
  it('SessionBusyError while a turn runs, for a comment sent meanwhile; the comments of the first send are answered', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const host = await startHost({ capabilities: { prompt: true }, onPrompt: async () => { await held; } });
    const { sessionID, comments } = await ownedSessionWithComments(viaReference(host), 2);
    const first = await send(sessionID, [comments[0].id]);
    expect(first).toMatchObject({ __typename: 'ReviewCommentsSent', execution: { status: 'RUNNING' } });
    const busy = await send(sessionID, [comments[1].id]);
    expect(busy).toMatchObject({ __typename: 'SessionBusyError', executionID: first.execution.id });
    expect((await commentRows([comments[1].id]))[0]).toMatchObject({ state: 'OPEN', sentCommandId: null, answeredByExecutionId: null });
    release();
    await until('the turn to settle', async () => (await g.sql`SELECT status FROM executions WHERE id = ${first.execution.id}`)[0].status === 'SUCCEEDED');
    // Idle again: the second comment goes now.
    expect((await send(sessionID, [comments[1].id])).__typename).toBe('ReviewCommentsSent');
  });

  it('SessionSealedError once the session is sealed; nothing is sent', async () => {
    const host = await startHost({ capabilities: { prompt: true }, onPrompt: async () => {} });
    const { sessionID, comments } = await ownedSessionWithComments(viaReference(host));
    const sealed = await g.gql(`mutation($s: ID!) { sealSession(input: { sessionID: $s, timeoutMs: 10000 }) { __typename } }`, { s: sessionID }, plugin);
    expect(sealed.data.sealSession.__typename).toBe('SessionSealed');
    expect(await send(sessionID, [comments[0].id])).toMatchObject({ __typename: 'SessionSealedError' });
    expect((await commentRows([comments[0].id]))[0]).toMatchObject({ state: 'OPEN', sentCommandId: null, answeredByExecutionId: null });
    expect(await g.sql`SELECT id FROM host_commands WHERE session_id = ${sessionID} AND kind = 'PROMPT'`).toEqual([]);
    expect(host.prompts).toEqual([]);
  });

  it('UnsupportedError(PROMPT) from a host that cannot prompt; HostUnavailableError(LEASE_EXPIRED) from a host whose lease lapsed', async () => {
    const host = await startHost({ capabilities: { prompt: false } });
    const { sessionID, comments } = await ownedSessionWithComments(viaReference(host));
    expect(await send(sessionID, [comments[0].id])).toMatchObject({ __typename: 'UnsupportedError', capability: 'PROMPT' });
    expect(await g.sql`SELECT id FROM host_commands WHERE session_id = ${sessionID} AND kind = 'PROMPT'`).toEqual([]);
    const raw = await rawHost();
    const lapsed = await ownedSessionWithComments(raw.own);
    await g.sql`UPDATE hosts SET lease_expires_at = now() - interval '1 second' WHERE id = ${raw.hostID}`;
    expect(await send(lapsed.sessionID, [lapsed.comments[0].id])).toMatchObject({ __typename: 'HostUnavailableError', reason: 'LEASE_EXPIRED' });
    expect(await g.sql`SELECT id FROM host_commands WHERE session_id = ${lapsed.sessionID} AND kind = 'PROMPT'`).toEqual([]);
    expect((await commentRows([lapsed.comments[0].id]))[0]).toMatchObject({ sentCommandId: null });
  });

  it('bad lists: empty, twice the same, unknown, resolved, of another session', async () => {
    const host = await startHost({ capabilities: { prompt: true }, onPrompt: async () => {} });
    const a = await ownedSessionWithComments(viaReference(host), 2);
    const b = await ownedSessionWithComments(viaReference(host), 1);
    const resolved = await g.gql(`mutation($id: ID!) { resolveReviewComment(input: { id: $id }) { __typename } }`, { id: a.comments[1].id }, plugin);
    expect(resolved.data.resolveReviewComment.__typename).toBe('ReviewComment');
    const cases: [string[], Record<string, unknown>][] = [
      [[], { __typename: 'InvalidRequestError', field: 'commentIDs' }],
      [[a.comments[0].id, a.comments[0].id], { __typename: 'InvalidRequestError', field: 'commentIDs' }],
      [['cmt_0000000000000missing0000'], { __typename: 'CommentNotFoundError', commentID: 'cmt_0000000000000missing0000' }],
      [['exe_notacomment'], { __typename: 'InvalidRequestError', field: 'commentIDs[0]' }],
      [[a.comments[0].id, a.comments[1].id], { __typename: 'InvalidRequestError', field: 'commentIDs' }],
      [[a.comments[0].id, b.comments[0].id], { __typename: 'InvalidRequestError', field: 'commentIDs' }],
    ];
    for (const [ids, expected] of cases) expect(await send(a.sessionID, ids), JSON.stringify(ids)).toMatchObject(expected);
    expect(await g.sql`SELECT id FROM host_commands WHERE session_id = ${a.sessionID} AND kind = 'PROMPT'`).toEqual([]);
    expect((await commentRows([a.comments[0].id]))[0]).toMatchObject({ sentCommandId: null });
  });
});

describe('the PROMPT command on the host\'s side', () => {
  it('a host\'s error reply is HostUnavailableError(HOST_FAILED); the comments stay open and go again, answered by beginExecution(commandID)', async () => {
    const raw = await rawHost();
    const { sessionID, comments } = await ownedSessionWithComments(raw.own, 2);
    const ids = comments.map((c) => c.id);
    const failing = send(sessionID, ids);
    const cmd = await raw.command(sessionID);
    const seen = await raw.read(cmd.id);
    expect(seen).toMatchObject({ kind: 'PROMPT', repliedAt: null, payload: { commentIDs: ids } });
    expect(seen.payload.text).toContain('Review comments on your changes (2):');
    // A result is not how a PROMPT is answered.
    expect(await raw.reply(cmd.id, { result: { executionID: 'x' } })).toMatchObject({ __typename: 'InvalidRequestError', field: 'result' });
    expect(await raw.reply(cmd.id, { error: 'the agent crashed' })).toMatchObject({ __typename: 'HostCommand' });
    expect(await failing).toMatchObject({ __typename: 'HostUnavailableError', reason: 'HOST_FAILED' });
    expect((await failing).message).toContain('the agent crashed');
    expect((await commentRows(ids)).map((c) => [c.state, c.sentCommandId, c.answeredByExecutionId])).toEqual([['OPEN', cmd.id, null], ['OPEN', cmd.id, null]]);
    // A begin with the answered command is refused: nothing starts.
    expect(await raw.begin(sessionID, cmd.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
    expect(await g.sql`SELECT id FROM executions WHERE session_id = ${sessionID} AND status = 'RUNNING'`).toEqual([]);

    const again = send(sessionID, ids);
    const cmd2 = await raw.command(sessionID);
    expect(cmd2.id).not.toBe(cmd.id);
    const e = await raw.begin(sessionID, cmd2.id);
    expect(e).toMatchObject({ __typename: 'Execution', status: 'RUNNING' });
    const sent = await again;
    expect(sent).toMatchObject({ __typename: 'ReviewCommentsSent', commandID: cmd2.id, execution: { id: e.id } });
    expect((await commentRows(ids)).map((c) => [c.sentCommandId, c.answeredByExecutionId])).toEqual([[cmd2.id, e.id], [cmd2.id, e.id]]);
    // The command is answered: not delivered again, and a second begin with it is refused.
    expect((await raw.read(cmd2.id)).repliedAt).not.toBeNull();
    await raw.settle(e.id);
    expect(await raw.begin(sessionID, cmd2.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
  });

  it('a send the host does not start in time is CommandTimeoutError; the host\'s late begin with it is refused', async () => {
    const raw = await rawHost();
    const { sessionID, comments } = await ownedSessionWithComments(raw.own);
    const late = send(sessionID, [comments[0].id], 300);
    const cmd = await raw.command(sessionID);
    expect(await late).toMatchObject({ __typename: 'CommandTimeoutError' });
    expect(await raw.begin(sessionID, cmd.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
    expect((await commentRows([comments[0].id]))[0]).toMatchObject({ state: 'OPEN', answeredByExecutionId: null });
  });

  it('a send whose turn has not begun when the seal comes is SessionSealedError at once, whatever the host does; its command is closed', async () => {
    const raw = await rawHost();
    const { sessionID, comments } = await ownedSessionWithComments(raw.own);
    // The host takes the command and never answers it (as a host does whose agent lost the prompt to the seal's
    // interrupt): the send must not wait for its two minutes.
    const pending = send(sessionID, [comments[0].id], 120_000);
    const cmd = await raw.command(sessionID);
    const sealed = await g.gql(`mutation($s: ID!) { sealSession(input: { sessionID: $s, timeoutMs: 20000 }) { __typename } }`, { s: sessionID }, plugin);
    expect(sealed.data.sealSession.__typename).toBe('SessionSealed');
    expect(await pending).toMatchObject({ __typename: 'SessionSealedError' });
    // The command is closed (not delivered again); the host's begin with it is refused by the seal.
    expect((await raw.read(cmd.id)).repliedAt).not.toBeNull();
    expect(await raw.begin(sessionID, cmd.id)).toMatchObject({ __typename: 'SessionSealedError' });
    expect((await commentRows([comments[0].id]))[0]).toMatchObject({ state: 'OPEN', answeredByExecutionId: null });
  });

  it('beginExecution refuses a command that is not an open PROMPT of this session for this host', async () => {
    const raw = await rawHost();
    const other = await rawHost();
    const { sessionID, comments } = await ownedSessionWithComments(raw.own);
    const second = await newSession('/w/review-send');
    await raw.own(second);
    const pending = send(sessionID, [comments[0].id], 20_000);
    const cmd = await raw.command(sessionID);
    // Another session's begin, another host's begin: refused, the command stays open.
    expect(await raw.begin(second, cmd.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
    expect(await other.begin(sessionID, cmd.id)).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
    expect(await raw.begin(sessionID, 'cmd_0000000000000missing0000')).toMatchObject({ __typename: 'InvalidRequestError', field: 'commandID' });
    expect(await g.sql`SELECT id FROM executions WHERE session_id = ANY(${[sessionID, second]}) AND status = 'RUNNING'`).toEqual([]);
    const e = await raw.begin(sessionID, cmd.id);
    expect((await pending).execution.id).toBe(e.id);
    await raw.settle(e.id);
  });
});

describe('a send racing a seal', () => {
  it('is never admitted after the seal committed: no execution of a PROMPT starts after it, and every send answers sent, sealed or busy', async () => {
    const host = await startHost({
      capabilities: { prompt: true, cancel: true },
      // A turn of a few milliseconds, or until the seal interrupts it.
      onPrompt: (t) => new Promise<void>((resolve) => { t.signal.addEventListener('abort', () => resolve()); setTimeout(resolve, 1 + (t.text.length % 7)); }),
    });
    const answers = new Map<string, number>();
    let rounds = 0;
    // When the seal goes: before the send, right after it, once the PROMPT command is issued (racing the host's
    // begin), or once the host has begun the turn; each after a few more turns of the event loop.
    const when = fc.constantFrom('sealFirst', 'sendFirst', 'onCommand', 'onTurn');
    await fc.assert(fc.asyncProperty(when, fc.nat({ max: 6 }), fc.integer({ min: 1, max: 3 }), async (moment, delay, n) => {
      rounds++;
      const { sessionID, comments } = await ownedSessionWithComments(viaReference(host), n, '/w/race');
      const ids = comments.map((c) => c.id);
      const wait = () => new Promise<void>((r) => { let k = delay; const step = () => (k-- <= 0 ? r() : setImmediate(step)); step(); });
      const doSend = async () => { if (moment === 'sealFirst') await wait(); return send(sessionID, ids, 20_000); };
      const doSeal = async () => {
        if (moment === 'sendFirst') await wait();
        if (moment === 'onCommand') {
          await until('the PROMPT command (or the send\'s end)', async () =>
            (await g.sql`SELECT 1 FROM host_commands WHERE session_id = ${sessionID} AND kind = 'PROMPT'`).length > 0 || settledSend);
          await wait();
        }
        if (moment === 'onTurn') {
          await until('the host to take the prompt (or the send\'s end)', () => host.prompts.some((p) => p.sessionID === sessionID) || settledSend);
          await wait();
        }
        return (await g.gql(`mutation($s: ID!) { sealSession(input: { sessionID: $s, timeoutMs: 20000 }) { __typename } }`, { s: sessionID }, plugin)).data.sealSession;
      };
      let settledSend = false;
      const sending = doSend().finally(() => { settledSend = true; });
      const [sent, sealed] = await Promise.all([sending, doSeal()]);
      expect(sealed.__typename).toBe('SessionSealed');
      expect(['ReviewCommentsSent', 'SessionSealedError', 'SessionBusyError']).toContain(sent.__typename);
      answers.set(sent.__typename, (answers.get(sent.__typename) ?? 0) + 1);
      // In the journal (commit order under the session lock): every PROMPT's execution started before the seal was requested.
      const journal = await g.sql<{ seq: string; type: string; payload: any }[]>`SELECT seq, type, payload FROM journal WHERE session_id = ${sessionID} ORDER BY seq`;
      const sealing = journal.find((e) => e.type === 'session.sealing')!;
      expect(sealing).toBeDefined();
      const answered = journal.filter((e) => e.type === 'review_comments.answered');
      for (const a of answered) {
        expect(Number(a.seq)).toBeLessThan(Number(sealing.seq));
        const started = journal.find((e) => e.type === 'execution.started' && e.payload.executionID === a.payload.executionID)!;
        expect(Number(started.seq)).toBeLessThan(Number(sealing.seq));
      }
      // No execution of the session started after the seal at all.
      const startedAfter = journal.filter((e) => e.type === 'execution.started' && Number(e.seq) > Number(sealing.seq));
      expect(startedAfter).toEqual([]);
      const rows = await commentRows(ids);
      if (sent.__typename === 'ReviewCommentsSent') {
        expect(answered.map((a) => a.payload.executionID)).toEqual([sent.execution.id]);
        expect(rows.every((c) => c.answeredByExecutionId === sent.execution.id)).toBe(true);
      } else {
        expect(answered).toEqual([]);
        expect(rows.every((c) => c.state === 'OPEN' && c.answeredByExecutionId === null)).toBe(true);
      }
      // Nothing runs in the sealed session.
      expect(await g.sql`SELECT id FROM executions WHERE session_id = ${sessionID} AND status = 'RUNNING'`).toEqual([]);
    }), { numRuns: 40 });
    expect(rounds).toBe(40);
    // Both outcomes happened: the race was real.
    expect(answers.get('ReviewCommentsSent') ?? 0).toBeGreaterThan(0);
    expect((answers.get('SessionSealedError') ?? 0) + (answers.get('SessionBusyError') ?? 0)).toBeGreaterThan(0);
  }, 240_000);
});
