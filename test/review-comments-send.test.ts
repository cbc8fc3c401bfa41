import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { startTestGateway, type TestGateway } from './harness.js';
import { ReferenceHost, type PromptTurn } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { until } from './support/until.js';

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
  ... on InvalidRequestError { field } ... on CommentNotFoundError { commentID } }`;

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
