import { spawn } from 'node:child_process';
import { existsSync, lstatSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_DIR } from '../db/index.js';
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

/** The patched build of @parcel/watcher, compiled on first use (bin/build-watcher.mjs). */
const BUILD_SCRIPT = path.join(PROJECT_DIR, 'bin', 'build-watcher.mjs');
interface PatchedBuild {
  /** Whether the patched build is in place, else why not, after starting a build in the background when none is under way. */
  startPatchedWatcherBuild(): { ready: boolean; why: string | null };
}
let patchedBuild: Promise<PatchedBuild> | null = null;
let parcel: Promise<WatchBackend> | null = null;

/**
 * @parcel/watcher, loaded once its patched build is in place (on Linux; elsewhere the prebuilt binary, which
 * reports no lost events, so nothing is watched). Until then it rejects saying why (the build is under way,
 * or failed), having started the build in the background on the first call: the capturer walks meanwhile
 * and asks again at its next walk. The module is never loaded before the build is in place, since Node
 * would keep the prebuilt binary it fell back to for the life of the process.
 */
export async function parcelWatcher(): Promise<WatchBackend> {
  if (!parcel && process.platform === 'linux') {
    const build = await (patchedBuild ??= import(pathToFileURL(BUILD_SCRIPT).href) as Promise<PatchedBuild>);
    const state = build.startPatchedWatcherBuild();
    if (!state.ready) throw new Error(state.why ?? 'the patched @parcel/watcher is not built');
  }
  parcel ??= import('@parcel/watcher').then((m: any) => (m.default ?? m) as WatchBackend,
    (e: Error) => { throw new Error(`@parcel/watcher cannot be loaded here: ${e.message}`); });
  return parcel;
}

/**
 * Builds the patched @parcel/watcher now unless it is in place, waiting for a build under way (for what
 * needs the watcher rather than a walk: its tests, the capture bench). Rejects with the build's last words.
 */
export function buildPatchedWatcher(): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [BUILD_SCRIPT], { cwd: PROJECT_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { out += d; });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bin/build-watcher.mjs exited with ${code}: ${out.trim()}`))));
  });
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
