import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readFileSync, readSync, readdirSync, readlinkSync, type Dirent, type Stats } from 'node:fs';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import type { GatewayClient } from '../client/index.js';
import type { SnapshotFileInput, UnscannedInput } from '../client/generated.js';
import { SnapshotUploader, type SnapshotDelta } from './snapshot-upload.js';

export type { SnapshotDelta } from './snapshot-upload.js';

/**
 * Worktree capture for the reference host: walks a worktree and produces a snapshot manifest (path,
 * content hash, size, mode, binary flag), then uploads only the contents the gateway lacks and the
 * manifest. Never runs git: ignore rules (.gitignore at every level, .git/info/exclude) are applied
 * with the `ignore` library.
 *
 * - Ignored files are recorded by metadata only (size, mtime, mode): a change is detected, no content stored.
 * - An ignored directory (node_modules) is one entry whose fingerprint is a hash of its entries'
 *   metadata (one lstat per entry, no reads), so a change inside it is still detected, cheaply.
 * - Files over `maxFileBytes` are recorded with size and hash (streamed), not uploaded.
 * - At `maxFiles` entries the walk stops; the subtrees not scanned are listed in `unscanned`.
 * - A capturer remembers (size, mtime, ctime, inode) → hash per path, like git's index, so a warm
 *   capture reads only files that changed; and the hashes the gateway confirmed, so an unchanged
 *   worktree uploads nothing and asks nothing about contents.
 * - Uploading is the shared protocol of `host/snapshot-upload.ts` (missing contents, 8 MiB batches,
 *   the manifest as a delta against the session's last snapshot, whole when the base is refused): a
 *   warm capture of an unchanged 10,000-file worktree sends no entries instead of a ~1.5 MB manifest.
 */
export interface CaptureOptions {
  /** Files larger than this are recorded as OVERSIZE (hash and size only). Default 4 MiB. */
  maxFileBytes?: number;
  /** Entries scanned (files, ignored files, ignored directories) before the walk stops. Default 100,000. */
  maxFiles?: number;
  /** Entries an ignored directory's fingerprint may cover; beyond, it is reported as not scanned. Default 1,000,000. */
  maxIgnoredEntries?: number;
  /** Send manifests as deltas against the session's last snapshot made by this capturer. Default true. */
  deltas?: boolean;
}

export interface Capture {
  root: string;
  files: SnapshotFileInput[];
  unscanned: UnscannedInput[];
  /** hash → where its bytes come from (stored files only). */
  sources: Map<string, { abs: string; link: boolean }>;
  stats: { files: number; hashed: number; ignoredEntries: number; ms: number };
}

const MODE_FILE = 0o100644;
const MODE_EXEC = 0o100755;
const MODE_LINK = 0o120000;
const MODE_DIR = 0o040000;

/** Cached hashes of files modified this close to the caching moment are not trusted (racy clean). */
const RACY_MS = 2_000;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
export function isBinary(data: Uint8Array): boolean {
  const probe = Math.min(data.length, 8000);
  for (let i = 0; i < probe; i++) if (data[i] === 0) return true;
  try { utf8.decode(data); return false; } catch { return true; }
}

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

export class WorktreeCapturer {
  private cache = new Map<string, { size: number; mtimeMs: number; ctimeMs: number; ino: number; hash: string; binary: boolean; at: number }>();
  /** The upload protocol's state: contents the gateway holds, each session's last snapshot. */
  private uploader: SnapshotUploader;
  readonly opts: Required<CaptureOptions>;

  constructor(opts: CaptureOptions = {}) {
    this.opts = { maxFileBytes: 4 * 1024 * 1024, maxFiles: 100_000, maxIgnoredEntries: 1_000_000, deltas: true, ...opts };
    this.uploader = new SnapshotUploader({ deltas: this.opts.deltas });
  }

