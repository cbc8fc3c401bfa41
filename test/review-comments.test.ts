import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renameSync, rmSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { compareProjections, replayIntoSchema } from '../domain/replay.js';
import { patchLines } from '../domain/review-comments.js';
import { formatReviewPrompt } from '../domain/review-prompt.js';
import { readFileSync } from 'node:fs';

/**
 * Review comments (issue 50) over HTTP and WebSocket: on a line (either side, one or several lines), a file or the
 * whole changeset of an execution, a range of executions and the drift before one, on a real worktree captured by
 * the reference host's capturer. Anchors are checked against the changeset's stored patch (typed errors, nothing
 * written); comments are listed on their changeset and on the session, resolved and reopened, delivered on
 * sessionEvents, and rebuilt by replay. (Scoped tokens: test/scope-matrix.test.ts; sending: review-comments-send.)
 */
let g: TestGateway;
let host: ReferenceHost;
let plugin: string;
let reader: string;
const dirs: string[] = [];
const { worktree, newSession, runExecution } = changesetKit(() => ({ g, host }), dirs);

const lines = (n: number, name: string) => Array.from({ length: n }, (_, i) => `line ${i + 1} of ${name}`).join('\n') + '\n';
const BINARY = Buffer.from([0, 1, 2, 3, 0, 255, 254, 0, 10, 0]);

