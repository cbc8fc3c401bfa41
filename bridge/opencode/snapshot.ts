// Reading OpenCode's step snapshots without shelling out to git. OpenCode 1.18.33 records each step
// boundary as a tree OID in its own snapshot git directory, `$XDG_DATA_HOME/opencode/snapshot/<project
// ID>/<hash of the worktree>/`, whose config names `core.worktree` (the repository's top level: for a
// session started in a subdirectory that is an ancestor of the session's directory; for a `git worktree
// add` worktree, that worktree). For a project with history its `objects/info/alternates` points at the
// project's own object database (`.git/objects`, the common one for a worktree), which `git gc` packs
// and deltifies; `git-objects.ts` reads all of that. The tree is turned into the gateway's manifest
// (path, SHA-256, size, mode, binary) relative to the session's directory; contents are read lazily,
// only for what the gateway lacks.
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import ignore from 'ignore';
import { GitObjectError, GitObjectStore, parseTree } from './git-objects.js';
import { isBinary, WorktreeCapturer } from '../../host/capture.js';

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
  /** The bytes of a FILE entry's content (SHA-256 hex), or null if this manifest has no such content. */
  content(hash: string): Uint8Array | null;
}

/** Why a boundary could not be read: which object, which directory. */
export class SnapshotUnavailable extends Error {
  constructor(readonly detail: string) { super(detail); }
}

/** Detail of a path that changed after OpenCode's capture, before the bridge could observe it. */
const CHANGED_AFTER = 'changed after OpenCode captured this boundary and before the bridge could observe it (the agent had moved on): its state at the boundary is unknown';
const changedAfter = (st: { mtimeMs: number; ctimeMs: number }, t: number | null | undefined) => t != null && Math.max(st.mtimeMs, st.ctimeMs) > t;

/** OpenCode leaves untracked files over this size out of its snapshots. */
export const OPENCODE_MAX_UNTRACKED = 2 * 1024 * 1024;

const MODE_TREE = 0o040000;
const MODE_LINK = 0o120000;
const MODE_GITLINK = 0o160000;
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

export interface SnapshotDir {
  gitdir: string;
  /** Its core.worktree (absolute). */
  worktree: string;
  /** The session directory relative to that worktree ('' when they are the same), '/'-separated. */
  prefix: string;
}

/**
 * The snapshot git directories that can hold the session directory's trees: those whose core.worktree is
 * `directory` or one of its ancestors, nearest first (several may match: OpenCode gives a project a new
 * ID, so a new snapshot directory, when its repository gets its first commit).
 */
export function findSnapshotDirs(dataDir: string, directory: string): SnapshotDir[] {
  const root = path.join(dataDir, 'opencode', 'snapshot');
  const want = realpath(directory);
  const out: (SnapshotDir & { mtime: number })[] = [];
  let projects: string[] = [];
  try { projects = fs.readdirSync(root); } catch { return []; }
  for (const p of projects) {
    let repos: string[] = [];
    try { repos = fs.readdirSync(path.join(root, p)); } catch { continue; }
    for (const r of repos) {
      const gitdir = path.join(root, p, r);
      let cfg: string;
      try { cfg = fs.readFileSync(path.join(gitdir, 'config'), 'utf8'); } catch { continue; }
      const m = /^\s*worktree\s*=\s*(.+)$/m.exec(cfg);
      if (!m) continue;
      const worktree = path.resolve(unquote(m[1].trim()));
      const rel = path.relative(realpath(worktree), want);
      if (rel.startsWith('..') || path.isAbsolute(rel)) continue;
      let mtime = 0;
      try { mtime = fs.statSync(path.join(gitdir, 'index')).mtimeMs; } catch { /* no index yet */ }
      out.push({ gitdir, worktree, prefix: rel.split(path.sep).join('/'), mtime });
    }
  }
  out.sort((a, b) => b.worktree.length - a.worktree.length || b.mtime - a.mtime);
  return out.map(({ mtime: _, ...d }) => d);
}

/** The snapshot git directory whose core.worktree is `directory` (or an ancestor of it), or null. */
export function findSnapshotGitdir(dataDir: string, directory: string): string | null {
  return findSnapshotDirs(dataDir, directory)[0]?.gitdir ?? null;
}

/** The path with symlinks resolved (a directory reached through a symlink matches its snapshot dir), else as given. */
function realpath(p: string): string {
  try { return fs.realpathSync(p); } catch { return path.resolve(p); }
}

