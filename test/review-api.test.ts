import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, write } from './support/changeset-kit.js';

/**
 * What the review page needed from the API, for every client: one file of a changeset by path
 * (patches loaded as files are opened), and the cursors to subscribe after what a page just read.
 */
let g: TestGateway;
let host: ReferenceHost;
const dirs: string[] = [];
const kit = changesetKit(() => ({ g, host }), dirs);

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  host = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 600_000 });
  await host.start();
});
afterAll(async () => {
  await host?.stop();
  await g?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function session(directory = '/w/api') {
  const r = await g.gql(`mutation($d: String) { createSession(input: { title: "api", directory: $d }) { ... on Session { id } } }`, { d: directory });
  return r.data.createSession.id as string;
}
async function settle(sessionID: string) {
  const e: any = await host.beginExecution(sessionID, 'PROMPT');
  await host.settleExecution(e.id, 'SUCCEEDED');
  return e.id as string;
}

describe('Changeset.file(path)', () => {
  it('answers one file with its patch, null for a path that did not change, and batches across files and executions', async () => {
    const sessionID = await session();
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`f${i}.txt`] = `${i}\n`;
    const root = kit.worktree(files);
    const cap = new WorktreeCapturer();
    const e1 = await kit.runExecution(sessionID, root, cap, () => { for (let i = 0; i < 30; i++) write(root, `f${i}.txt`, `${i + 1}\n`); });
    const e2 = await kit.runExecution(sessionID, root, cap, () => write(root, 'f0.txt', 'again\n'));
    const all = (await kit.read(e1.id)).changeset.files;

    const one = await g.gql(`query($id: ID!, $p: String!) { execution(id: $id) { changeset { file(path: $p) { path status additions deletions binary patch } } } }`,
      { id: e1.id, p: 'f7.txt' });
    expect(one.errors).toBeUndefined();
    expect(one.data.execution.changeset.file).toEqual(all.find((f: any) => f.path === 'f7.txt'));
    expect(one.data.execution.changeset.file.patch).toContain('-7\n+8\n');

    const missing = await g.gql(`query($id: ID!) { execution(id: $id) { changeset { a: file(path: "nope.txt") { path } b: file(path: "") { path } } } }`, { id: e2.id });
    expect(missing.data.execution.changeset).toEqual({ a: null, b: null });

    // Every alias of file() over two executions is one round trip, however many files.
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `x${i}: file(path: "f${i}.txt") { patch }`).join(' ');
    const q = (n: number) => `query($a: ID!, $b: ID!) { a: execution(id: $a) { changeset { ${fields(n)} } } b: execution(id: $b) { changeset { ${fields(n)} } } }`;
    // Background work of the instance (sequencer passes, token lookups) shares the counted pool.
    const requestQueries = () => g.queries.requestLog();
    const count = async (n: number) => {
      g.queries.reset();
      const r = await g.gql(q(n), { a: e1.id, b: e2.id });
      expect(r.errors).toBeUndefined();
      expect(r.data.a.changeset.x0.patch).toContain('+1\n');
      expect(r.data.b.changeset.x0.patch).toContain('+again\n');
      expect(r.data.b.changeset.x1).toBeNull();
      return requestQueries();
    };
    // Warm up: postgres.js looks up array type OIDs once per connection on first use.
    for (let i = 0; i < 3; i++) await Promise.all([count(2), count(2), count(2)]);
    const few = await count(2);
    const many = await count(14);
    expect(many.length, `${few.join('\n')}\n----\n${many.join('\n')}`).toBe(few.length);
  });

  it('is null while the execution runs and when its coverage is unavailable', async () => {
    const sessionID = await session();
    const e: any = await host.beginExecution(sessionID, 'PROMPT');
    const Q = `query($id: ID!) { execution(id: $id) { changeset { file(path: "a.txt") { path } coverage { __typename } } } }`;
    expect((await g.gql(Q, { id: e.id })).data.execution.changeset).toEqual({ file: null, coverage: { __typename: 'CoverageUnavailable' } });
    await host.settleExecution(e.id, 'SUCCEEDED');
    expect((await g.gql(Q, { id: e.id })).data.execution.changeset).toEqual({ file: null, coverage: { __typename: 'CoverageUnavailable' } });
  });
});

