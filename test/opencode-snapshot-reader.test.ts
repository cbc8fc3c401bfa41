// The bridge's tree reader (bridge/opencode/git-objects.ts, snapshot.ts) against repositories made with
// the git CLI: every manifest is compared with `git ls-tree -r` (paths, modes, blob contents).
import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GitObjectError, GitObjectStore } from '../bridge/opencode/git-objects.js';
import { findSnapshotDirs, readSnapshotTree, readStepSnapshot, SnapshotUnavailable } from '../bridge/opencode/snapshot.js';
import { git, lsTree, objectCounts, packEntryTypes, repoWithHistory, snapshotDir } from './support/git-kit.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oc-snap-reader-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The manifest's files as ls-tree shows them (path, mode, SHA-256, size), sorted. */
async function asLsTree(gitdir: string, tree: string, prefix = '') {
  const m = await readSnapshotTree(gitdir, tree, prefix);
  const files = m.files.map((f) => ({ path: f.path, mode: f.mode, sha256: f.hash, size: f.size })).sort((a, b) => (a.path < b.path ? -1 : 1));
  for (const f of m.files) expect(Buffer.from(m.content(f.hash!)!).length).toBe(f.size);
  return { files, gitlinks: m.gitlinks };
}
const expected = (gitdir: string, tree: string, prefix = '') => lsTree(gitdir, tree, prefix).filter((e) => e.type === 'blob')
  .map((e) => ({ path: e.path, mode: e.mode === 0o100664 ? 0o100644 : e.mode, sha256: e.sha256, size: e.size }));