function unquote(v: string): string {
  return v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1).replace(/\\(.)/g, '$1') : v;
}

/** The default data dir OpenCode uses (XDG_DATA_HOME or ~/.local/share). */
export function defaultOpencodeDataDir(): string {
  return process.env.XDG_DATA_HOME || path.join(process.env.HOME ?? '', '.local', 'share');
}

// Object stores stay open across steps (their pack indexes are read once); blob facts are cached by
// object id (immutable), so consecutive steps sharing most of their tree hash nothing again.
const stores = new Map<string, GitObjectStore>();
const blobInfo = new Map<string, { hash: string; size: number; binary: boolean }>();
const MAX_BLOB_INFO = 200_000;
const YIELD_MS = 20;

function storeFor(gitdir: string): GitObjectStore {
  let s = stores.get(gitdir);
  if (s && !fs.existsSync(path.join(gitdir, 'objects'))) { s.close(); stores.delete(gitdir); s = undefined; }
  if (!s) {
    s = new GitObjectStore(gitdir);
    stores.set(gitdir, s);
    if (stores.size > 32) { const [k, v] = stores.entries().next().value!; v.close(); stores.delete(k); }
  }
  return s;
}

/**
 * Reads a snapshot tree into a manifest, relative to `prefix` (a subdirectory of the tree's root, '' for
 * all of it). Symlinks are entries of mode 120000 whose content is the link target (as the reference
 * host records them); executables 100755. Submodules (gitlinks) are listed in `gitlinks`: OpenCode's
 * snapshot records only the submodule's commit, none of its files.
 */
export async function readSnapshotTree(gitdir: string, treeOid: string, prefix = ''): Promise<TreeManifest & { gitlinks: { path: string; commit: string }[] }> {
  const store = storeFor(gitdir);
  const files: ManifestFile[] = [];
  const gitlinks: { path: string; commit: string }[] = [];
  const blobs = new Map<string, string>(); // SHA-256 -> blob oid
  const readTree = (oid: string, where: string) => {
    const o = store.read(oid);
    if (o.type !== 'tree') throw new GitObjectError(`object ${oid} (${where || 'the snapshot root'}) is a ${o.type}, not a tree`);
    return parseTree(o.data);
  };
  // Descend to the session's directory.
  let root = treeOid;
  for (const part of prefix ? prefix.split('/') : []) {
    const e = readTree(root, '').find((x) => x.name === part);
    if (!e) return { files, unscanned: [], gitlinks, content: () => null }; // nothing captured under it yet
    if (e.mode !== MODE_TREE) {
      if (e.mode === MODE_GITLINK) gitlinks.push({ path: '', commit: e.oid });
      return { files, unscanned: [], gitlinks, content: () => null };
    }
    root = e.oid;
  }
  // Reading is synchronous (file reads, inflate); the walk yields to the event loop every 20 ms so a large repository's first read never stalls the bridge's lease renewals.
  let lastYield = performance.now();
  const walk = async (oid: string, dir: string) => {
    for (const e of readTree(oid, dir)) {
      const p = dir ? `${dir}/${e.name}` : e.name;
      if (performance.now() - lastYield > YIELD_MS) { await new Promise<void>((r) => setImmediate(r)); lastYield = performance.now(); }
      if (e.mode === MODE_TREE) { await walk(e.oid, p); continue; }
      if (e.mode === MODE_GITLINK) { gitlinks.push({ path: p, commit: e.oid }); continue; }
      let info = blobInfo.get(e.oid);
      if (!info) {
        const b = store.read(e.oid);
        if (b.type !== 'blob') throw new GitObjectError(`object ${e.oid} (${p}) is a ${b.type}, not a blob`);
        info = { hash: sha256(b.data), size: b.data.length, binary: e.mode === MODE_LINK ? false : isBinary(b.data) };
        if (blobInfo.size >= MAX_BLOB_INFO) blobInfo.delete(blobInfo.keys().next().value!);
        blobInfo.set(e.oid, info);
      }
      blobs.set(info.hash, e.oid);
      const mode = e.mode === MODE_LINK ? MODE_LINK : e.mode & 0o111 ? 0o100755 : 0o100644;
      files.push({ path: p, kind: 'FILE', hash: info.hash, size: info.size, mode, binary: info.binary });
    }
  };
  await walk(root, '');
  return {
    files, unscanned: [], gitlinks,
    content: (hash) => { const oid = blobs.get(hash); return oid ? storeFor(gitdir).read(oid).data : null; },
  };
}

