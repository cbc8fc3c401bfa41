import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readFileSync, readSync, readdirSync, readlinkSync, type Dirent, type Stats } from 'node:fs';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import type { SnapshotFileInput, UnscannedInput } from '../client/generated.js';
import type { StatCache } from './stat-cache.js';

/**
 * The walk of a worktree (see host/capture.ts): ignore rules (.gitignore at every level,
 * .git/info/exclude, with the `ignore` library), stored files hashed through the stat cache, ignored
 * files by metadata, ignored directories as one fingerprint entry, the file-count limit. `walk` visits
 * everything; `rescan` re-reads only given paths of a previous complete walk and returns exactly what a
 * full walk would (same entries, same order), for a watcher that vouches the other paths are unchanged.
 */
export interface WalkLimits { maxFileBytes: number; maxFiles: number; maxIgnoredEntries: number }

export interface WalkResult {
  files: SnapshotFileInput[];
  unscanned: UnscannedInput[];
  stats: { files: number; hashed: number; ignoredEntries: number };
  /** Directories visited (not ignored), relative; with `files`, what the file-count limit counts. */
  dirs: Set<string>;
  /** The file-count limit stopped the walk (some entries are in `unscanned`). */
  stopped: boolean;
}

export const MODE_FILE = 0o100644;
export const MODE_EXEC = 0o100755;
export const MODE_LINK = 0o120000;
export const MODE_DIR = 0o040000;

/** Names the capturer's watcher uses for its sync cookies at the top of a worktree without a .git directory. */
export const COOKIE_PREFIX = '.gw-capture-cookie-';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
export function isBinary(data: Uint8Array): boolean {
  const probe = Math.min(data.length, 8000);
  for (let i = 0; i < probe; i++) if (data[i] === 0) return true;
  try { utf8.decode(data); return false; } catch { return true; }
}

export const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

function hashFileStreaming(abs: string): string {
  const h = createHash('sha256');
  const fd = openSync(abs, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) break;
      h.update(buf.subarray(0, n));
    }
  } finally { closeSync(fd); }
  return h.digest('hex');
}

interface Level { base: string; ig: Ignore }

function readIgnoreFile(file: string): string | null {
  try { return readFileSync(file, 'utf8'); } catch { return null; }
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** The walk's order: depth first, names in code-unit order within a directory ("a/x" before "a.txt"). */
export function walkOrder(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x === y) continue;
    if (x === 47) return -1;
    if (y === 47) return 1;
    return x - y;
  }
  return a.length - b.length;
}

const parentOf = (rel: string) => { const i = rel.lastIndexOf('/'); return i < 0 ? '' : rel.slice(0, i); };

export class WorktreeWalk {
  private files: SnapshotFileInput[] = [];
  private unscanned: UnscannedInput[] = [];
  private stats = { files: 0, hashed: 0, ignoredEntries: 0 };
  private dirs = new Set<string>();
  private seen = new Set<string>();
  private scanned = 0;
  private stopped = false;
  private rootIg: Ignore;
  /** Ignore levels in force inside a directory (rescan: built from the root down, once per directory). */
  private levelsOf = new Map<string, Level[]>();

  constructor(private root: string, private limits: WalkLimits, private cache: StatCache) {
    this.rootIg = ignore();
    const exclude = readIgnoreFile(path.join(root, '.git', 'info', 'exclude'));
    if (exclude) this.rootIg.add(exclude);
  }

  /** The whole worktree. */
  walk(): WalkResult {
    this.visit(this.root, '', []);
    if (!this.stopped) this.cache.prune(this.seen);
    return this.result(this.files);
  }

