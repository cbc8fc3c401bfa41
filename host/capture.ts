import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { GatewayClient } from '../client/index.js';
import type { SnapshotFileInput, UnscannedInput } from '../client/generated.js';
import { SnapshotUploader, type SnapshotDelta } from './snapshot-upload.js';
import { StatCache } from './stat-cache.js';
import { MODE_LINK, WorktreeWalk, type WalkResult } from './worktree-walk.js';
import { parcelWatcher, WorktreeWatch, type WatchBackend } from './worktree-watch.js';

export type { SnapshotDelta } from './snapshot-upload.js';
export { isBinary } from './worktree-walk.js';

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
 * - With `watch: true`, `scan` (and `snapshot`) keep a filesystem watcher on each worktree
 *   (host/worktree-watch.ts) and re-read only the paths it reports changed since the previous capture
 *   (host/worktree-walk.ts `rescan`: the same entries, in the same order, as a full walk). They walk the
 *   whole worktree whenever the watcher cannot vouch for what it saw: the first capture, a watcher that
 *   reported an error (inotify queue overflow, a directory it could not watch), was stopped or
 *   restarted, did not confirm its sync cookie, an ignore file that changed, a previous capture that
 *   was incomplete (limits, `unscanned`). `stats.mode` says which it was, `stats.walkReason` why.
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
  /** `scan`/`snapshot` keep a filesystem watcher per worktree and re-read only what changed. Default false; `close()` stops them. */
  watch?: boolean;
  /** The watcher (tests inject one that loses events). Default @parcel/watcher. */
  watchBackend?: WatchBackend | null;
}

export interface Capture {
  root: string;
  files: SnapshotFileInput[];
  unscanned: UnscannedInput[];
  /** hash → where its bytes come from (stored files only). */
  sources: Map<string, { abs: string; link: boolean }>;
  stats: {
    files: number; hashed: number; ignoredEntries: number; ms: number;
    /** 'watch': only the paths the watcher reported were read; 'walk': the whole worktree. */
    mode: 'walk' | 'watch';
    /** Why a watching capturer walked (null: it did not, or it does not watch). */
    walkReason: string | null;
  };
}

interface Watched { watch: WorktreeWatch | null; prev: WalkResult | null; why: string | null }

export class WorktreeCapturer {
  private cache = new StatCache();
  /** The upload protocol's state: contents the gateway holds, each session's last snapshot. */
  private uploader: SnapshotUploader;
  private watched = new Map<string, Watched>();
  readonly opts: Required<Omit<CaptureOptions, 'watchBackend'>> & { watchBackend: WatchBackend | null | undefined };

  constructor(opts: CaptureOptions = {}) {
    this.opts = { maxFileBytes: 4 * 1024 * 1024, maxFiles: 100_000, maxIgnoredEntries: 1_000_000, deltas: true, watch: false, watchBackend: undefined, ...opts };
    this.uploader = new SnapshotUploader({ deltas: this.opts.deltas });
  }

  /** A full walk of the worktree (no watcher). */
  capture(root: string): Capture {
    const t0 = performance.now();
    const r = new WorktreeWalk(root, this.opts, this.cache).walk();
    return this.toCapture(root, r, t0, 'walk', null);
  }

  /**
   * The worktree as a full walk would read it now; with `watch`, by re-reading only what the
   * worktree's watcher reports changed since the previous scan, walking whenever it cannot vouch.
   */
  async scan(root: string): Promise<Capture> {
    if (!this.opts.watch) return this.capture(root);
    const t0 = performance.now();
    const key = path.resolve(root);
    let w = this.watched.get(key);
    if (!w) { w = { watch: null, prev: null, why: 'first capture of this worktree' }; this.watched.set(key, w); }
    let why = w.why;
    if (w.watch && w.prev) {
      const d = await w.watch.drain();
      if ('changed' in d) {
        let r: WalkResult | string;
        try { r = new WorktreeWalk(key, this.opts, this.cache).rescan(w.prev, d.changed); } catch (e) { w.prev = null; throw e; }
        if (typeof r !== 'string') { w.prev = r; return this.toCapture(root, r, t0, 'watch', null); }
        why = r;
      } else why = d.lost;
    }
    // A full walk, with a watcher that reports every change from before the walk began on (it is
    // restarted when it cannot vouch; what it reported so far is covered by the walk).
    if (!w.watch?.reset()) {
      await w.watch?.stop().catch(() => {});
      w.watch = null;
      try {
        const backend = this.opts.watchBackend === undefined ? await parcelWatcher() : this.opts.watchBackend;
        if (!backend) throw new Error('none was given (watchBackend: null)');
        w.watch = await WorktreeWatch.start(key, backend);
      } catch (e: any) { w.why = `no watcher: ${e.message}`; }
    }
    let r: WalkResult;
    try { r = new WorktreeWalk(key, this.opts, this.cache).walk(); } catch (e) { w.prev = null; throw e; }
    w.prev = w.watch && !r.stopped && r.unscanned.length === 0 ? r : null;
    if (w.watch) w.why = w.prev ? null : 'the previous capture was incomplete (a limit was reached)';
    return this.toCapture(root, r, t0, 'walk', why);
  }

  private toCapture(root: string, r: WalkResult, t0: number, mode: 'walk' | 'watch', walkReason: string | null): Capture {
    const sources = new Map<string, { abs: string; link: boolean }>();
    for (const f of r.files) if (f.kind === 'FILE') sources.set(f.hash!, { abs: path.join(root, f.path), link: f.mode === MODE_LINK });
    return { root, files: r.files, unscanned: r.unscanned, sources, stats: { ...r.stats, ms: performance.now() - t0, mode, walkReason } };
  }

  /** Stops watching `root` (every worktree when omitted): its next scan walks it. */
  async close(root?: string): Promise<void> {
    const keys = root ? [path.resolve(root)] : [...this.watched.keys()];
    for (const k of keys) {
      const w = this.watched.get(k);
      this.watched.delete(k);
      await w?.watch?.stop();
    }
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
    const cap = await this.scan(root);
    const r = await this.upload(client, sessionID, cap, hostID);
    return { ...r, capture: cap };
  }
}