/** The git directory of a worktree: `.git` itself, or where a `.git` file (`gitdir: …`) points; and its common dir. */
export function projectGitDirs(worktree: string): { gitdir: string; common: string } | null {
  const dotgit = path.join(worktree, '.git');
  let gitdir = dotgit;
  try {
    if (fs.statSync(dotgit).isFile()) {
      const m = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotgit, 'utf8'));
      if (!m) return null;
      gitdir = path.resolve(worktree, m[1].trim());
    }
  } catch { return null; }
  let common = gitdir;
  try { common = path.resolve(gitdir, fs.readFileSync(path.join(gitdir, 'commondir'), 'utf8').trim()); } catch { /* not a linked worktree */ }
  return { gitdir, common };
}

/** core.excludesFile of the user's git config (~/.gitconfig, $XDG_CONFIG_HOME/git/config), else the XDG default. */
function globalExcludesFile(): string {
  const home = process.env.HOME ?? '';
  const xdg = process.env.XDG_CONFIG_HOME || path.join(home, '.config');
  let found: string | null = null;
  for (const f of [path.join(xdg, 'git', 'config'), path.join(home, '.gitconfig')]) {
    try {
      const m = /^\s*excludesfile\s*=\s*(.+)$/im.exec(fs.readFileSync(f, 'utf8'));
      if (m) found = unquote(m[1].trim()).replace(/^~(?=\/)/, home);
    } catch { /* no such config */ }
  }
  return found ?? path.join(xdg, 'git', 'ignore');
}

/**
 * What OpenCode's capture leaves out, observed in the live worktree right after the capture, under the
 * session's directory (`worktree`/`prefix`; paths relative to it): paths its ignore rules exclude
 * (`.gitignore` of every level from the worktree root down, and the repository's `info/exclude`;
 * recorded by metadata: size and mtime; an ignored directory by a fingerprint of its entries'
 * metadata; the user's global excludes too), and untracked files over 2 MiB (by hash and size), so a
 * change to one of them reads as an omission, never as complete coverage. Submodules in the tree are skipped
 * (`captureSubmodules` handles them). Only meaningful while following live.
 */
