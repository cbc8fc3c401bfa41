// Repositories made with the git CLI for the snapshot tests (history, gc, worktrees, submodules), and
// OpenCode-style snapshot git directories (a separate git dir with core.worktree and an alternate).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/** Runs git; answers stdout. */
export function git(cwd: string, args: string[], opts: { input?: Buffer | string } = {}): string {
  return execFileSync('git', ['-c', 'protocol.file.allow=always', '-c', 'gc.auto=0', ...args], { cwd, env: ENV, input: opts.input, maxBuffer: 1 << 30 }).toString('utf8');
}

/** A repository with `commits` commits of a few files (one large, edited a little each time: gc deltifies it). */
export function repoWithHistory(dir: string, commits = 5): string {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  const big = Array.from({ length: 4000 }, (_, i) => `line ${i} of a file that changes a little in every commit`).join('\n');
  for (let c = 0; c < commits; c++) {
    fs.mkdirSync(path.join(dir, 'src', 'deep'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'big.txt'), big.replace(`line ${c * 7}`, `line ${c * 7} (edited in commit ${c})`) + '\n');
    fs.writeFileSync(path.join(dir, 'src', 'a.ts'), `export const a = ${c};\n`);
    fs.writeFileSync(path.join(dir, 'src', 'deep', `f${c}.txt`), `file ${c}\n`);
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', `commit ${c}`]);
  }
  return dir;
}

/**
 * An OpenCode-style snapshot git dir for `worktree` (as OpenCode 1.18.33 makes it: `git init` of a
 * separate git dir, core.worktree, objects/info/alternates to the project's objects), answering a
 * function that writes the worktree's current state as a tree (`git add -A .` from `cwd`, write-tree).
 */
export function snapshotDir(gitdir: string, worktree: string, projectObjects: string | null): { gitdir: string; track: (cwd?: string) => string } {
  fs.mkdirSync(gitdir, { recursive: true });
  execFileSync('git', ['init', '-q'], { env: { ...ENV, GIT_DIR: gitdir, GIT_WORK_TREE: worktree } });
  if (projectObjects) {
    fs.mkdirSync(path.join(gitdir, 'objects', 'info'), { recursive: true });
    fs.writeFileSync(path.join(gitdir, 'objects', 'info', 'alternates'), projectObjects + '\n');
    const head = git(worktree, ['rev-parse', 'HEAD^{tree}']).trim();
    git(worktree, ['--git-dir', gitdir, '--work-tree', worktree, 'read-tree', head]);
  }
  const track = (cwd = worktree) => {
    git(cwd, ['--git-dir', gitdir, '--work-tree', worktree, 'add', '-A', '.']);
    return git(cwd, ['--git-dir', gitdir, '--work-tree', worktree, 'write-tree']).trim();
  };
  return { gitdir, track };
}

export interface LsTreeEntry { path: string; mode: number; type: string; oid: string; sha256: string | null; size: number | null }

/** `git ls-tree -r <tree>` in `gitdir`, with each blob's SHA-256 and size (read with `git cat-file --batch`). */
export function lsTree(gitdir: string, tree: string, prefix = ''): LsTreeEntry[] {
  const out = git(path.dirname(gitdir), ['--git-dir', gitdir, 'ls-tree', '-r', '-z', tree]);
  const entries = out.split('\0').filter(Boolean).map((line) => {
    const [meta, p] = line.split('\t');
    const [mode, type, oid] = meta.split(' ');
    return { path: p, mode: parseInt(mode, 8), type, oid, sha256: null as string | null, size: null as number | null };
  }).filter((e) => !prefix || e.path.startsWith(prefix + '/')).map((e) => ({ ...e, path: prefix ? e.path.slice(prefix.length + 1) : e.path }));
  const blobs = entries.filter((e) => e.type === 'blob');
  if (blobs.length) {
    const raw = execFileSync('git', ['--git-dir', gitdir, 'cat-file', '--batch'], { env: ENV, input: blobs.map((b) => b.oid).join('\n') + '\n', maxBuffer: 1 << 30 });
    let i = 0;
    for (const b of blobs) {
      const nl = raw.indexOf(10, i);
      const size = Number(raw.subarray(i, nl).toString().split(' ')[2]);
      const data = raw.subarray(nl + 1, nl + 1 + size);
      b.sha256 = createHash('sha256').update(data).digest('hex');
      b.size = size;
      i = nl + 1 + size + 1;
    }
  }
  return entries.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** Counts of the objects directory (loose objects and packs), to check a test really reads packs. */
export function objectCounts(objects: string): { loose: number; packs: number } {
  let loose = 0;
  for (const d of fs.readdirSync(objects)) if (/^[0-9a-f]{2}$/.test(d)) loose += fs.readdirSync(path.join(objects, d)).length;
  const packs = fs.existsSync(path.join(objects, 'pack')) ? fs.readdirSync(path.join(objects, 'pack')).filter((n) => n.endsWith('.pack')).length : 0;
  return { loose, packs };
}

/** How many entries of each type (1 commit, 2 tree, 3 blob, 4 tag, 6 OFS_DELTA, 7 REF_DELTA) the packs hold (idx v2). */
export function packEntryTypes(objects: string): Record<number, number> {
  const pdir = path.join(objects, 'pack');
  const types: Record<number, number> = {};
  for (const idx of fs.readdirSync(pdir).filter((n) => n.endsWith('.idx'))) {
    const b = fs.readFileSync(path.join(pdir, idx));
    const n = b.readUInt32BE(8 + 255 * 4);
    const offAt = 8 + 1024 + n * 24;
    const pack = fs.readFileSync(path.join(pdir, idx.replace(/\.idx$/, '.pack')));
    for (let i = 0; i < n; i++) {
      const o = b.readUInt32BE(offAt + i * 4);
      if (o & 0x80000000) continue; // large offsets: not in these small test packs
      const t = (pack[o] >> 4) & 7;
      types[t] = (types[t] ?? 0) + 1;
    }
  }
  return types;
}
