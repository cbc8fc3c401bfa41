import type { Stats } from 'node:fs';

/** Cached hashes of files modified this close to the caching moment are not trusted (racy clean). */
export const RACY_MS = 2_000;

export interface CachedHash { size: number; mtimeMs: number; ctimeMs: number; ino: number; hash: string; binary: boolean; at: number }

/**
 * Path → content hash, valid while the file's (size, mtime, ctime, inode) are unchanged, like git's
 * index: a capture reads only files whose stat changed. A file modified within RACY_MS of its caching
 * is read again (a write in the same timestamp tick would otherwise go unseen).
 */
export class StatCache {
  private map = new Map<string, CachedHash>();

  get(rel: string, st: Stats): CachedHash | null {
    const c = this.map.get(rel);
    if (!c) return null;
    if (c.size !== st.size || c.mtimeMs !== st.mtimeMs || c.ctimeMs !== st.ctimeMs || c.ino !== st.ino) return null;
    if (c.at - st.mtimeMs < RACY_MS) return null;
    return c;
  }

  set(rel: string, st: Stats, hash: string, binary: boolean): void {
    this.map.set(rel, { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, hash, binary, at: Date.now() });
  }

  delete(rel: string): void { this.map.delete(rel); }

  /** Drops the entries of paths not in `seen` (after a complete walk). */
  prune(seen: Set<string>): void {
    for (const k of this.map.keys()) if (!seen.has(k)) this.map.delete(k);
  }
}