  /**
   * What `walk` would return now, given a previous complete walk (`prev`, not stopped, nothing
   * unscanned) and every path that may have changed since (`changed`, relative; anything else is
   * unchanged). A string (why) when only a full walk can tell: an ignore file changed, the file-count
   * limit is reached, an ignored directory grew past its limit.
   */
  rescan(prev: WalkResult, changed: Iterable<string>): WalkResult | string {
    const kinds = new Map<string, SnapshotFileInput>();
    for (const f of prev.files) if (f.kind === 'IGNORED_DIR') kinds.set(f.path, f);
    // Each changed path, or the ignored directory that holds it (its fingerprint is taken again).
    const targets = new Set<string>();
    for (const rel of changed) {
      if (rel === '' || rel === '.gitignore' || rel.endsWith('/.gitignore') || rel === '.git' || rel === '.git/info' || rel === '.git/info/exclude') return `an ignore file changed (${rel || 'the worktree itself'})`;
      if (rel === '.git' || rel.startsWith('.git/') || rel.includes('/.git/') || rel.endsWith('/.git') || rel.startsWith(COOKIE_PREFIX)) continue; // never walked
      let t = rel;
      for (let i = rel.indexOf('/'); i >= 0; i = rel.indexOf('/', i + 1)) {
        const a = rel.slice(0, i);
        if (kinds.has(a)) { t = a; break; }
      }
      targets.add(t);
    }
    // Shallow first; a target under one re-read as a directory is covered by it.
    const order = [...targets].sort((a, b) => a.split('/').length - b.split('/').length || walkOrder(a, b));
    const gone = new Set<string>();
    const goneDirs: string[] = [];
    const added: SnapshotFileInput[] = [];
    const dirs = new Set(prev.dirs);
    this.files = added;
    for (const t of order) {
      if (goneDirs.some((d) => t.startsWith(d + '/'))) continue;
      gone.add(t);
      if (dirs.has(t) || kinds.has(t)) {
        goneDirs.push(t);
        for (const d of dirs) if (d === t || d.startsWith(t + '/')) dirs.delete(d);
      }
      const parent = parentOf(t);
      if (parent !== '' && !dirs.has(parent)) continue; // its directory is gone (or ignored): nothing there
      const abs = path.join(this.root, t);
      let st: Stats;
      try { st = lstatSync(abs); } catch { continue; }
      const isDir = st.isDirectory();
      if (isDir) goneDirs.push(t);
      this.entry(t, abs, st, this.levelsFor(parent));
      if (this.unscanned.length || this.stopped) return `a limit was reached under ${t}`;
    }
    for (const d of this.dirs) dirs.add(d);
    added.sort((a, b) => walkOrder(a.path, b.path));
    const prefixes = goneDirs.map((d) => d + '/');
    const kept = prev.files.filter((f) => {
      if (gone.has(f.path) || (prefixes.length && prefixes.some((p) => f.path.startsWith(p)))) {
        if (!this.seen.has(f.path)) this.cache.delete(f.path);
        return false;
      }
      return true;
    });
    const files = merge(kept, added);
    if (files.length + dirs.size > this.limits.maxFiles) return `the file-count limit of ${this.limits.maxFiles} is reached`;
    this.dirs = dirs;
    const r = this.result(files);
    r.stats.files = 0; r.stats.ignoredEntries = 0;
    for (const f of files) {
      if (f.kind === 'FILE') r.stats.files++;
      else if (f.kind === 'IGNORED_DIR') r.stats.ignoredEntries += f.count ?? 0;
    }
    return r;
  }

  private result(files: SnapshotFileInput[]): WalkResult {
    return { files, unscanned: this.unscanned, stats: { ...this.stats }, dirs: this.dirs, stopped: this.stopped };
  }

  private levelsFor(dirRel: string): Level[] {
    const known = this.levelsOf.get(dirRel);
    if (known) return known;
    let levels: Level[];
    if (dirRel === '') {
      const gi = readIgnoreFile(path.join(this.root, '.gitignore'));
      if (gi) this.rootIg.add(gi);
      levels = [{ base: '', ig: this.rootIg }];
    } else {
      levels = this.levelsFor(parentOf(dirRel));
      const gi = readIgnoreFile(path.join(this.root, dirRel, '.gitignore'));
      if (gi) levels = [...levels, { base: dirRel, ig: ignore().add(gi) }];
    }
    this.levelsOf.set(dirRel, levels);
    return levels;
  }

  private ignoredBy(levels: Level[], rel: string, dir: boolean): boolean {
    let state = false;
    for (const l of levels) {
      const sub = l.base === '' ? rel : rel.slice(l.base.length + 1);
      let r: { ignored: boolean; unignored: boolean };
      try { r = l.ig.test(dir ? sub + '/' : sub); } catch { continue; } // names the library refuses (e.g. "...")
      if (r.ignored) state = true;
      else if (r.unignored) state = false;
    }
    return state;
  }

  private record(rel: string, abs: string, st: Stats) {
    const link = st.isSymbolicLink();
    const mode = link ? MODE_LINK : st.mode & 0o111 ? MODE_EXEC : MODE_FILE;
    if (!link && st.size > this.limits.maxFileBytes) {
      const cached = this.cache.get(rel, st);
      const hash = cached?.hash ?? hashFileStreaming(abs);
      if (!cached) { this.stats.hashed++; this.cache.set(rel, st, hash, false); }
      this.files.push({ path: rel, kind: 'OVERSIZE', hash, size: st.size, mode, binary: cached?.binary ?? false });
      return;
    }
    let hash: string;
    let binary: boolean;
    let size = st.size;
    if (link) {
      const data = Buffer.from(readlinkSync(abs), 'utf8');
      hash = sha256(data);
      binary = false;
      size = data.length;
    } else {
      const cached = this.cache.get(rel, st);
      if (cached) ({ hash, binary } = cached);
      else {
        const data = readFileSync(abs);
        hash = sha256(data);
        binary = isBinary(data);
        size = data.length;
        this.stats.hashed++;
        this.cache.set(rel, st, hash, binary);
      }
    }
    this.files.push({ path: rel, kind: 'FILE', hash, size, mode, binary });
    this.stats.files++;
  }