/** One session's history: exec1 edits a.ts line 15 and adds files; the user adds notes.md; exec2 edits lines 3 and 8 and renames old.txt. */
interface World { sessionID: string; e1: string; e2: string; running: string | null }
let w: World;

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  host = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 600_000 });
  await host.start();
  plugin = await g.token('plugin');
  reader = await g.token('reader');
  const root = worktree({ 'a.ts': lines(20, 'a.ts'), 'old.txt': lines(10, 'old.txt') });
  const cap = new WorktreeCapturer();
  try {
    const sessionID = await newSession();
    const e1 = await runExecution(sessionID, root, cap, () => {
      write(root, 'a.ts', lines(20, 'a.ts').replace('line 15 of a.ts', 'line 15 changed'));
      write(root, 'img.bin', BINARY);
      write(root, 'new-file.md', '# New\n\nhello\n');
    });
    write(root, 'notes.md', 'user note\n'); // between executions: the drift before exec2
    const e2 = await runExecution(sessionID, root, cap, () => {
      write(root, 'a.ts', lines(20, 'a.ts').replace('line 15 of a.ts', 'line 15 changed').replace('line 3 of a.ts', 'line 3 changed')
        .replace('line 8 of a.ts\n', ''));
      renameSync(path.join(root, 'old.txt'), path.join(root, 'moved.txt'));
      write(root, 'moved.txt', lines(10, 'old.txt').replace('line 2 of old.txt', 'line 2 moved'));
      unlinkSync(path.join(root, 'new-file.md'));
    });
    w = { sessionID, e1: e1.id, e2: e2.id, running: null };
  } finally {
    await cap.close();
  }
});
afterAll(async () => {
  await host?.stop();
  await g?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const COMMENT = `id state body author { tokenID role } anchor { kind executionID fromExecutionID path side line startLine quote }
  createdAt updatedAt resolvedAt sentAt sentCommandID answeredBy { id } session { id }`;
const ERRORS = `... on Error { __typename message code ... on InvalidRequestError { field } ... on CommentAnchorError { anchorReason path line }
  ... on CommentNotFoundError { commentID } ... on ExecutionNotFoundError { executionID } ... on SessionNotFoundError { sessionID } }`;

type Changeset = { kind: 'EXECUTION' | 'RANGE' | 'DRIFT'; executionID: string; fromExecutionID?: string | null };
interface Anchor { path?: string | null; side?: 'OLD' | 'NEW' | null; line?: number | null; startLine?: number | null }

async function add(changeset: Changeset, anchor: Anchor, body: string, opts: { sessionID?: string; idempotencyKey?: string; token?: string } = {}) {
  const r = await g.gql(`mutation($i: AddReviewCommentInput!) { addReviewComment(input: $i) { __typename ... on ReviewComment { ${COMMENT} } ${ERRORS} } }`, {
    i: { sessionID: opts.sessionID ?? w.sessionID, changeset, ...anchor, body, idempotencyKey: opts.idempotencyKey },
  }, opts.token ?? plugin);
  expect(r.errors).toBeUndefined();
  return r.data.addReviewComment;
}
async function added(changeset: Changeset, anchor: Anchor, body: string, opts: { sessionID?: string; idempotencyKey?: string } = {}) {
  const { __typename, ...c } = await add(changeset, anchor, body, opts);
  expect(__typename, JSON.stringify(c)).toBe('ReviewComment');
  return c;
}
const exec = (executionID: string): Changeset => ({ kind: 'EXECUTION', executionID });

async function setState(mutation: 'resolveReviewComment' | 'reopenReviewComment', id: string) {
  const r = await g.gql(`mutation($id: ID!) { ${mutation}(input: { id: $id }) { __typename ... on ReviewComment { ${COMMENT} } ${ERRORS} } }`, { id }, plugin);
  expect(r.errors).toBeUndefined();
  return r.data[mutation];
}

async function read(query: string, variables: Record<string, unknown> = {}, token = reader) {
  const r = await g.gql(query, variables, token);
  expect(r.errors).toBeUndefined();
  return r.data;
}
const executionComments = async (id: string, state?: string) => (await read(`query($id: ID!, $s: ReviewCommentState) {
  execution(id: $id) { changeset { comments(state: $s) { ${COMMENT} } } } }`, { id, s: state ?? null })).execution.changeset.comments;

const journalHead = async (sessionID: string) => Number((await g.sql`SELECT last_seq FROM sessions WHERE id = ${sessionID}`)[0].lastSeq);
const commentCount = async () => Number((await g.sql`SELECT count(*) AS n FROM review_comments`)[0].n);

describe('comments on an execution\'s changeset', () => {
  it('a line (either side, one or several lines), a file and the whole changeset: added with their quotes, listed on the changeset by path and line', async () => {
    const newLine = await added(exec(w.e1), { path: 'a.ts', side: 'NEW', line: 15 }, 'Why this change?');
    expect(newLine).toMatchObject({
      state: 'OPEN', body: 'Why this change?', author: { role: 'plugin' }, resolvedAt: null, sentAt: null, answeredBy: null, session: { id: w.sessionID },
      anchor: { kind: 'EXECUTION', executionID: w.e1, fromExecutionID: null, path: 'a.ts', side: 'NEW', line: 15, startLine: null, quote: 'line 15 changed' },
    });
    expect(newLine.author.tokenID).toMatch(/^tok_/);
    const oldLine = await added(exec(w.e1), { path: 'a.ts', side: 'OLD', line: 15 }, 'The old line was fine.');
    expect(oldLine.anchor.quote).toBe('line 15 of a.ts');
    // Lines 13 to 15 on the new side: two context lines and the added one.
    const several = await added(exec(w.e1), { path: 'a.ts', side: 'NEW', line: 15, startLine: 13 }, 'This block.');
    expect(several.anchor).toMatchObject({ line: 15, startLine: 13, quote: 'line 13 of a.ts\nline 14 of a.ts\nline 15 changed' });
    const file = await added(exec(w.e1), { path: 'new-file.md' }, 'Is this file needed?');
    expect(file.anchor).toMatchObject({ path: 'new-file.md', side: null, line: null, quote: null });
    const whole = await added(exec(w.e1), {}, 'Looks good overall.');
    expect(whole.anchor).toMatchObject({ path: null, side: null, line: null, quote: null });
    // A binary file takes a comment on the whole file.
    const binary = await added(exec(w.e1), { path: 'img.bin' }, 'What is this blob?');

    const listed = await executionComments(w.e1);
    expect(listed.map((c: any) => c.id)).toEqual([whole.id, newLine.id, oldLine.id, several.id, binary.id, file.id]);
    expect(listed.find((c: any) => c.id === newLine.id)).toEqual(newLine);
    // Another execution's changeset has none of them.
    expect(await executionComments(w.e2)).toEqual([]);
    // By ID.
    expect((await read(`query($id: ID!) { reviewComment(id: $id) { ${COMMENT} } }`, { id: several.id })).reviewComment).toEqual(several);
    expect((await read(`{ reviewComment(id: "cmt_0000000000000missing0000") { id } }`)).reviewComment).toBeNull();
  });

  it('the comments of the changesets of a page are read in one statement per kind (no query per changeset)', async () => {
    const q = `query($s: ID!) { session(id: $s) { executions(first: 10) { edges { node { id
      changeset { comments { id anchor { path } } } driftBefore { comments { id } } } } } } }`;
    g.queries.reset();
    const page = await read(q, { s: w.sessionID });
    const statements = g.queries.log.filter((l) => /FROM review_comments/.test(l));
    // One for the executions' own changesets, one for their drifts (which resolve a wave later): whatever the page's size.
    expect(statements, statements.join('\n')).toHaveLength(2);
    expect(statements.every((l) => /unnest/.test(l))).toBe(true);
    const byExecution = Object.fromEntries(page.session.executions.edges.map((e: any) => [e.node.id, e.node.changeset.comments.length]));
    expect(byExecution[w.e1]).toBeGreaterThan(0);
  });

  it('Session.comments lists every comment of the session oldest first, page by page, by state', async () => {
    const mine = (await g.sql`SELECT id FROM review_comments WHERE session_id = ${w.sessionID} ORDER BY created_at, id`).map((r) => r.id);
    expect(mine.length).toBeGreaterThanOrEqual(3);
    const page = async (after: string | null, state: string | null = null) => (await read(`query($s: ID!, $after: String, $st: ReviewCommentState) {
      session(id: $s) { comments(first: 2, after: $after, state: $st) { edges { cursor node { id state } } pageInfo { hasNextPage endCursor } } } }`,
    { s: w.sessionID, after, st: state })).session.comments;
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const p: any = await page(after);
      seen.push(...p.edges.map((e: any) => e.node.id));
      if (!p.pageInfo.hasNextPage) break;
      after = p.pageInfo.endCursor;
    }
    expect(seen).toEqual(mine);
    const bad = await g.gql(`query($s: ID!) { session(id: $s) { comments(after: "nope") { edges { node { id } } } } }`, { s: w.sessionID }, reader);
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('resolve and reopen: each changes the state once (a repeat is answered as it is, with no event); filters follow', async () => {
    const c = await added(exec(w.e1), { path: 'a.ts', side: 'NEW', line: 16 }, 'Resolve me.');
    const resolved = await setState('resolveReviewComment', c.id);
    expect(resolved).toMatchObject({ __typename: 'ReviewComment', id: c.id, state: 'RESOLVED' });
    expect(resolved.resolvedAt).not.toBeNull();
    expect(new Date(resolved.updatedAt).getTime()).toBeGreaterThan(new Date(c.updatedAt).getTime());
    const head = await journalHead(w.sessionID);
    expect(await setState('resolveReviewComment', c.id)).toEqual(resolved);
    expect(await journalHead(w.sessionID)).toBe(head);
    expect((await executionComments(w.e1, 'RESOLVED')).map((x: any) => x.id)).toEqual([c.id]);
    expect((await executionComments(w.e1, 'OPEN')).map((x: any) => x.id)).not.toContain(c.id);
    const open = (await read(`query($s: ID!) { session(id: $s) { comments(first: 100, state: RESOLVED) { edges { node { id } } } } }`, { s: w.sessionID }))
      .session.comments.edges.map((e: any) => e.node.id);
    expect(open).toEqual([c.id]);
    const reopened = await setState('reopenReviewComment', c.id);
    expect(reopened).toMatchObject({ state: 'OPEN', resolvedAt: null });
    expect(await setState('reopenReviewComment', c.id)).toEqual(reopened);
    expect(await setState('resolveReviewComment', 'cmt_0000000000000missing0000')).toMatchObject({ __typename: 'CommentNotFoundError', commentID: 'cmt_0000000000000missing0000' });
    expect(await setState('resolveReviewComment', 'exe_notacomment')).toMatchObject({ __typename: 'InvalidRequestError', field: 'id' });
  });

  it('an idempotency key answers the first call\'s comment; the same key with another request is refused', async () => {
    const first = await added(exec(w.e1), {}, 'Once.', { idempotencyKey: 'k-1' });
    const before = await commentCount();
    const again = await added(exec(w.e1), {}, 'Once.', { idempotencyKey: 'k-1' });
    expect(again.id).toBe(first.id);
    expect(await commentCount()).toBe(before);
    expect(await add(exec(w.e1), {}, 'Twice?', { idempotencyKey: 'k-1' })).toMatchObject({ __typename: 'InvalidRequestError', field: 'idempotencyKey' });
  });
});

describe('comments on a range and on a drift', () => {
  it('a range\'s comment is listed on Session.changes(from, to) only; a range from an execution to itself is its own changeset', async () => {
    const range: Changeset = { kind: 'RANGE', executionID: w.e2, fromExecutionID: w.e1 };
    const c = await added(range, { path: 'a.ts', side: 'NEW', line: 3 }, 'Across both executions.');
    expect(c.anchor).toMatchObject({ kind: 'RANGE', executionID: w.e2, fromExecutionID: w.e1, quote: 'line 3 changed' });
    // The range's new side holds both executions' lines, and notes.md (the drift between them) too.
    const n = await added(range, { path: 'notes.md', side: 'NEW', line: 1 }, 'Who wrote this?');
    expect(n.anchor.quote).toBe('user note');
    const changes = async (from: string, to: string) => (await read(`query($s: ID!, $f: ID!, $t: ID!) { session(id: $s) {
      changes(from: $f, to: $t) { ... on Changeset { comments { id anchor { kind } } } } } }`, { s: w.sessionID, f: from, t: to })).session.changes.comments;
    expect((await changes(w.e1, w.e2)).map((x: any) => x.id)).toEqual([c.id, n.id]);
    expect((await executionComments(w.e2)).map((x: any) => x.id)).not.toContain(c.id);

    const self = await added({ kind: 'RANGE', executionID: w.e2, fromExecutionID: w.e2 }, { path: 'a.ts', side: 'OLD', line: 8 }, 'A deleted line.');
    expect(self.anchor).toMatchObject({ kind: 'EXECUTION', executionID: w.e2, fromExecutionID: null, side: 'OLD', line: 8, quote: 'line 8 of a.ts' });
    expect((await executionComments(w.e2)).map((x: any) => x.id)).toEqual([self.id]);
    expect((await changes(w.e2, w.e2)).map((x: any) => x.id)).toEqual([self.id]);
  });

  it('a drift\'s comment is listed on Execution.driftBefore only', async () => {
    const drift: Changeset = { kind: 'DRIFT', executionID: w.e2 };
    const c = await added(drift, { path: 'notes.md', side: 'NEW', line: 1 }, 'Edited by hand?');
    expect(c.anchor).toMatchObject({ kind: 'DRIFT', executionID: w.e2, quote: 'user note' });
    const d = await read(`query($id: ID!) { execution(id: $id) { driftBefore { comments { id } } changeset { comments { id } } } }`, { id: w.e2 });
    expect(d.execution.driftBefore.comments.map((x: any) => x.id)).toEqual([c.id]);
    expect(d.execution.changeset.comments.map((x: any) => x.id)).not.toContain(c.id);
    // The drift does not hold a.ts's changes.
    expect(await add(drift, { path: 'a.ts', side: 'NEW', line: 3 }, 'x')).toMatchObject({ __typename: 'CommentAnchorError', anchorReason: 'UNKNOWN_PATH', path: 'a.ts' });
  });

  it('a renamed file is commented on by its new path', async () => {
    const c = await added(exec(w.e2), { path: 'moved.txt', side: 'NEW', line: 2 }, 'Renamed and edited.');
    expect(c.anchor.quote).toBe('line 2 moved');
    expect(await add(exec(w.e2), { path: 'old.txt' }, 'x')).toMatchObject({ __typename: 'CommentAnchorError', anchorReason: 'UNKNOWN_PATH', path: 'old.txt' });
  });
});

describe('bad input is a typed error and writes nothing', () => {
  it('anchors outside the patch, unknown paths, binary lines, bad bodies and changesets', async () => {
    const other = await newSession();
    const first = await host.beginExecution(other, 'PROMPT') as any;
    await host.settleExecution(first.id, 'SUCCEEDED');
    const running = await host.beginExecution(other, 'PROMPT') as any;
    const cases: [string, Changeset, Anchor, string, Record<string, unknown>, string?][] = [
      ['a line in no hunk', exec(w.e1), { path: 'a.ts', side: 'NEW', line: 1 }, 'x', { __typename: 'CommentAnchorError', anchorReason: 'LINE_OUTSIDE_PATCH', path: 'a.ts', line: 1 }],
      ['a line past the file', exec(w.e1), { path: 'a.ts', side: 'OLD', line: 999 }, 'x', { __typename: 'CommentAnchorError', anchorReason: 'LINE_OUTSIDE_PATCH', line: 999 }],
      ['lines that start outside the hunk', exec(w.e1), { path: 'a.ts', side: 'NEW', line: 15, startLine: 9 }, 'x', { __typename: 'CommentAnchorError', anchorReason: 'LINE_OUTSIDE_PATCH', line: 9 }],
      ['an added line on the old side', exec(w.e1), { path: 'new-file.md', side: 'OLD', line: 1 }, 'x', { __typename: 'CommentAnchorError', anchorReason: 'LINE_OUTSIDE_PATCH' }],
      ['a path not in the changeset', exec(w.e1), { path: 'missing.ts' }, 'x', { __typename: 'CommentAnchorError', anchorReason: 'UNKNOWN_PATH', path: 'missing.ts' }],
      ['a line of a binary file', exec(w.e1), { path: 'img.bin', side: 'NEW', line: 1 }, 'x', { __typename: 'CommentAnchorError', anchorReason: 'NO_PATCH', path: 'img.bin' }],
      ['an empty body', exec(w.e1), {}, '', { __typename: 'InvalidRequestError', field: 'body' }],
      ['a blank body', exec(w.e1), {}, ' \n\t', { __typename: 'InvalidRequestError', field: 'body' }],
      ['a body over 64 KiB', exec(w.e1), {}, 'x'.repeat(64 * 1024 + 1), { __typename: 'InvalidRequestError', field: 'body' }],
      ['a side without a line', exec(w.e1), { path: 'a.ts', side: 'NEW' }, 'x', { __typename: 'InvalidRequestError', field: 'line' }],
      ['a line without a path', exec(w.e1), { side: 'NEW', line: 15 }, 'x', { __typename: 'InvalidRequestError', field: 'path' }],
      ['a line 0', exec(w.e1), { path: 'a.ts', side: 'NEW', line: 0 }, 'x', { __typename: 'InvalidRequestError', field: 'line' }],
      ['startLine after line', exec(w.e1), { path: 'a.ts', side: 'NEW', line: 14, startLine: 15 }, 'x', { __typename: 'InvalidRequestError', field: 'startLine' }],
      ['an unknown execution', exec('exe_0000000000000missing0000'), {}, 'x', { __typename: 'ExecutionNotFoundError', executionID: 'exe_0000000000000missing0000' }],
      ['another session\'s execution', exec(first.id), {}, 'x', { __typename: 'InvalidRequestError', field: 'changeset.executionID' }],
      ['a running execution', exec(running.id), {}, 'x', { __typename: 'InvalidRequestError', field: 'changeset.executionID' }, other],
      ['the drift before a first execution', { kind: 'DRIFT', executionID: w.e1 }, {}, 'x', { __typename: 'InvalidRequestError', field: 'changeset.executionID' }],
      ['a range backwards', { kind: 'RANGE', executionID: w.e1, fromExecutionID: w.e2 }, {}, 'x', { __typename: 'InvalidRequestError', field: 'changeset.fromExecutionID' }],
      ['a range without its start', { kind: 'RANGE', executionID: w.e2 }, {}, 'x', { __typename: 'InvalidRequestError', field: 'changeset.fromExecutionID' }],
      ['a start that is not a range\'s', { kind: 'EXECUTION', executionID: w.e2, fromExecutionID: w.e1 }, {}, 'x', { __typename: 'InvalidRequestError', field: 'changeset.fromExecutionID' }],
      ['an unknown session', exec(w.e1), {}, 'x', { __typename: 'SessionNotFoundError' }, 'ses_0000000000000missing0000'],
    ];
    const heads = [await journalHead(w.sessionID), await journalHead(other)];
    const count = await commentCount();
    for (const [what, changeset, anchor, body, expected, sessionID] of cases) {
      expect(await add(changeset, anchor, body, { sessionID }), what).toMatchObject(expected);
    }
    expect([await journalHead(w.sessionID), await journalHead(other)]).toEqual(heads);
    expect(await commentCount()).toBe(count);
    await host.settleExecution(running.id, 'SUCCEEDED');
  });

  it('a reader may read comments but not write them', async () => {
    const r = await g.gql(`mutation($s: ID!, $e: ID!) { addReviewComment(input: { sessionID: $s, changeset: { kind: EXECUTION, executionID: $e }, body: "x" }) { __typename } }`,
      { s: w.sessionID, e: w.e1 }, reader);
    expect(r.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN']);
  });
});

describe('comments after the seal, live on sessionEvents, and in replay', () => {
  it('every change reaches sessionEvents subscribers over WebSocket, with the comment as it is', async () => {
    const sub = subscribe(g.ws(reader), `subscription($s: ID!, $after: String) { sessionEvents(sessionID: $s, after: $after) {
      type commentIDs commandID comments { id state body anchor { path line } } } }`,
    { s: w.sessionID, after: (await read(`query($s: ID!) { session(id: $s) { eventsCursor } }`, { s: w.sessionID })).session.eventsCursor });
    const c = await added(exec(w.e1), { path: 'a.ts', side: 'NEW', line: 14 }, 'Live.');
    await setState('resolveReviewComment', c.id);
    await setState('reopenReviewComment', c.id);
    const events = await sub.waitFor((es) => es.length >= 3);
    expect(events.map((e: any) => [e.sessionEvents.type, e.sessionEvents.commentIDs])).toEqual([
      ['review_comment.added', [c.id]], ['review_comment.resolved', [c.id]], ['review_comment.reopened', [c.id]],
    ]);
    expect(events[0].sessionEvents.comments).toEqual([{ id: c.id, state: expect.any(String), body: 'Live.', anchor: { path: 'a.ts', line: 14 } }]);
    sub.unsubscribe();
  });

  it('a sealed session still takes comments, resolves and reopens them', async () => {
    const sessionID = await newSession();
    const e: any = await host.beginExecution(sessionID, 'PROMPT');
    await host.settleExecution(e.id, 'SUCCEEDED');
    const sealed = await g.gql(`mutation($s: ID!) { sealSession(input: { sessionID: $s, timeoutMs: 5000 }) { __typename } }`, { s: sessionID });
    expect(sealed.errors).toBeUndefined();
    expect((await read(`query($s: ID!) { session(id: $s) { status } }`, { s: sessionID })).session.status).toBe('SEALED');
    const c = await added(exec(e.id), {}, 'Post-hoc review.', { sessionID });
    expect((await setState('resolveReviewComment', c.id)).state).toBe('RESOLVED');
    expect((await setState('reopenReviewComment', c.id)).state).toBe('OPEN');
  });

  it('replay rebuilds review_comments exactly from the journal', async () => {
    const stats = await replayIntoSchema(g.sql, 'replay_comments');
    expect(stats.rows.review_comments).toBe(await commentCount());
    expect(stats.rows.review_comments).toBeGreaterThan(10);
    expect(await compareProjections(g.sql, 'replay_comments', { limit: 10 })).toEqual([]);
    await g.sql`DROP SCHEMA replay_comments CASCADE`;
  });
});

describe('the prompt and the patch lines', () => {
  it('docs/api.md shows the prompt exactly as the gateway makes it', () => {
    const text = formatReviewPrompt([
      { path: 'src/app.ts', side: 'NEW', line: 12, startLine: null, quote: 'const data = await fetch(url);', body: 'Handle the error here.' },
      { path: 'src/util.ts', side: 'OLD', line: 5, startLine: 3, quote: 'function a() {\n  return 1;\n}', body: 'Why was this removed?' },
      { path: 'README.md', side: null, line: null, startLine: null, quote: null, body: 'Document the new flag.' },
    ]);
    const docs = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
    expect(docs).toContain('```\n' + text + '```');
    expect(formatReviewPrompt([{ path: null, side: null, line: null, startLine: null, quote: null, body: 'Two\n\nparagraphs.' }]))
      .toBe('Review comments on your changes (1):\n\n1. (whole changeset):\n   Two\n\n   paragraphs.\n');
  });

  it('reads the lines a patch shows on each side by the hunks\' counts, not by what a line looks like', () => {
    const patch = 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n keep\n---- removed, looks like a header\n+++ added, looks like a header\n keep 2\n\\ No newline at end of file\n@@ -10 +10,2 @@\n-ten\n+TEN\n+eleven\n';
    const l = patchLines(patch);
    expect([...l.OLD]).toEqual([[1, 'keep'], [2, '--- removed, looks like a header'], [3, 'keep 2'], [10, 'ten']]);
    expect([...l.NEW]).toEqual([[1, 'keep'], [2, '++ added, looks like a header'], [3, 'keep 2'], [10, 'TEN'], [11, 'eleven']]);
  });
});
