import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestGateway, type TestGateway } from './harness.js';
import { requestsKit } from './support/requests-kit.js';
import { changesetKit, write } from './support/changeset-kit.js';
import type { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { setPolicy } from '../domain/snapshots.js';
import { pruneChangesets } from '../domain/changesets.js';

/**
 * Who changed each line (Session.blame, FileChange.attribution), checked against `git blame`: a real worktree
 * captured by the reference host at every boundary, each span's state committed to a git repository of its own
 * (an execution's as one commit, an outside edit between executions as another, a span whose boundary was not
 * captured as one commit for all it merges), then the gateway's line owners compared with git's, after the
 * worktree is gone.
 */

let g: TestGateway;
let kit: Awaited<ReturnType<typeof requestsKit>>;
let host: ReferenceHost;
const dirs: string[] = [];

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  kit = await requestsKit(g);
  host = await kit.host();
});
afterAll(async () => {
  await kit?.dispose();
  await g?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const { worktree } = changesetKit(() => ({ g, host }), dirs);

/** A git repository beside the worktree (its own git dir): each commit is the worktree's state, messaged with its span's label. */
function gitMirror(root: string) {
  const gitDir = mkdtempSync(path.join(tmpdir(), 'gw-blame-git-'));
  dirs.push(gitDir);
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, '--work-tree', root, '-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8' });
  git('init', '-q');
  const labels = new Map<string, string>();
  return {
    commit(label: string) {
      git('add', '-A');
      git('commit', '-q', '--allow-empty', '-m', label);
      labels.set(git('rev-parse', 'HEAD').trim(), label);
    },
    /** The label of the commit that last changed each line of the file at HEAD (git blame --porcelain, renames followed). */
    blame(file: string): string[] {
      const out = git('blame', '--porcelain', 'HEAD', '--', file);
      const owners: string[] = [];
      for (const line of out.split('\n')) {
        const m = /^([0-9a-f]{40}) \d+ (\d+)/.exec(line);
        if (m) owners[Number(m[2]) - 1] = labels.get(m[1])!;
      }
      return owners;
    },
    /** For each line of the file at commit `from`, the label of the commit that removed it (null: still there at HEAD). git blame --reverse. */
    removedBy(file: string, from: string, order: string[]): (string | null)[] {
      const sha = [...labels].find(([, l]) => l === from)![0];
      const out = git('blame', '--porcelain', '--reverse', `${sha}..HEAD`, '--', file);
      const lastSeen: string[] = [];
      for (const line of out.split('\n')) {
        const m = /^([0-9a-f]{40}) \d+ (\d+)/.exec(line);
        if (m) lastSeen[Number(m[2]) - 1] = labels.get(m[1])!;
      }
      return lastSeen.map((l) => (l === order[order.length - 1] ? null : order[order.indexOf(l) + 1]));
    },
  };
}

const ORIGIN = `__typename
  ... on ExecutionOrigin { execution { id sequence } }
  ... on OutsideEditOrigin { execution { id sequence } previous { sequence } }
  ... on BeforeSessionOrigin { execution { sequence } }
  ... on UnknownOrigin { reason detail executions { sequence } outsideEdits }`;
const BLAME = `query($s: ID!, $path: String!, $e: ID!, $side: BoundarySide!) { session(id: $s) { blame(path: $path, at: { execution: $e, side: $side }) {
  __typename
  ... on Blame { path side execution { sequence } snapshot { id } changedBy { ${ORIGIN} }
    content { __typename ... on BlameText { text lineCount runs { start count origin { ${ORIGIN} } } } ... on BlameUnavailable { reason omission detail } } }
  ... on ExecutionNotFoundError { executionID }
  ... on InvalidRequestError { field message } } } }`;
const RANGE = `query($s: ID!, $from: ID!, $to: ID!) { session(id: $s) { changes(from: $from, to: $to) { __typename ... on Changeset {
  files { path status attribution { changedBy { ${ORIGIN} } lastChangedBy { ${ORIGIN} }
    removedLines { start count origin { ${ORIGIN} } } addedLines { start count origin { ${ORIGIN} } } } } } } } }`;

/** An origin as the labels of the git mirror: e<k>, d<k> (the drift before k), base, or the merged span's label. */
function label(o: any): string {
  switch (o.__typename) {
    case 'ExecutionOrigin': return `e${o.execution.sequence}`;
    case 'OutsideEditOrigin': return `d${o.execution.sequence}`;
    case 'BeforeSessionOrigin': return 'base';
    default: return `unknown(${o.executions.map((e: any) => e.sequence).join(',')}${o.outsideEdits ? '+outside' : ''})`;
  }
}
const perLine = (runs: any[]) => runs.flatMap((r) => Array.from({ length: r.count }, () => label(r.origin)));
const lineLabels = (runs: any[]) => new Map(runs.flatMap((r) => Array.from({ length: r.count }, (_, i) => [r.start + i, label(r.origin)] as [number, string])));