  private fingerprint(abs: string, rel: string): { hash: string; count: number; size: number } | null {
    const h = createHash('sha256');
    let count = 0;
    let size = 0;
    const walk = (dirAbs: string, dirRel: string): boolean => {
      let entries;
      try { entries = readdirSync(dirAbs, { withFileTypes: true }); } catch { return true; }
      entries.sort(byName);
      for (const e of entries) {
        if (++count > this.limits.maxIgnoredEntries) return false;
        const a = path.join(dirAbs, e.name);
        const r = dirRel + '/' + e.name;
        if (e.isDirectory()) {
          h.update(`${r}/\n`);
          if (!walk(a, r)) return false;
        } else {
          let st: Stats;
          try { st = lstatSync(a); } catch { continue; }
          size += st.size;
          h.update(`${r}\0${st.size}\0${st.mtimeMs}\0${st.mode}\0${st.ino}\n`);
        }
      }
      return true;
    };
    if (!walk(abs, rel)) return null;
    this.stats.ignoredEntries += count;
    return { hash: h.digest('hex'), count, size };
  }

  /** One entry of a directory whose ignore levels are `levels`: recorded, fingerprinted or visited. */
  private entry(rel: string, abs: string, st: Stats, levels: Level[]) {
    const isDir = st.isDirectory();
    if (!isDir && !st.isFile() && !st.isSymbolicLink()) return;
    this.scanned++;
    if (this.ignoredBy(levels, rel, isDir)) {
      if (isDir) {
        const fp = this.fingerprint(abs, rel);
        if (fp) this.files.push({ path: rel, kind: 'IGNORED_DIR', hash: fp.hash, size: fp.size, mode: MODE_DIR, count: fp.count });
        else this.unscanned.push({ path: rel, detail: `ignored directory with more than ${this.limits.maxIgnoredEntries} entries` });
      } else {
        const mode = st.isSymbolicLink() ? MODE_LINK : st.mode & 0o111 ? MODE_EXEC : MODE_FILE;
        this.files.push({ path: rel, kind: 'IGNORED', size: st.size, mode, mtimeMs: st.mtimeMs });
      }
      return;
    }
    if (isDir) { this.dirs.add(rel); this.visit(abs, rel, levels); }
    else this.record(rel, abs, st);
    this.seen.add(rel);
  }

  private visit(dirAbs: string, dirRel: string, outer: Level[]) {
    let levels = outer;
    if (dirRel === '') levels = this.levelsFor('');
    else {
      const gi = readIgnoreFile(path.join(dirAbs, '.gitignore'));
      if (gi) levels = [...outer, { base: dirRel, ig: ignore().add(gi) }];
    }
    let entries: Dirent[];
    try { entries = readdirSync(dirAbs, { withFileTypes: true }); } catch { entries = []; }
    entries.sort(byName);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (e.name === '.git' || (dirRel === '' && e.name.startsWith(COOKIE_PREFIX))) continue;
      const rel = dirRel === '' ? e.name : `${dirRel}/${e.name}`;
      if (this.stopped || this.scanned >= this.limits.maxFiles) {
        if (!this.stopped) this.stopped = true;
        const rest = entries.slice(i).filter((x) => x.name !== '.git');
        if (rest.length > 32 && dirRel !== '') {
          this.unscanned.push({ path: dirRel, detail: `file-count limit of ${this.limits.maxFiles} reached inside this directory` });
        } else {
          for (const x of rest) {
            this.unscanned.push({ path: dirRel === '' ? x.name : `${dirRel}/${x.name}`, detail: `file-count limit of ${this.limits.maxFiles} reached` });
          }
        }
        break;
      }
      const abs = path.join(dirAbs, e.name);
      let st: Stats;
      try { st = lstatSync(abs); } catch { continue; }
      this.entry(rel, abs, st, levels);
    }
  }
}

/** Two lists each in walk order, merged (no path in both). */
function merge(a: SnapshotFileInput[], b: SnapshotFileInput[]): SnapshotFileInput[] {
  if (!b.length) return a;
  const out: SnapshotFileInput[] = new Array(a.length + b.length);
  let i = 0, j = 0, k = 0;
  while (i < a.length && j < b.length) out[k++] = walkOrder(a[i].path, b[j].path) <= 0 ? a[i++] : b[j++];
  while (i < a.length) out[k++] = a[i++];
  while (j < b.length) out[k++] = b[j++];
  return out;
}