  capture(root: string): Capture {
    const t0 = performance.now();
    const files: SnapshotFileInput[] = [];
    const unscanned: UnscannedInput[] = [];
    const sources = new Map<string, { abs: string; link: boolean }>();
    const stats = { files: 0, hashed: 0, ignoredEntries: 0, ms: 0 };
    const seen = new Set<string>();
    let scanned = 0;
    let stopped = false;

    const levels: Level[] = [];
    const rootIg = ignore();
    const exclude = readIgnoreFile(path.join(root, '.git', 'info', 'exclude'));
    if (exclude) rootIg.add(exclude);

    const ignoredBy = (rel: string, dir: boolean): boolean => {
      let state = false;
      for (const l of levels) {
        const sub = l.base === '' ? rel : rel.slice(l.base.length + 1);
        let r: { ignored: boolean; unignored: boolean };
        try { r = l.ig.test(dir ? sub + '/' : sub); } catch { continue; } // names the library refuses (e.g. "...")
        if (r.ignored) state = true;
        else if (r.unignored) state = false;
      }
      return state;
    };

    const record = (rel: string, abs: string, st: Stats) => {
      const link = st.isSymbolicLink();
      const mode = link ? MODE_LINK : st.mode & 0o111 ? MODE_EXEC : MODE_FILE;
      if (!link && st.size > this.opts.maxFileBytes) {
        const cached = this.cached(rel, st);
        const hash = cached?.hash ?? hashFileStreaming(abs);
        if (!cached) { stats.hashed++; this.remember(rel, st, hash, false); }
        files.push({ path: rel, kind: 'OVERSIZE', hash, size: st.size, mode, binary: cached?.binary ?? false });
        return;
      }
      let hash: string;
      let binary: boolean;
      let size = st.size;
      if (link) {
        const data = Buffer.from(readlinkSync(abs), 'utf8');
        hash = createHash('sha256').update(data).digest('hex');
        binary = false;
        size = data.length;
      } else {
        const cached = this.cached(rel, st);
        if (cached) ({ hash, binary } = cached);
        else {
          const data = readFileSync(abs);
          hash = createHash('sha256').update(data).digest('hex');
          binary = isBinary(data);
          size = data.length;
          stats.hashed++;
          this.remember(rel, st, hash, binary);
        }
      }
      sources.set(hash, { abs, link });
      files.push({ path: rel, kind: 'FILE', hash, size, mode, binary });
      stats.files++;
    };

    const fingerprint = (abs: string, rel: string): { hash: string; count: number; size: number } | null => {
      const h = createHash('sha256');
      let count = 0;
      let size = 0;
      const walk = (dirAbs: string, dirRel: string): boolean => {
        let entries;
        try { entries = readdirSync(dirAbs, { withFileTypes: true }); } catch { return true; }
        entries.sort(byName);
        for (const e of entries) {
          if (++count > this.opts.maxIgnoredEntries) return false;
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
      stats.ignoredEntries += count;
      return { hash: h.digest('hex'), count, size };
    };

    const visit = (dirAbs: string, dirRel: string) => {
      const gi = readIgnoreFile(path.join(dirAbs, '.gitignore'));
      const ig = dirRel === '' ? rootIg : gi ? ignore() : null;
      if (ig && gi) ig.add(gi);
      if (ig) levels.push({ base: dirRel, ig });
      let entries: Dirent[];
      try { entries = readdirSync(dirAbs, { withFileTypes: true }); } catch { entries = []; }
      entries.sort(byName);
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i];
        if (e.name === '.git') continue;
        const rel = dirRel === '' ? e.name : `${dirRel}/${e.name}`;
        if (stopped || scanned >= this.opts.maxFiles) {
          if (!stopped) stopped = true;
          const rest = entries.slice(i).filter((x) => x.name !== '.git');
          if (rest.length > 32 && dirRel !== '') {
            unscanned.push({ path: dirRel, detail: `file-count limit of ${this.opts.maxFiles} reached inside this directory` });
          } else {
            for (const x of rest) {
              unscanned.push({ path: dirRel === '' ? x.name : `${dirRel}/${x.name}`, detail: `file-count limit of ${this.opts.maxFiles} reached` });
            }
          }
          break;
        }
        const abs = path.join(dirAbs, e.name);
        let st: Stats;
        try { st = lstatSync(abs); } catch { continue; }
        const isDir = st.isDirectory();
        if (!isDir && !st.isFile() && !st.isSymbolicLink()) continue;
        scanned++;
        if (ignoredBy(rel, isDir)) {
          if (isDir) {
            const fp = fingerprint(abs, rel);
            if (fp) files.push({ path: rel, kind: 'IGNORED_DIR', hash: fp.hash, size: fp.size, mode: MODE_DIR, count: fp.count });
            else unscanned.push({ path: rel, detail: `ignored directory with more than ${this.opts.maxIgnoredEntries} entries` });
          } else {
            const mode = st.isSymbolicLink() ? MODE_LINK : st.mode & 0o111 ? MODE_EXEC : MODE_FILE;
            files.push({ path: rel, kind: 'IGNORED', size: st.size, mode, mtimeMs: st.mtimeMs });
          }
          continue;
        }
        if (isDir) visit(abs, rel);
        else record(rel, abs, st);
        seen.add(rel);
      }
      if (ig) levels.pop();
    };

    visit(root, '');
    // Drop cache entries of paths that no longer exist.
    if (!stopped) for (const k of this.cache.keys()) if (!seen.has(k)) this.cache.delete(k);
    stats.ms = performance.now() - t0;
    return { root, files, unscanned, sources, stats };
  }