const A0 = Array.from({ length: 12 }, (_, i) => `alpha line ${i + 1}`);
const OLD = Array.from({ length: 8 }, (_, i) => `moving line ${i + 1}`);
const lines = (ls: string[]) => ls.map((l) => `${l}\n`).join('');

describe('who changed each line, against git blame', () => {
  it('several executions, outside edits between them, a rename, a file deleted and re-added, a boundary not captured, an ignored file', async () => {
    const r = await g.gql(`mutation { createSession(input: { title: "blame", directory: "/w/blame" }) { ... on Session { id } } }`);
    const sessionID = r.data.createSession.id as string;
    const root = worktree({ 'a.txt': lines(A0), 'old.txt': lines(OLD), 'gone.txt': lines(['gone 1', 'gone 2', 'gone 3']), 'README.md': '# Readme\n', '.gitignore': '*.log\n' });
    const git = gitMirror(root);
    const cap = new WorktreeCapturer();
    git.commit('base');
    const snap = () => cap.snapshot(host.client, sessionID, root, host.id);
    const order: string[] = ['base'];
    const ex: { id: string; sequence: number }[] = [];
    /** One execution: its start captured (or not), the edit, its end captured (or not); each captured span committed to git with its label. */
    async function execution(edit: () => void, opts: { start?: boolean; end?: boolean } = {}) {
      const start = opts.start === false ? null : await snap();
      const e: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: start?.id ?? null });
      ex.push({ id: e.id, sequence: e.sequence });
      edit();
      const end = opts.end === false ? null : await snap();
      await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: end?.id ?? null });
      return e;
    }
    const span = (l: string) => { git.commit(l); order.push(l); };

    // #1: edits a.txt, renames old.txt to new.txt with a change.
    await execution(() => {
      const a = [...A0]; a[2] = 'alpha line 3 by e1'; a.splice(6, 0, 'inserted by e1');
      write(root, 'a.txt', lines(a));
      renameSync(path.join(root, 'old.txt'), path.join(root, 'new.txt'));
      const n = [...OLD]; n[7] = 'moving line 8 by e1';
      write(root, 'new.txt', lines(n));
    });
    span('e1');
    // The user, between #1 and #2: README.md and a line of a.txt.
    write(root, 'README.md', '# Readme\n\nEdited by the user.\n');
    write(root, 'a.txt', lines(['user line on top', 'alpha line 1', 'alpha line 2', 'alpha line 3 by e1', 'alpha line 4', 'alpha line 5', 'alpha line 6', 'inserted by e1', ...A0.slice(6)]));
    span('d2');
    // #2: deletes gone.txt, edits a.txt, writes the ignored build.log.
    await execution(() => {
      unlinkSync(path.join(root, 'gone.txt'));
      write(root, 'a.txt', lines(['user line on top', 'alpha line 1', 'alpha line 2 by e2', 'alpha line 3 by e1', 'alpha line 4', 'alpha line 5', 'alpha line 6', 'inserted by e1', ...A0.slice(6, 11), 'appended by e2']));
      write(root, 'build.log', 'built\n');
    });
    span('e2');
    // #3: gone.txt added again (partly the same lines), new.txt edited.
    await execution(() => {
      write(root, 'gone.txt', lines(['gone 1', 'back in e3', 'gone 3']));
      const n = [...OLD]; n[7] = 'moving line 8 by e1'; n[0] = 'moving line 1 by e3';
      write(root, 'new.txt', lines(n));
    });
    span('e3');
    // The user moves new.txt to moved.txt before #4: a rename outside any execution.
    renameSync(path.join(root, 'new.txt'), path.join(root, 'moved.txt'));
    span('d4');
    // #4: its end not captured; the user edits before #5 too: one span git-wise, unknown to the gateway.
    await execution(() => {
      write(root, 'a.txt', lines(['user line on top', 'alpha line 1', 'alpha line 2 by e2', 'alpha line 3 by e1', 'alpha line 4 by e4', 'alpha line 5', 'alpha line 6', 'inserted by e1', ...A0.slice(6, 11), 'appended by e2']));
    }, { end: false });
    write(root, 'README.md', '# Readme\n\nEdited by the user.\nAnd again.\n');
    span('unknown(4+outside)');
    // #5: edits a.txt again.
    await execution(() => {
      write(root, 'a.txt', lines(['user line on top', 'alpha line 1', 'alpha line 2 by e2', 'alpha line 3 by e1', 'alpha line 4 by e4', 'alpha line 5 by e5', 'alpha line 6', 'inserted by e1', ...A0.slice(6, 11), 'appended by e2']));
    });
    span('e5');
    rmSync(root, { recursive: true, force: true }); // nothing below reads the worktree

    const blameAt = async (p: string, e = ex[4], side = 'END') => {
      const res = await g.gql(BLAME, { s: sessionID, path: p, e: e.id, side });
      expect(res.errors).toBeUndefined();
      return res.data.session.blame;
    };
    // Every text file at the end of #5, line by line, as git blame says.
    for (const p of ['a.txt', 'moved.txt', 'gone.txt', 'README.md']) {
      const b = await blameAt(p);
      expect(b.__typename).toBe('Blame');
      expect(b.content.__typename, p).toBe('BlameText');
      expect(perLine(b.content.runs), p).toEqual(git.blame(p));
      expect(b.content.lineCount).toBe(git.blame(p).length);
    }
    // At an earlier boundary too: a.txt at the start of #2 (after the user's edit).
    const early = await blameAt('a.txt', ex[1], 'START');
    expect(perLine(early.content.runs)).toEqual(['d2', 'base', 'base', 'e1', 'base', 'base', 'base', 'e1', 'base', 'base', 'base', 'base', 'base', 'base']);
    // File-level history: moved.txt came from old.txt (renamed by #1, moved by the user before #4), gone.txt was
    // there, deleted by #2, added by #3.
    expect((await blameAt('moved.txt')).changedBy.map(label)).toEqual(['base', 'e1', 'e3', 'd4']);
    expect((await blameAt('gone.txt')).changedBy.map(label)).toEqual(['base', 'e2', 'e3']);
    expect((await blameAt('README.md')).changedBy.map(label)).toEqual(['base', 'd2', 'unknown(4+outside)']);
    // Typed unknowns: an ignored file, a file absent there, a boundary not captured; typed errors for bad arguments.
    expect((await blameAt('build.log')).content).toMatchObject({ __typename: 'BlameUnavailable', reason: 'OMITTED', omission: 'IGNORED' });
    expect((await blameAt('gone.txt', ex[1])).content).toMatchObject({ __typename: 'BlameUnavailable', reason: 'ABSENT' });
    expect((await blameAt('a.txt', ex[3])).content).toMatchObject({ __typename: 'BlameUnavailable', reason: 'BOUNDARY_UNAVAILABLE' });
    expect(await blameAt('../x')).toMatchObject({ __typename: 'InvalidRequestError', field: 'path' });
    const other = await g.gql(`mutation { createSession(input: { title: "other", directory: "/w/blame" }) { ... on Session { id } } }`);
    const wrong = await g.gql(BLAME, { s: other.data.createSession.id, path: 'a.txt', e: ex[0].id, side: 'END' });
    expect(wrong.data.session.blame).toMatchObject({ __typename: 'InvalidRequestError', field: 'at' });

    // The range #1 to #5: each file says who changed it, each + line who last changed it, each - line who removed it.
    const range = await g.gql(RANGE, { s: sessionID, from: ex[0].id, to: ex[4].id });
    expect(range.errors).toBeUndefined();
    const files = Object.fromEntries(range.data.session.changes.files.map((f: any) => [f.path, f]));
    expect(Object.keys(files).sort()).toEqual(['README.md', 'a.txt', 'gone.txt', 'moved.txt']);
    expect(files['README.md'].attribution.changedBy.map(label)).toEqual(['d2', 'unknown(4+outside)']);
    expect(label(files['README.md'].attribution.lastChangedBy)).toBe('unknown(4+outside)');
    expect(files['a.txt'].attribution.changedBy.map(label)).toEqual(['e1', 'd2', 'e2', 'unknown(4+outside)', 'e5']);
    expect(files['moved.txt'].status).toBe('RENAMED');
    expect(files['moved.txt'].attribution.changedBy.map(label)).toEqual(['e1', 'e3', 'd4']);
    expect(files['gone.txt'].attribution.changedBy.map(label)).toEqual(['e2', 'e3']);
    for (const p of ['a.txt', 'moved.txt', 'README.md', 'gone.txt']) {
      const owners = git.blame(p);
      const added = lineLabels(files[p].attribution.addedLines);
      expect(added.size, p).toBeGreaterThan(0);
      for (const [n, l] of added) expect(l, `${p}:${n}`).toBe(owners[n - 1]);
    }
    // Removed lines of a.txt, against git blame --reverse from the start of #1.
    const removedGit = git.removedBy('a.txt', 'base', order);
    const removed = lineLabels(files['a.txt'].attribution.removedLines);
    expect(removed.size).toBeGreaterThan(0);
    for (const [n, l] of removed) expect(l, `a.txt old line ${n}`).toBe(removedGit[n - 1]);
    // An execution's own changeset: all its lines are its own; a drift's: the outside edit's.
    const own = await g.gql(`query($id: ID!) { execution(id: $id) { changeset { files { path attribution { changedBy { ${ORIGIN} } addedLines { start count origin { ${ORIGIN} } } } } }
      driftBefore { files { path attribution { changedBy { ${ORIGIN} } addedLines { start count origin { ${ORIGIN} } } } } } } }`, { id: ex[1].id });
    for (const f of own.data.execution.changeset.files) {
      expect(f.attribution.changedBy.map(label)).toEqual(['e2']);
      for (const r of f.attribution.addedLines) expect(label(r.origin)).toBe('e2');
    }
    expect(own.data.execution.driftBefore.files.map((f: any) => [f.path, f.attribution.changedBy.map(label)])).toEqual([['README.md', ['d2']], ['a.txt', ['d2']]]);

    // Retention prunes the snapshots of #1 to #4: what they and the edits between them did is unknown now (EXPIRED),
    // never guessed; #5's own lines are still #5's.
    await setPolicy(g.sql, { retainMs: 0, retainExecutions: 0, graceMs: 0 });
    try {
      expect((await pruneChangesets(g.sql)).changesets).toBe(4);
    } finally {
      await setPolicy(g.sql, { retainMs: 2_592_000_000, retainExecutions: 10, graceMs: 3_600_000 });
    }
    const pruned = await blameAt('a.txt');
    expect(perLine(pruned.content.runs)).toEqual(git.blame('a.txt').map((l) => (l === 'e5' ? 'e5' : 'unknown(1,2,3,4+outside)')));
    expect(pruned.content.runs.find((r: any) => r.origin.__typename === 'UnknownOrigin').origin.reason).toBe('EXPIRED');
    expect((await blameAt('a.txt', ex[1], 'START')).content).toMatchObject({ __typename: 'BlameUnavailable', reason: 'EXPIRED' });
  });

  it('the files of a range are attributed together: a bounded number of statements whatever their number', async () => {
    const r = await g.gql(`mutation { createSession(input: { title: "many", directory: "/w/blame" }) { ... on Session { id } } }`);
    const sessionID = r.data.createSession.id as string;
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`src/f${i}.txt`, `file ${i}\nline two of ${i}\n`]));
    const root = worktree({ 'keep.txt': 'k\n' });
    const cap = new WorktreeCapturer();
    const snap = () => cap.snapshot(host.client, sessionID, root, host.id);
    const run = async (edit: () => void) => {
      const e: any = await host.beginExecution(sessionID, 'PROMPT', { startSnapshot: (await snap()).id });
      edit();
      await host.settleExecution(e.id, 'SUCCEEDED', { endSnapshot: (await snap()).id });
      return e.id as string;
    };
    const statements = async (from: string, to: string, lines = false) => {
      g.queries.reset();
      const res = await g.gql(`query($s: ID!, $a: ID!, $b: ID!) { session(id: $s) { changes(from: $a, to: $b) { ... on Changeset { files { path attribution {
        changedBy { __typename } ${lines ? 'addedLines { start count }' : ''} } } } } } }`, { s: sessionID, a: from, b: to });
      expect(res.errors).toBeUndefined();
      return { n: g.queries.requestLog().length, files: res.data.session.changes.files };
    };
    const e1 = await run(() => { for (const [p, c] of Object.entries(many(10))) write(root, p, c); });
    renameSync(path.join(root, 'src/f0.txt'), path.join(root, 'moved-by-user.txt')); // an outside edit: a rename
    const e2 = await run(() => { for (const [p, c] of Object.entries(many(60))) if (!p.endsWith('/f0.txt')) write(root, p, c); });
    // The first read of a range (and of a drift a rename was looked for in) computes and stores its changeset once:
    // counted after it, as every later read is.
    await statements(e1, e2);
    const small = await statements(e1, e1);
    const large = await statements(e1, e2);
    expect(small.files).toHaveLength(10);
    expect(large.files).toHaveLength(60);
    expect(large.files.every((f: any) => f.attribution.changedBy.length >= 1)).toBe(true);
    // Ten files or sixty: the same statements (the executions, the changeset's rows, the entries of every path in one,
    // the renames per span).
    const smallLines = await statements(e1, e1, true);
    const largeLines = await statements(e1, e2, true);
    expect(largeLines.files.find((f: any) => f.path === 'src/f59.txt').attribution.addedLines).toEqual([{ start: 1, count: 2 }]);
    console.log(`range attribution: ${small.n} statements for 10 files, ${large.n} for 60; with each line's: ${smallLines.n} and ${largeLines.n}`);
    expect(large.n).toBeLessThanOrEqual(small.n + 4);
    expect(largeLines.n).toBeLessThanOrEqual(smallLines.n + 4);
  });
});