export function observeLeftOut(worktree: string, tree: Pick<TreeManifest, 'files'> & { gitlinks?: { path: string }[] },
  opts: { maxEntries?: number; prefix?: string; capturedBefore?: number | null } = {}): Pick<TreeManifest, 'files' | 'unscanned'> {
  const t = opts.capturedBefore;
  const prefix = opts.prefix ?? '';
  const inTree = new Set(tree.files.map((f) => f.path));
  const skip = new Set((tree.gitlinks ?? []).map((g) => g.path));
  const files: ManifestFile[] = [];
  const unscanned: { path: string; detail: string }[] = [];
  let budget = opts.maxEntries ?? 20_000;
  const rules: { base: string; ig: ReturnType<typeof ignore> }[] = [];
  const add = (base: string, file: string) => {
    try { rules.push({ base, ig: ignore().add(fs.readFileSync(file, 'utf8')) }); } catch { /* none */ }
  };
  // The user's global excludes (core.excludesFile, default $XDG_CONFIG_HOME/git/ignore), then the
  // repository's info/exclude: OpenCode's `git ls-files --exclude-standard` applies both.
  add('', globalExcludesFile());
  const dirs = projectGitDirs(worktree);
  if (dirs) add('', path.join(dirs.common, 'info', 'exclude'));
  // Rules of the levels above the session's directory (paths here are relative to the worktree root).
  const parts = prefix ? prefix.split('/') : [];
  for (let i = 0; i < parts.length; i++) add(parts.slice(0, i).join('/'), path.join(worktree, ...parts.slice(0, i), '.gitignore'));
  const ignored = (rel: string, dir: boolean) => {
    let state = false;
    for (const r of rules) {
      if (r.base && !rel.startsWith(r.base + '/')) continue;
      const sub = r.base ? rel.slice(r.base.length + 1) : rel;
      let t: { ignored: boolean; unignored: boolean };
      try { t = r.ig.test(dir ? sub + '/' : sub); } catch { continue; }
      if (t.ignored) state = true;
      else if (t.unignored) state = false;
    }
    return state;
  };
  const fingerprint = (absDir: string): { hash: string; count: number; changed: boolean } | null => {
    const h = createHash('sha256');
    let count = 0;
    let changed = false;
    const stack = [''];
    while (stack.length) {
      const rel = stack.pop()!;
      let ents: fs.Dirent[];
      try { ents = fs.readdirSync(path.join(absDir, rel), { withFileTypes: true }); } catch { continue; }
      ents.sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const d of ents) {
        if (--budget < 0) return null;
        const r = rel ? `${rel}/${d.name}` : d.name;
        let st: fs.Stats;
        try { st = fs.lstatSync(path.join(absDir, r)); } catch { continue; }
        h.update(`${r}\0${st.size}\0${st.mtimeMs}\0${st.mode}\n`);
        if (changedAfter(st, t)) changed = true;
        count++;
        if (d.isDirectory()) stack.push(r);
      }
    }
    return { hash: h.digest('hex'), count, changed };
  };
  const base = path.join(worktree, ...parts);
  const walk = (rel: string) => {
    const fromRoot = (r: string) => (prefix ? (r ? `${prefix}/${r}` : prefix) : r);
    const gi = path.join(base, rel, '.gitignore');
    if (fs.existsSync(gi)) add(fromRoot(rel), gi);
    let ents: fs.Dirent[];
    try { ents = fs.readdirSync(path.join(base, rel), { withFileTypes: true }); } catch { return; }
    for (const d of ents) {
      if (d.name === '.git') continue;
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (skip.has(r)) continue;
      const abs = path.join(base, r);
      if (--budget < 0) { unscanned.push({ path: rel || '.', detail: 'too many entries left out of OpenCode\'s capture to observe' }); return; }
      if (d.isDirectory()) {
        if (ignored(fromRoot(r), true)) {
          const fp = fingerprint(abs);
          let st: fs.Stats;
          try { st = fs.statSync(abs); } catch { continue; }
          if (fp && (fp.changed || changedAfter(st, t))) unscanned.push({ path: r, detail: CHANGED_AFTER });
          else if (fp) files.push({ path: r, kind: 'IGNORED_DIR', hash: fp.hash, size: 0, mode: MODE_TREE, count: fp.count, mtimeMs: st.mtimeMs });
          else unscanned.push({ path: r, detail: 'ignored directory too large to fingerprint' });
        } else walk(r);
        continue;
      }
      if ((!d.isFile() && !d.isSymbolicLink()) || inTree.has(r)) continue;
      let st: fs.Stats;
      try { st = fs.lstatSync(abs); } catch { continue; }
      const mode = st.isSymbolicLink() ? MODE_LINK : st.mode & 0o111 ? 0o100755 : 0o100644;
      const left = ignored(fromRoot(r), false) || (st.isFile() && st.size > OPENCODE_MAX_UNTRACKED);
      if (left && changedAfter(st, t)) {
        unscanned.push({ path: r, detail: CHANGED_AFTER });
      } else if (ignored(fromRoot(r), false)) {
        files.push({ path: r, kind: 'IGNORED', size: st.size, mode, mtimeMs: st.mtimeMs });
      } else if (st.isFile() && st.size > OPENCODE_MAX_UNTRACKED) {
        let hash: string;
        try { hash = sha256(fs.readFileSync(abs)); } catch { continue; }
        files.push({ path: r, kind: 'OVERSIZE', hash, size: st.size, mode, mtimeMs: st.mtimeMs });
      }
      // Any other file missing from the tree was created after OpenCode's capture (the agent moved on).

    }
  };
  walk('');
  return { files, unscanned };
}

/**
 * The files of the submodules a snapshot tree names (gitlinks), captured from the live worktree the way
 * the reference host captures a worktree (its own ignore rules; ignored paths by metadata): OpenCode's
 * snapshot records only a submodule's commit. Contents are read now (the worktree moves on).
 */
