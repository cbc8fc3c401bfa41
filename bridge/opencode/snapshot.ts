// Reading OpenCode's step snapshots without shelling out to git: OpenCode records each step boundary as
// a tree OID in its own snapshot git directory ($XDG_DATA_HOME/opencode/snapshot/<project>/<hash>/,
// core.worktree = the session directory). We read that tree with isomorphic-git and turn it into the
// gateway's manifest input (path, SHA-256, size, mode, binary) plus the contents to upload.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import git from 'isomorphic-git';
import ignore from 'ignore';

export interface ManifestFile {
  path: string;
  kind: 'FILE' | 'OVERSIZE' | 'IGNORED' | 'IGNORED_DIR';
  hash?: string | null;
  size: number;
  mode: number;
  binary?: boolean;
  mtimeMs?: number | null;
  count?: number | null;
}
export interface TreeManifest {
  files: ManifestFile[];
  unscanned: { path: string; detail: string }[];
  /** Set when OpenCode's capture may have left out paths that cannot be named (a step read from history). */
  partial?: string;
  /** SHA-256 (hex) -> bytes, for every FILE entry. */
  contents: Map<string, Uint8Array>;
}

/** OpenCode leaves untracked files over this size out of its snapshots. */
export const OPENCODE_MAX_UNTRACKED = 2 * 1024 * 1024;

const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');
const isBinary = (b: Uint8Array) => b.subarray(0, 8000).includes(0);

/** The snapshot git directory whose core.worktree is `directory`, among `<dataDir>/opencode/snapshot/<project>/<hash>`. */
export function findSnapshotGitdir(dataDir: string, directory: string): string | null {
  const root = path.join(dataDir, 'opencode', 'snapshot');
  const want = path.resolve(directory);
  let projects: string[] = [];
  try { projects = fs.readdirSync(root); } catch { return null; }
  for (const p of projects) {
    let repos: string[] = [];
    try { repos = fs.readdirSync(path.join(root, p)); } catch { continue; }
    for (const r of repos) {
      const gitdir = path.join(root, p, r);
      try {
        const cfg = fs.readFileSync(path.join(gitdir, 'config'), 'utf8');
        const m = /^\s*worktree\s*=\s*(.+)$/m.exec(cfg);
        if (m && path.resolve(m[1].trim()) === want) return gitdir;
      } catch { /* not a snapshot dir */ }
    }
  }
  return null;
}

/** The default data dir OpenCode uses (XDG_DATA_HOME or ~/.local/share). */
export function defaultOpencodeDataDir(): string {
  return process.env.XDG_DATA_HOME || path.join(process.env.HOME ?? '', '.local', 'share');
}

/** Reads a snapshot tree into a manifest. Submodules (gitlinks) are reported as unscanned. */
export async function readSnapshotTree(gitdir: string, treeOid: string): Promise<TreeManifest> {
  const out: TreeManifest = { files: [], unscanned: [], contents: new Map() };
  const walk = async (oid: string, prefix: string) => {
    const { tree } = await git.readTree({ fs, gitdir, oid });
    for (const e of tree) {
      const p = prefix + e.path;
      if (e.type === 'tree') await walk(e.oid, p + '/');
      else if (e.type === 'commit') out.unscanned.push({ path: p, detail: 'submodule: not captured by OpenCode snapshots' });
      else {
        const { blob } = await git.readBlob({ fs, gitdir, oid: e.oid });
        const hash = sha256(blob);
        out.contents.set(hash, blob);
        out.files.push({ path: p, kind: 'FILE', hash, size: blob.length, mode: parseInt(e.mode, 8), binary: isBinary(blob) });
      }
    }
  };
  await walk(treeOid, '');
  return out;
}

/**
 * What OpenCode's capture leaves out, observed in the live worktree right after the capture: paths its
 * ignore rules exclude (recorded by metadata: size and mtime; an ignored directory by a fingerprint of
 * its entries' metadata) and untracked files over 2 MiB missing from the tree (by hash and size). The
 * gateway turns a change of one of them between two boundaries into an omission, so coverage stays
 * honest. Only meaningful while following live: for a historic step the worktree has moved on.
 */
export function observeLeftOut(worktree: string, tree: TreeManifest, opts: { maxEntries?: number } = {}): Pick<TreeManifest, 'files' | 'unscanned'> {
  const inTree = new Set(tree.files.map((f) => f.path));
  const files: ManifestFile[] = [];
  const unscanned: { path: string; detail: string }[] = [];
  let budget = opts.maxEntries ?? 20_000;
  const rules: { base: string; ig: ReturnType<typeof ignore> }[] = [];
  const loadRules = (dirRel: string) => {
    for (const name of dirRel === '' ? ['.gitignore', '.git/info/exclude'] : ['.gitignore']) {
      try {
        const text = fs.readFileSync(path.join(worktree, dirRel, name), 'utf8');
        rules.push({ base: dirRel, ig: ignore().add(text) });
      } catch { /* none */ }
    }
  };
  const ignored = (rel: string, dir: boolean) =>
    rules.some((r) => {
      if (r.base && !rel.startsWith(r.base + '/')) return false;
      const sub = r.base ? rel.slice(r.base.length + 1) : rel;
      return r.ig.ignores(dir ? sub + '/' : sub);
    });
  const fingerprint = (absDir: string): { hash: string; count: number } | null => {
    const h = createHash('sha256');
    let count = 0;
    const stack = [''];
    while (stack.length) {
      const rel = stack.pop()!;
      let ents: fs.Dirent[];
      try { ents = fs.readdirSync(path.join(absDir, rel), { withFileTypes: true }); } catch { continue; }
      ents.sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const d of ents) {
        if (--budget < 0) return null;
        const r = rel ? `${rel}/${d.name}` : d.name;
        const st = fs.lstatSync(path.join(absDir, r));
        h.update(`${r}\0${st.size}\0${st.mtimeMs}\0${st.mode}\n`);
        count++;
        if (d.isDirectory()) stack.push(r);
      }
    }
    return { hash: h.digest('hex'), count };
  };
  const walk = (rel: string) => {
    loadRules(rel);
    let ents: fs.Dirent[];
    try { ents = fs.readdirSync(path.join(worktree, rel), { withFileTypes: true }); } catch { return; }
    for (const d of ents) {
      if (rel === '' && d.name === '.git') continue;
      const r = rel ? `${rel}/${d.name}` : d.name;
      const abs = path.join(worktree, r);
      if (d.isDirectory()) {
        if (ignored(r, true)) {
          const fp = fingerprint(abs);
          const st = fs.statSync(abs);
          if (fp) files.push({ path: r, kind: 'IGNORED_DIR', hash: fp.hash, size: 0, mode: st.mode & 0o177777, count: fp.count, mtimeMs: st.mtimeMs });
          else unscanned.push({ path: r, detail: 'ignored directory too large to fingerprint' });
        } else walk(r);
        continue;
      }
      if (!d.isFile() || inTree.has(r)) continue;
      const st = fs.statSync(abs);
      if (ignored(r, false)) {
        files.push({ path: r, kind: 'IGNORED', size: st.size, mode: st.mode & 0o177777, mtimeMs: st.mtimeMs });
      } else if (st.size > OPENCODE_MAX_UNTRACKED) {
        const hash = createHash('sha256').update(fs.readFileSync(abs)).digest('hex');
        files.push({ path: r, kind: 'OVERSIZE', hash, size: st.size, mode: st.mode & 0o177777, mtimeMs: st.mtimeMs });
      }
    }
  };
  walk('');
  return { files, unscanned };
}
