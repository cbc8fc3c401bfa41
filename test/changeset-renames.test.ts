import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestGateway, type TestGateway } from './harness.js';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit, write } from './support/changeset-kit.js';
import { similarity } from '../domain/changesets.js';

/**
 * Renames in changesets (issue 49, defect 4): a deleted file and an added one of the same content (by hash) or a
 * similar one (at least 50%, as git measures it) are one RENAMED file with `previousPath`, `similarity` and the patch
 * of their differences only, frozen with the execution's changeset, and found in a range and in a drift too. Real
 * worktrees captured by the reference host's capturer; git itself checks the patches and the similarity.
 */
let g: TestGateway;
let host: ReferenceHost;
const dirs: string[] = [];

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

const { worktree, newSession, runExecution } = changesetKit(() => ({ g, host }), dirs);
const FILES = 'files { path previousPath similarity status additions deletions binary patch }';
const COVERAGE = 'coverage { __typename ... on CoverageOmitted { omissions { path reason } } }';

async function changeset(executionID: string) {
  const r = await g.gql(`query($id: ID!) { execution(id: $id) { changeset { fileCount additions deletions patch ${COVERAGE} ${FILES} } } }`, { id: executionID });
  expect(r.errors).toBeUndefined();
  return r.data.execution.changeset;
}