export function captureSubmodules(directory: string, gitlinks: { path: string }[], capturedBefore?: number | null):
  { files: ManifestFile[]; unscanned: { path: string; detail: string }[]; contents: Map<string, Uint8Array> } {
  const files: ManifestFile[] = [];
  const unscanned: { path: string; detail: string }[] = [];
  const contents = new Map<string, Uint8Array>();
  for (const g of gitlinks) {
    const abs = path.join(directory, g.path);
    if (!fs.existsSync(abs)) continue; // not checked out: nothing there
    const cap = new WorktreeCapturer({ maxFiles: 20_000, maxFileBytes: OPENCODE_MAX_UNTRACKED }).capture(abs);
    for (const f of cap.files) {
      const p = g.path ? `${g.path}/${f.path}` : f.path;
      let st: fs.Stats | null = null;
      try { st = fs.lstatSync(path.join(abs, f.path)); } catch { /* gone since */ }
      if (!st || changedAfter(st, capturedBefore)) { unscanned.push({ path: p, detail: `submodule file ${CHANGED_AFTER}` }); continue; }
      if (f.kind === 'FILE' && f.hash) {
        const src = cap.sources.get(f.hash);
        if (!src) continue;
        const data = src.link ? Buffer.from(fs.readlinkSync(src.abs), 'utf8') : fs.readFileSync(src.abs);
        if (sha256(data) !== f.hash) { unscanned.push({ path: p, detail: 'changed while the submodule was being captured' }); continue; }
        contents.set(f.hash, data);
      }
      files.push({ path: p, kind: f.kind as ManifestFile['kind'], hash: f.hash ?? null, size: f.size, mode: f.mode, binary: f.binary ?? undefined,
        mtimeMs: f.mtimeMs ?? null, count: f.count ?? null });
    }
    for (const u of cap.unscanned) unscanned.push({ path: g.path ? `${g.path}/${u.path}` : u.path, detail: `submodule: ${u.detail ?? 'not scanned'}` });
  }
  return { files, unscanned, contents };
}

export interface StepSnapshotOptions {
  /** OpenCode's data directory ($XDG_DATA_HOME of the OpenCode process). */
  dataDir: string;
  /** The session's directory. */
  directory: string;
  /** The step's tree OID (`step-start.snapshot` / `step-finish.snapshot`). */
  tree: string;
  /** Followed live (the worktree is as OpenCode just captured it), or read from history. */
  live: boolean;
  /**
   * A time (ms since the epoch) known to be after OpenCode's capture (the time of the event carrying the
   * tree): paths it left out that were modified after it are reported as unknown, not as observed.
   */
  capturedBefore?: number | null;
}

/**
 * The manifest of one OpenCode step boundary, relative to the session's directory. Throws
 * SnapshotUnavailable with the reason (no snapshot directory for that worktree, which object is missing
 * in which directories) when it cannot be read.
 */
export async function readStepSnapshot(o: StepSnapshotOptions): Promise<TreeManifest> {
  const dirs = findSnapshotDirs(o.dataDir, o.directory);
  if (!dirs.length) {
    throw new SnapshotUnavailable(`no OpenCode snapshot directory for ${o.directory} under ${path.join(o.dataDir, 'opencode', 'snapshot')} (none has core.worktree at or above it; removed, or another data directory?)`);
  }
  let dir: SnapshotDir | null = null;
  let m: Awaited<ReturnType<typeof readSnapshotTree>> | null = null;
  const failures: string[] = [];
  for (const d of dirs) {
    try {
      const store = storeFor(d.gitdir);
      if (dirs.length > 1 && !store.has(o.tree)) { failures.push(`${d.gitdir}: tree ${o.tree} not found`); continue; }
      m = await readSnapshotTree(d.gitdir, o.tree, d.prefix);
      dir = d;
      break;
    } catch (e) {
      if (!(e instanceof GitObjectError)) throw e;
      failures.push(`${d.gitdir}: ${e.detail}`);
    }
  }
  if (!m || !dir) throw new SnapshotUnavailable(`OpenCode snapshot tree ${o.tree} of ${o.directory} could not be read: ${failures.join('; ')}`);
  const manifest: TreeManifest = { files: m.files, unscanned: m.unscanned, content: m.content };
  if (o.live) {
    const sub = captureSubmodules(o.directory, m.gitlinks, o.capturedBefore);
    const left = observeLeftOut(dir.worktree, m, { prefix: dir.prefix, capturedBefore: o.capturedBefore });
    manifest.files.push(...sub.files, ...left.files);
    manifest.unscanned.push(...sub.unscanned, ...left.unscanned);
    const tree = m.content;
    manifest.content = (h) => sub.contents.get(h) ?? tree(h);
  } else {
    // What OpenCode left out then (ignored paths, untracked files over 2 MiB) cannot be observed now,
    // nor the files of a submodule at that time.
    for (const g of m.gitlinks) manifest.unscanned.push({ path: g.path || '.', detail: `submodule at commit ${g.commit}: OpenCode's snapshot records none of its files` });
    manifest.partial = 'OpenCode step read from its history: OpenCode does not capture ignored paths or untracked files over 2 MiB, and what it left out then cannot be observed any more';
  }
  return manifest;
}