describe('OpenCode snapshot tree reader', () => {
  it('reads a tree whose objects live in the project through an alternate, loose and after git gc in both (packed, deltified)', async () => {
    const repo = repoWithHistory(path.join(tmp, 'history'), 8);
    const snap = snapshotDir(path.join(tmp, 'data', 'opencode', 'snapshot', 'p1', 'h1'), repo, path.join(repo, '.git', 'objects'));
    fs.writeFileSync(path.join(repo, 'src', 'a.ts'), 'export const a = "edited";\n');
    fs.writeFileSync(path.join(repo, 'new.txt'), 'new\n');
    const t1 = snap.track();
    expect((await asLsTree(snap.gitdir, t1)).files).toEqual(expected(snap.gitdir, t1));
    // Pack and deltify everything: the project, then the snapshot dir (as OpenCode's hourly gc does).
    git(repo, ['gc', '-q', '--aggressive', '--prune=now']);
    expect(objectCounts(path.join(repo, '.git', 'objects'))).toMatchObject({ loose: 0, packs: 1 });
    const verify = git(repo, ['verify-pack', '-v', ...fs.readdirSync(path.join(repo, '.git', 'objects', 'pack')).filter((n) => n.endsWith('.idx')).map((n) => path.join(repo, '.git', 'objects', 'pack', n))]);
    expect(verify).toMatch(/chain length = [1-9]/); // some objects are deltas
    expect(packEntryTypes(path.join(repo, '.git', 'objects'))[6]).toBeGreaterThan(0); // OFS_DELTA entries
    fs.writeFileSync(path.join(repo, 'big.txt'), fs.readFileSync(path.join(repo, 'big.txt'), 'utf8').replace('line 100 ', 'line 100 (edited by the agent) '));
    const t2 = snap.track();
    git(repo, ['--git-dir', snap.gitdir, 'gc', '-q', '--prune=now']);
    expect(objectCounts(path.join(snap.gitdir, 'objects')).loose).toBe(0);
    expect((await asLsTree(snap.gitdir, t2)).files).toEqual(expected(snap.gitdir, t2));
    // Older commits' trees: git keeps the newest version of a file whole and stores the older ones as deltas.
    const history = () => git(repo, ['log', '--format=%T']).trim().split('\n');
    for (const t of history()) expect((await asLsTree(snap.gitdir, t)).files).toEqual(expected(snap.gitdir, t));
    // t1 is reachable from nothing in the snapshot dir (OpenCode keeps no refs): gc pruned it, and the
    // reader says so exactly as git does.
    let gitHasT1 = true;
    try { git(repo, ['--git-dir', snap.gitdir, 'cat-file', '-e', t1]); } catch { gitHasT1 = false; }
    if (gitHasT1) expect((await asLsTree(snap.gitdir, t1)).files).toEqual(expected(snap.gitdir, t1));
    else await expect(readSnapshotTree(snap.gitdir, t1)).rejects.toThrow(new RegExp(`^object ${t1} not found in `));
    // REF_DELTA entries too (packs written without offset deltas, as thin packs fetched over the wire are).
    git(repo, ['-c', 'repack.useDeltaBaseOffset=false', 'repack', '-q', '-a', '-d', '-f']);
    expect(packEntryTypes(path.join(repo, '.git', 'objects'))).toMatchObject({ 7: expect.any(Number) });
    expect(packEntryTypes(path.join(repo, '.git', 'objects'))[6]).toBeUndefined();
    for (const t of [t2, ...history()]) expect((await asLsTree(snap.gitdir, t)).files).toEqual(expected(snap.gitdir, t));
    expect((await asLsTree(snap.gitdir, t2)).files.length).toBeGreaterThan(10);
  });

  it('follows chained alternates, relative ones included, and names the object and every directory when one is missing', async () => {
    const c = repoWithHistory(path.join(tmp, 'chain-c'), 2);
    const b = path.join(tmp, 'chain-b');
    git(tmp, ['init', '-q', '--bare', b]);
    fs.mkdirSync(path.join(b, 'objects', 'info'), { recursive: true });
    fs.writeFileSync(path.join(b, 'objects', 'info', 'alternates'), path.relative(path.join(b, 'objects'), path.join(c, '.git', 'objects')) + '\n');
    const snap = snapshotDir(path.join(tmp, 'chain-snap'), c, path.join(b, 'objects'));
    const tree = snap.track();
    expect((await asLsTree(snap.gitdir, tree)).files).toEqual(expected(snap.gitdir, tree));
    const store = new GitObjectStore(snap.gitdir);
    expect(store.dirs.map((d) => fs.realpathSync(d.dir))).toEqual([snap.gitdir, b, path.join(c, '.git')].map((d) => fs.realpathSync(path.join(d, 'objects'))));
    // The project's objects go away (repository deleted): the error says which object and where it looked.
    fs.rmSync(path.join(c, '.git'), { recursive: true, force: true });
    const broken = new GitObjectStore(snap.gitdir);
    let err: unknown;
    try { await readSnapshotTree(snap.gitdir, tree); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(GitObjectError);
    const detail = (err as GitObjectError).detail;
    expect(detail).toMatch(/^object [0-9a-f]{40} not found in /);
    expect(detail).toContain(path.join(snap.gitdir, 'objects'));
    expect(detail).toContain(path.join(b, 'objects'));
    expect(detail).toMatch(/alternate .*chain-c\/\.git\/objects .*does not exist/);
    expect(broken.problems.length).toBe(1);
  });

  it('symlinks, executables and mode changes, subdirectories, gitlinks (submodules)', async () => {
    const repo = repoWithHistory(path.join(tmp, 'modes'), 2);
    const sub = repoWithHistory(path.join(tmp, 'modes-sub-origin'), 1);
    git(repo, ['submodule', 'add', '-q', sub, 'vendor/lib']);
    git(repo, ['commit', '-q', '-m', 'submodule']);
    fs.symlinkSync('src/a.ts', path.join(repo, 'link-to-a'));
    fs.writeFileSync(path.join(repo, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    const snap = snapshotDir(path.join(tmp, 'modes-snap'), repo, path.join(repo, '.git', 'objects'));
    const t1 = snap.track();
    fs.chmodSync(path.join(repo, 'run.sh'), 0o644);
    fs.chmodSync(path.join(repo, 'big.txt'), 0o755);
    const t2 = snap.track();
    const r1 = await asLsTree(snap.gitdir, t1);
    expect(r1.files).toEqual(expected(snap.gitdir, t1));
    expect(r1.files.find((f) => f.path === 'link-to-a')).toMatchObject({ mode: 0o120000, size: 'src/a.ts'.length });
    expect(r1.files.find((f) => f.path === 'run.sh')!.mode).toBe(0o100755);
    expect(r1.gitlinks.map((g) => g.path)).toEqual(['vendor/lib']);
    const r2 = await asLsTree(snap.gitdir, t2);
    expect(r2.files).toEqual(expected(snap.gitdir, t2));
    expect(r2.files.find((f) => f.path === 'run.sh')!.mode).toBe(0o100644);
    expect(r2.files.find((f) => f.path === 'big.txt')!.mode).toBe(0o100755);
    // A session started in src/: the tree's subtree, relative to it.
    expect((await asLsTree(snap.gitdir, t2, 'src')).files).toEqual(expected(snap.gitdir, t2, 'src'));
    expect((await asLsTree(snap.gitdir, t2, 'src')).files.map((f) => f.path)).toContain('deep/f0.txt');
  });

  it('finds the snapshot directory of a subdirectory and of a `git worktree add` worktree; a removed one is a clear error', async () => {
    const repo = repoWithHistory(path.join(tmp, 'wt-main'), 3);
    const wt = path.join(tmp, 'wt-linked');
    git(repo, ['worktree', 'add', '-q', wt]);
    expect(fs.statSync(path.join(wt, '.git')).isFile()).toBe(true);
    const data = path.join(tmp, 'wt-data');
    const common = path.join(repo, '.git', 'objects');
    const a = snapshotDir(path.join(data, 'opencode', 'snapshot', 'proj', 'main'), repo, common);
    const b = snapshotDir(path.join(data, 'opencode', 'snapshot', 'proj', 'linked'), wt, common);
    fs.writeFileSync(path.join(wt, 'src', 'deep', 'in-worktree.txt'), 'w\n');
    const tw = b.track(path.join(wt, 'src'));
    const ta = a.track(path.join(repo, 'src'));
    expect(findSnapshotDirs(data, path.join(repo, 'src')).map((d) => [d.gitdir, d.prefix])).toEqual([[a.gitdir, 'src']]);
    expect(findSnapshotDirs(data, wt).map((d) => [d.gitdir, d.prefix])).toEqual([[b.gitdir, '']]);
    // The same directory reached through a symlink.
    const link = path.join(tmp, 'wt-main-link');
    fs.symlinkSync(repo, link);
    expect(findSnapshotDirs(data, path.join(link, 'src')).map((d) => [d.gitdir, d.prefix])).toEqual([[a.gitdir, 'src']]);
    const m = await readStepSnapshot({ dataDir: data, directory: path.join(wt, 'src'), tree: tw, live: true });
    expect(m.files.filter((f) => f.kind === 'FILE').map((f) => f.path).sort()).toEqual(expected(b.gitdir, tw, 'src').map((e) => e.path));
    expect(m.files.map((f) => f.path)).toContain('deep/in-worktree.txt');
    const h = await readStepSnapshot({ dataDir: data, directory: repo, tree: ta, live: false });
    expect(h.partial).toBeTruthy();
    expect(h.files.map((f) => f.path).sort()).toEqual(expected(a.gitdir, ta).map((e) => e.path));
    // The snapshot directory removed under the bridge: the reason names the directory searched.
    fs.rmSync(path.join(data, 'opencode', 'snapshot'), { recursive: true, force: true });
    let err: unknown;
    try { await readStepSnapshot({ dataDir: data, directory: wt, tree: tw, live: true }); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(SnapshotUnavailable);
    expect((err as SnapshotUnavailable).detail).toContain(`no OpenCode snapshot directory for ${wt} under ${path.join(data, 'opencode', 'snapshot')}`);
  });

  it('live: submodule files are captured from the worktree; what changed after the capture reads as unknown, not observed', async () => {
    const lib = repoWithHistory(path.join(tmp, 'live-lib'), 1);
    const repo = repoWithHistory(path.join(tmp, 'live'), 1);
    git(repo, ['submodule', 'add', '-q', lib, 'vendor/lib']);
    git(repo, ['commit', '-q', '-m', 'submodule']);
    fs.writeFileSync(path.join(repo, '.gitignore'), 'build/\n*.log\n');
    fs.mkdirSync(path.join(repo, 'build'));
    fs.writeFileSync(path.join(repo, 'build', 'out.txt'), 'out\n');
    fs.writeFileSync(path.join(repo, 'x.log'), 'log\n');
    const data = path.join(tmp, 'live-data');
    const s = snapshotDir(path.join(data, 'opencode', 'snapshot', 'p', 'h'), repo, path.join(repo, '.git', 'objects'));
    const tree = s.track();
    const capturedBefore = Date.now() + 1000; // everything on disk was there before the capture
    const m = await readStepSnapshot({ dataDir: data, directory: repo, tree, live: true, capturedBefore });
    const by = new Map(m.files.map((f) => [f.path, f]));
    expect(by.get('vendor/lib/src/a.ts')).toMatchObject({ kind: 'FILE', size: 'export const a = 0;\n'.length });
    expect(Buffer.from(m.content(by.get('vendor/lib/src/a.ts')!.hash!)!).toString()).toBe('export const a = 0;\n');
    expect(by.get('build')).toMatchObject({ kind: 'IGNORED_DIR', count: 1 });
    expect(by.get('x.log')).toMatchObject({ kind: 'IGNORED' });
    expect(m.unscanned).toEqual([]);
    // The same tree observed once the agent has moved on (files modified after the capture time).
    const earlier = Date.now() - 60_000;
    const late = await readStepSnapshot({ dataDir: data, directory: repo, tree, live: true, capturedBefore: earlier });
    expect(late.files.filter((f) => f.path.startsWith('vendor/') || f.path === 'build' || f.path === 'x.log')).toEqual([]);
    expect(late.unscanned.map((u) => u.path).sort()).toEqual(expect.arrayContaining(['build', 'vendor/lib/src/a.ts', 'x.log']));
    expect(late.unscanned.every((u) => /changed after OpenCode captured this boundary/.test(u.detail))).toBe(true);
    // Read from history: partial, and the submodule named as not captured.
    const h = await readStepSnapshot({ dataDir: data, directory: repo, tree, live: false });
    expect(h.partial).toBeTruthy();
    expect(h.unscanned.map((u) => u.path)).toEqual(['vendor/lib']);
  });

  it('a tree OID that is not there: which object, which directories', async () => {
    const repo = repoWithHistory(path.join(tmp, 'missing'), 1);
    const data = path.join(tmp, 'missing-data');
    const s = snapshotDir(path.join(data, 'opencode', 'snapshot', 'p', 'h'), repo, path.join(repo, '.git', 'objects'));
    s.track();
    let err: unknown;
    try { await readStepSnapshot({ dataDir: data, directory: repo, tree: 'f'.repeat(40), live: false }); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(SnapshotUnavailable);
    expect((err as SnapshotUnavailable).detail).toContain(`object ${'f'.repeat(40)} not found in ${path.join(s.gitdir, 'objects')} nor in its alternates ${path.join(repo, '.git', 'objects')}`);
  });
});