function git(cwd: string, ...args: string[]) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A git repository of `before` with `after` staged: what git itself says of the change. */
function gitView(before: Record<string, string | Buffer>, edit: (root: string) => void): { root: string; summary: string } {
  const root = worktree(before);
  git(root, 'init', '-q');
  git(root, 'add', '-A');
  git(root, '-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'before');
  edit(root);
  git(root, 'add', '-A');
  return { root, summary: git(root, 'diff', '--cached', '-M', '--summary', '--no-color').trim() };
}

/** Applies a changeset's whole patch with `git apply` to a copy of the start tree; the end tree must come out. */
function applies(before: Record<string, string | Buffer>, patch: string, expected: Record<string, string>, gone: string[]) {
  const check = worktree(before);
  git(check, 'init', '-q');
  const file = path.join(check, '..', `${path.basename(check)}.patch`);
  writeFileSync(file, patch);
  git(check, 'apply', '--whitespace=nowarn', file);
  rmSync(file);
  for (const [p, c] of Object.entries(expected)) expect(readFileSync(path.join(check, p), 'utf8')).toBe(c);
  for (const p of gone) expect(() => readFileSync(path.join(check, p))).toThrow();
}

function move(root: string, from: string, to: string) {
  mkdirSync(path.dirname(path.join(root, to)), { recursive: true });
  renameSync(path.join(root, from), path.join(root, to));
}

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1} of the file`).join('\n') + '\n';

describe('renames in an execution\'s changeset', () => {
  it('a file moved unchanged is one RENAMED file (similarity 100) whose patch is its header only; git applies it', async () => {
    const before = { 'src/util.ts': lines(30), 'keep.txt': 'same\n' };
    const sessionID = await newSession();
    const root = worktree(before);
    const e = await runExecution(sessionID, root, new WorktreeCapturer(), () => {
      renameSync(path.join(root, 'src/util.ts'), path.join(root, 'src/helpers.ts'));
    });
    const cs = await changeset(e.id);
    const header = 'diff --git a/src/util.ts b/src/helpers.ts\nsimilarity index 100%\nrename from src/util.ts\nrename to src/helpers.ts\n';
    expect(cs.files).toEqual([{ path: 'src/helpers.ts', previousPath: 'src/util.ts', similarity: 100, status: 'RENAMED', additions: 0, deletions: 0, binary: false, patch: header }]);
    expect(cs).toMatchObject({ fileCount: 1, additions: 0, deletions: 0, patch: header, coverage: { __typename: 'CoverageComplete' } });
    applies(before, cs.patch, { 'src/helpers.ts': lines(30), 'keep.txt': 'same\n' }, ['src/util.ts']);
    expect(gitView(before, (r) => git(r, 'mv', 'src/util.ts', 'src/helpers.ts')).summary).toBe('rename src/{util.ts => helpers.ts} (100%)');
  });

  it('a file moved and edited is one RENAMED file with git\'s similarity and the patch of the differences only', async () => {
    const before = { 'lib/parse.ts': lines(40), 'other.txt': 'x\n' };
    const after = lines(40).replace('line 7 of the file', 'line seven, edited').replace('line 33 of the file\n', '');
    const sessionID = await newSession();
    const root = worktree(before);
    const e = await runExecution(sessionID, root, new WorktreeCapturer(), () => {
      rmSync(path.join(root, 'lib/parse.ts'));
      write(root, 'src/parser.ts', after);
    });
    const cs = await changeset(e.id);
    expect(cs.files.map((f: any) => [f.path, f.status, f.previousPath, f.additions, f.deletions])).toEqual([['src/parser.ts', 'RENAMED', 'lib/parse.ts', 1, 2]]);
    const [f] = cs.files;
    // git's own measure of the same change.
    const view = gitView(before, (r) => { rmSync(path.join(r, 'lib/parse.ts')); write(r, 'src/parser.ts', after); });
    expect(view.summary).toBe(`rename lib/parse.ts => src/parser.ts (${f.similarity}%)`);
    expect(f.similarity).toBe(similarity(Buffer.from(before['lib/parse.ts']), Buffer.from(after)));
    expect(f.similarity).toBeGreaterThanOrEqual(90);
    expect(f.patch.split('\n').slice(0, 6)).toEqual([
      'diff --git a/lib/parse.ts b/src/parser.ts', `similarity index ${f.similarity}%`, 'rename from lib/parse.ts', 'rename to src/parser.ts',
      '--- a/lib/parse.ts', '+++ b/src/parser.ts',
    ]);
    // Only the differences: two hunks, not the whole content twice.
    expect(f.patch.match(/^@@ /gm)).toHaveLength(2);
    expect(f.patch).toContain('-line 7 of the file\n+line seven, edited\n');
    expect(f.patch).not.toContain('line 20 of the file');
    applies(before, cs.patch, { 'src/parser.ts': after, 'other.txt': 'x\n' }, ['lib/parse.ts']);
  });

  it('below 50% similar, a deleted file and an added one stay DELETED and ADDED; empty files are never paired', async () => {
    const before = { 'old.txt': lines(10), 'empty-a': '' };
    const unlike = lines(3) + lines(12, 'other');
    const sessionID = await newSession();
    const root = worktree(before);
    const e = await runExecution(sessionID, root, new WorktreeCapturer(), () => {
      rmSync(path.join(root, 'old.txt'));
      rmSync(path.join(root, 'empty-a'));
      write(root, 'new.txt', unlike);
      write(root, 'empty-b', '');
    });
    const cs = await changeset(e.id);
    expect(cs.files.map((f: any) => [f.path, f.status, f.previousPath, f.similarity])).toEqual([
      ['empty-a', 'DELETED', null, null], ['empty-b', 'ADDED', null, null], ['new.txt', 'ADDED', null, null], ['old.txt', 'DELETED', null, null],
    ]);
    expect(similarity(Buffer.from(lines(10)), Buffer.from(unlike))).toBeLessThan(50);
    // git agrees on the two texts (it would pair the empty files: a rename of nothing says nothing, so the gateway does not).
    expect(gitView({ 'old.txt': lines(10) }, (r) => { rmSync(path.join(r, 'old.txt')); write(r, 'new.txt', unlike); }).summary).not.toContain('rename');
  });

  it('a binary file moved unchanged is RENAMED with nothing omitted; a mode change shows in the header; same content twice goes to the same name', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13, 1, 2, 3, 4, 0, 255]);
    const before = { 'img/logo.png': png, 'bin/run': '#!/bin/sh\necho run\n', 'a/config.json': '{"same": true}\n', 'b/settings.json': '{"same": true}\n' };
    const sessionID = await newSession();
    const root = worktree(before);
    const e = await runExecution(sessionID, root, new WorktreeCapturer(), () => {
      move(root, 'img/logo.png', 'assets/logo.png');
      move(root, 'bin/run', 'scripts/run.sh');
      chmodSync(path.join(root, 'scripts/run.sh'), 0o755);
      // Two deleted files of one content, one added: paired with the one of the same name.
      rmSync(path.join(root, 'a/config.json'));
      rmSync(path.join(root, 'b/settings.json'));
      write(root, 'c/settings.json', '{"same": true}\n');
    });
    const cs = await changeset(e.id);
    expect(cs.coverage).toEqual({ __typename: 'CoverageComplete' });
    expect(cs.files.map((f: any) => [f.path, f.status, f.previousPath, f.similarity, f.binary])).toEqual([
      ['a/config.json', 'DELETED', null, null, false],
      ['assets/logo.png', 'RENAMED', 'img/logo.png', 100, true],
      ['c/settings.json', 'RENAMED', 'b/settings.json', 100, false],
      ['scripts/run.sh', 'RENAMED', 'bin/run', 100, false],
    ]);
    expect(cs.files[1].patch).toBe('diff --git a/img/logo.png b/assets/logo.png\nsimilarity index 100%\nrename from img/logo.png\nrename to assets/logo.png\n');
    expect(cs.files[3].patch).toBe('diff --git a/bin/run b/scripts/run.sh\nold mode 100644\nnew mode 100755\nsimilarity index 100%\nrename from bin/run\nrename to scripts/run.sh\n');
    const check = worktree(before);
    git(check, 'init', '-q');
    writeFileSync(path.join(check, '..', `${path.basename(check)}.patch`), cs.patch);
    git(check, 'apply', path.join(check, '..', `${path.basename(check)}.patch`));
    expect(readFileSync(path.join(check, 'assets/logo.png')).equals(png)).toBe(true);
    expect(execFileSync('stat', ['-c', '%a', path.join(check, 'scripts/run.sh')], { encoding: 'utf8' }).trim()).toBe('755');
  });

  it('a file loaded by its path (Changeset.file) is the same RENAMED row; the rename stays as frozen after a restart', async () => {
    const sessionID = await newSession();
    const root = worktree({ 'docs/a.md': lines(12) });
    const e = await runExecution(sessionID, root, new WorktreeCapturer(), () => {
      rmSync(path.join(root, 'docs/a.md'));
      write(root, 'docs/b.md', lines(12).replace('line 3 of', 'line three of'));
    });
    const first = await changeset(e.id);
    await g.restart();
    rmSync(root, { recursive: true, force: true });
    expect(await changeset(e.id)).toEqual(first);
    const r = await g.gql(`query($id: ID!, $p: String!) { execution(id: $id) { changeset { file(path: $p) { path previousPath similarity status patch } gone: file(path: "docs/a.md") { path } } } }`,
      { id: e.id, p: 'docs/b.md' });
    expect(r.data.execution.changeset.file).toEqual({ path: 'docs/b.md', previousPath: 'docs/a.md', similarity: first.files[0].similarity, status: 'RENAMED', patch: first.files[0].patch });
    expect(r.data.execution.changeset.gone).toBeNull();
    // Listed without patches (what a review page reads first), through execution(id) and through a session's page.
    const listed = await g.gql(`query($id: ID!, $s: ID!) { execution(id: $id) { changeset { files { path previousPath similarity status } } }
      session(id: $s) { executions { edges { node { changeset { files { path previousPath similarity status } } } } } } }`, { id: e.id, s: sessionID });
    const row = { path: 'docs/b.md', previousPath: 'docs/a.md', similarity: first.files[0].similarity, status: 'RENAMED' };
    expect(listed.data.execution.changeset.files).toEqual([row]);
    expect(listed.data.session.executions.edges[0].node.changeset.files).toEqual([row]);
  });
});

describe('renames across executions and outside them', () => {
  it('Session.changes over two executions (one moves, the next edits) is one RENAMED file; a move made between executions is a RENAMED drift', async () => {
    const sessionID = await newSession();
    const root = worktree({ 'app/main.ts': lines(25), 'notes.txt': 'n\n' });
    const cap = new WorktreeCapturer();
    const e1 = await runExecution(sessionID, root, cap, () => renameSync(path.join(root, 'app/main.ts'), path.join(root, 'app/index.ts')));
    const e2 = await runExecution(sessionID, root, cap, () => write(root, 'app/index.ts', lines(25).replace('line 12 of', 'line twelve of')));
    // Outside any execution: the user moves notes.txt.
    renameSync(path.join(root, 'notes.txt'), path.join(root, 'NOTES.md'));
    const e3 = await runExecution(sessionID, root, cap, () => {});

    const range = await g.gql(`query($s: ID!, $a: ID!, $b: ID!) { session(id: $s) { changes(from: $a, to: $b) { __typename ... on Changeset { fileCount ${FILES}
      one: file(path: "app/index.ts") { previousPath similarity status } } } } }`, { s: sessionID, a: e1.id, b: e2.id });
    expect(range.errors).toBeUndefined();
    const c = range.data.session.changes;
    expect(c.fileCount).toBe(1);
    expect(c.files.map((f: any) => [f.path, f.status, f.previousPath, f.additions, f.deletions])).toEqual([['app/index.ts', 'RENAMED', 'app/main.ts', 1, 1]]);
    expect(c.one).toEqual({ previousPath: 'app/main.ts', similarity: c.files[0].similarity, status: 'RENAMED' });
    expect(c.files[0].similarity).toBeGreaterThanOrEqual(90);
    expect(c.files[0].similarity).toBeLessThan(100);

    const drift = await g.gql(`query($id: ID!) { execution(id: $id) { driftBefore { fileCount ${FILES} } } }`, { id: e3.id });
    expect(drift.data.execution.driftBefore.files).toEqual([{
      path: 'NOTES.md', previousPath: 'notes.txt', similarity: 100, status: 'RENAMED', additions: 0, deletions: 0, binary: false,
      patch: 'diff --git a/notes.txt b/NOTES.md\nsimilarity index 100%\nrename from notes.txt\nrename to NOTES.md\n',
    }]);
    // Each execution's own changeset is still its own: e1 a pure rename, e2 an edit of the new path.
    expect((await changeset(e1.id)).files.map((f: any) => [f.path, f.status, f.previousPath])).toEqual([['app/index.ts', 'RENAMED', 'app/main.ts']]);
    expect((await changeset(e2.id)).files.map((f: any) => [f.path, f.status, f.previousPath])).toEqual([['app/index.ts', 'MODIFIED', null]]);
  });
});

describe('similarity, as git measures it', () => {
  it('counts the bytes of the lines two contents share over the larger one\'s size, CRLF as LF, long lines in 64-byte pieces', () => {
    expect(similarity(Buffer.from('a\nb\nc\nd\n'), Buffer.from('a\nb\nc\nD\n'))).toBe(75);
    expect(similarity(Buffer.from('a\r\nb\r\n'), Buffer.from('a\nb\n'))).toBe(100);
    expect(similarity(Buffer.from('x'.repeat(128)), Buffer.from('x'.repeat(64) + 'y'.repeat(64)))).toBe(50);
    expect(similarity(Buffer.from(''), Buffer.from(''))).toBe(100);
    expect(similarity(Buffer.from('abc\n'), Buffer.from('xyz\n'))).toBe(0);
  });
});
