import { existsSync, lstatSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { COOKIE_PREFIX } from './worktree-walk.js';

/**
 * A filesystem watcher over one worktree (@parcel/watcher: inotify on Linux), for the capturer: it
 * collects the paths that changed since the last capture, and says when it cannot vouch for what it
 * saw. It vouches only with a binding that reports lost events (the patched local build:
 * patches/@parcel+watcher+*.patch reports inotify queue overflows and directories it failed to watch as
 * errors; the prebuilt binary drops both silently) and only while no error was reported since it
 * started.
 *
 * `drain` is the barrier a capture needs (as git's fsmonitor and watchman do it): it writes a cookie
 * file and waits for the watcher to report it; the kernel queues events in order, so every change made
 * before the cookie has then been delivered. The cookie goes in the worktree's .git directory when it has
 * one (never captured), else at its top as `.gw-capture-cookie-*` (which the walk skips).
 */
export interface WatchEvent { path: string; type: 'create' | 'update' | 'delete' }
export interface WatchSubscription { unsubscribe(): Promise<void> }
export interface WatchBackend {
  /** The binding reports lost events (overflow, a failed watch) as errors: without it nothing is vouched. */
  reportsLostEvents: boolean;
  subscribe(dir: string, fn: (err: Error | null, events: WatchEvent[]) => unknown, opts?: { ignore?: string[] }): Promise<WatchSubscription>;
}

let parcel: Promise<WatchBackend | null> | null = null;
/** @parcel/watcher, or null when it cannot be loaded on this machine. */
export function parcelWatcher(): Promise<WatchBackend | null> {
  parcel ??= import('@parcel/watcher').then((m: any) => (m.default ?? m) as WatchBackend, () => null);
  return parcel;
}

/** Changed paths kept between two captures; past this a full walk is cheaper than the bookkeeping. */
const MAX_CHANGED = 20_000;
/** How long a capture waits for its cookie before it stops trusting the watcher. */
const COOKIE_TIMEOUT_MS = 10_000;

export type Drained = { changed: Set<string> } | { lost: string };

export class WorktreeWatch {
  private changed = new Set<string>();
  private lost: string | null = null;
  private waiters = new Map<string, () => void>();
  private seq = 0;
  private sub: WatchSubscription | null = null;
  private readonly prefix: string;
  private readonly cookieDir: string;

  private constructor(readonly root: string) {
    this.prefix = root.endsWith(path.sep) ? root : root + path.sep;
    let gitDir = false;
    try { gitDir = lstatSync(path.join(root, '.git')).isDirectory(); } catch { /* none */ }
    this.cookieDir = gitDir ? path.join(root, '.git') : root;
  }

  /** Starts watching `root` (an absolute path); every change after this resolves is reported or vouched against. */
  static async start(root: string, backend: WatchBackend): Promise<WorktreeWatch> {
    if (!backend.reportsLostEvents) throw new Error('this @parcel/watcher binding does not report lost events (the patched build is missing)');
    const w = new WorktreeWatch(root);
    const git = w.cookieDir !== root;
    // Inside .git only the cookies matter: the object store, refs and logs are not watched.
    const ignore = git ? ['objects', 'refs', 'logs', 'modules', 'worktrees', 'lfs', 'hooks'].map((d) => path.join('.git', d)) : [];
    w.sub = await backend.subscribe(root, (err, events) => w.onEvents(err, events), { ignore });
    return w;
  }

  private onEvents(err: Error | null, events: WatchEvent[]) {
    if (err) this.lost ??= `the watcher reported an error: ${err.message}`;
    for (const e of events) {
      const p = e.path;
      const waiter = this.waiters.get(p);
      if (waiter) { if (e.type !== 'delete') waiter(); continue; }
      if (p === this.root) { this.lost ??= 'the worktree itself was removed or replaced'; continue; }
      if (!p.startsWith(this.prefix)) continue;
      if (path.dirname(p) === this.cookieDir && path.basename(p).startsWith(COOKIE_PREFIX)) continue;
      this.changed.add(p.slice(this.prefix.length).split(path.sep).join('/'));
    }
    if (this.changed.size > MAX_CHANGED) { this.lost ??= `more than ${MAX_CHANGED} paths changed since the last capture`; this.changed.clear(); }
  }

  /** Once every change made before this call has been reported: the paths changed since the last drain, or why the watcher cannot vouch. */
  async drain(timeoutMs = COOKIE_TIMEOUT_MS): Promise<Drained> {
    if (this.lost || !this.sub) return { lost: this.lost ?? 'the watcher is stopped' };
    const cookie = path.join(this.cookieDir, `${COOKIE_PREFIX}${process.pid}-${++this.seq}`);
    let timer: NodeJS.Timeout | undefined;
    const seen = new Promise<boolean>((resolve) => {
      this.waiters.set(cookie, () => resolve(true));
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      try { writeFileSync(cookie, ''); } catch (e: any) { return { lost: `cannot write the watcher's sync cookie: ${e.message}` }; }
      if (!(await seen)) this.lost ??= `the watcher did not report its sync cookie within ${timeoutMs} ms`;
    } finally {
      clearTimeout(timer);
      this.waiters.delete(cookie);
      try { if (existsSync(cookie)) unlinkSync(cookie); } catch { /* already gone */ }
    }
    if (this.lost) return { lost: this.lost };
    const changed = this.changed;
    this.changed = new Set();
    return { changed };
  }

  /** Before a full walk: forgets the changes reported so far; false when the watcher cannot vouch (restart it). */
  reset(): boolean {
    if (this.lost || !this.sub) return false;
    this.changed.clear();
    return true;
  }

  /** The watcher cannot vouch from now on (an error seen by its user). */
  invalidate(why: string): void { this.lost ??= why; }

  async stop(): Promise<void> {
    const sub = this.sub;
    this.sub = null;
    this.lost ??= 'the watcher is stopped';
    await sub?.unsubscribe();
  }
}