describe('latestSettlementCursor', () => {
  const SUB = `subscription($s: ID, $a: String) { executionSettled(sessionID: $s, after: $a) { cursor executionID } }`;
  const LATEST = `query($s: ID) { latestSettlementCursor(sessionID: $s) }`;

  it('subscribing after it delivers exactly what settles later, for one session and for all', async () => {
    const s1 = await session();
    const s2 = await session();
    const before = await settle(s1);
    await settle(s2);
    const one = (await g.gql(LATEST, { s: s1 })).data.latestSettlementCursor;
    const all = (await g.gql(LATEST, {})).data.latestSettlementCursor;
    // The session's cursor is its last settlement's, as the log pages it.
    const page = await g.gql(`query($s: ID) { settlements(sessionID: $s, first: 100) { edges { cursor node { executionID } } } }`, { s: s1 });
    expect(page.data.settlements.edges.at(-1)).toEqual({ cursor: one, node: { executionID: before } });
    const later = await settle(s1);
    const other = await settle(s2);
    const mine = subscribe(g.ws(), SUB, { s: s1, a: one });
    const every = subscribe(g.ws(), SUB, { a: all });
    await mine.waitFor((ev) => ev.length >= 1);
    await every.waitFor((ev) => ev.length >= 2);
    const last = await settle(s1);
    await mine.waitFor((ev) => ev.length >= 2);
    await every.waitFor((ev) => ev.length >= 3);
    expect(mine.events.map((e) => e.executionSettled.executionID)).toEqual([later, last]);
    expect(every.events.map((e) => e.executionSettled.executionID)).toEqual([later, other, last]);
  });

  it('counts only what the token may see; a session with none yet answers a cursor that replays from its start; bad input is typed', async () => {
    const scoped = await g.token('reader', '/w/scoped');
    const mine = await session('/w/scoped/x');
    const empty = (await g.gql(LATEST, { s: mine }, scoped)).data.latestSettlementCursor;
    const outside = await session('/w/elsewhere');
    await settle(outside);
    // Another directory's settlement does not move a scoped token's cursor.
    expect((await g.gql(LATEST, {}, scoped)).data.latestSettlementCursor).toBe(empty);
    const sub = subscribe(g.ws(scoped), SUB, { s: mine, a: empty });
    const first = await settle(mine);
    await sub.waitFor((ev) => ev.length >= 1);
    expect(sub.events.map((e) => e.executionSettled.executionID)).toEqual([first]);
    const bad = await g.gql(LATEST, { s: 'exe_not_a_session' });
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('Session.eventsCursor', () => {
  it('is read with the session: subscribing after it sees every later change and nothing before', async () => {
    const sessionID = await session();
    await settle(sessionID);
    const r = await g.gql(`query($id: ID!) { session(id: $id) { status eventsCursor } }`, { id: sessionID });
    expect(r.data.session.status).toBe('IDLE');
    const ev = subscribe(g.ws(), `subscription($s: ID!, $a: String) { sessionEvents(sessionID: $s, after: $a) { type } }`, { s: sessionID, a: r.data.session.eventsCursor });
    const sealed = await g.gql(`mutation($s: ID!) { sealSession(input: { sessionID: $s }) { __typename } }`, { s: sessionID });
    expect(sealed.data.sealSession.__typename).toBe('SessionSealed');
    await ev.waitFor((e) => e.some((x) => x.sessionEvents.type === 'session.sealed'));
    expect(ev.events.map((e) => e.sessionEvents.type)).toEqual(['session.sealing', 'session.sealed']);
  });
});

describe('Snapshot.text(path)', () => {
  const q = `query($id: ID!, $p: String!) { execution(id: $id) { boundary { __typename ... on SnapshotBoundary { start { text(path: $p) } end { text(path: $p) } } } } }`;
  it('answers the stored text of a file at either boundary, exactly; null for binary, ignored, absent and out-of-scope', async () => {
    const sessionID = await session('/w/api/text');
    const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}`).join('\n');
    const root = kit.worktree({ '.gitignore': '*.log\n', 'a.txt': `${lines(40, 'old')}\n`, 'img.bin': Buffer.from([0, 1, 2]), 'x.log': 'ignored\n', 'nonl.txt': 'no newline' });
    const cap = new WorktreeCapturer();
    const e = await kit.runExecution(sessionID, root, cap, () => {
      write(root, 'a.txt', `${lines(40, 'old').replace('old 20', 'new 20')}\n`);
      write(root, 'b.txt', 'added\n');
    });
    const read = async (p: string, token?: string) => (await g.gql(q, { id: e.id, p }, token)).data.execution;
    const a = (await read('a.txt')).boundary;
    expect(a.start.text).toBe(`${lines(40, 'old')}\n`);
    expect(a.end.text).toBe(`${lines(40, 'old').replace('old 20', 'new 20')}\n`);
    expect((await read('b.txt')).boundary).toEqual({ __typename: 'SnapshotBoundary', start: { text: null }, end: { text: 'added\n' } });
    expect((await read('nonl.txt')).boundary.end.text).toBe('no newline');
    for (const p of ['img.bin', 'x.log', 'nope.txt', '']) expect((await read(p)).boundary).toEqual({ __typename: 'SnapshotBoundary', start: { text: null }, end: { text: null } });
    // A token scoped elsewhere does not see the execution, so neither its snapshots.
    expect(await read('a.txt', await g.token('reader', '/w/other'))).toBeNull();
    expect((await read('a.txt', await g.token('reader', '/w/api'))).boundary.end.text).toContain('new 20');
  });
});