  private cached(rel: string, st: Stats) {
    const c = this.cache.get(rel);
    if (!c) return null;
    if (c.size !== st.size || c.mtimeMs !== st.mtimeMs || c.ctimeMs !== st.ctimeMs || c.ino !== st.ino) return null;
    if (c.at - st.mtimeMs < RACY_MS) return null;
    return c;
  }

  private remember(rel: string, st: Stats, hash: string, binary: boolean) {
    this.cache.set(rel, { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, hash, binary, at: Date.now() });
  }

  /** Forget what the gateway is known to hold (after it reports a content missing). */
  forgetKnown(): void { this.uploader.forgetKnown(); }

  /** Forget the session's last snapshot: its next manifest is sent whole. */
  forgetBase(sessionID: string): void { this.uploader.forgetBase(sessionID); }

  /**
   * Uploads the contents the gateway lacks, then the manifest (a delta when this capturer made a
   * snapshot of the session before; see host/snapshot-upload.ts); returns the Snapshot. `uploaded`
   * counts the contents sent in this call (0 for an unchanged worktree); `delta` says what a delta
   * sent (null: the whole manifest was sent).
   */
  async upload(client: GatewayClient, sessionID: string, cap: Capture, hostID?: string | null):
    Promise<{ id: string; fileCount: number; byteSize: number; uploaded: number; uploadedBytes: number; delta: SnapshotDelta | null }> {
    return this.uploader.upload(client, {
      sessionID, hostID, files: cap.files, unscanned: cap.unscanned,
      content: (h) => {
        const src = cap.sources.get(h);
        if (!src) throw new Error(`capture: no source for content ${h}`);
        const data = src.link ? Buffer.from(readlinkSync(src.abs), 'utf8') : readFileSync(src.abs);
        if (createHash('sha256').update(data).digest('hex') !== h) {
          throw new Error(`capture: ${src.abs} changed while it was being captured; capture again`);
        }
        return data;
      },
    });
  }

  /** Capture and upload in one step. */
  async snapshot(client: GatewayClient, sessionID: string, root: string, hostID?: string | null) {
    const cap = this.capture(root);
    const r = await this.upload(client, sessionID, cap, hostID);
    return { ...r, capture: cap };
  }
}
