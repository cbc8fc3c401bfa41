// Paths as a hooks-driven host checks them, and a turn boundary's capture of the worktree (the reference
// host's capture, host/capture.ts: a snapshot uploaded to the gateway, or why none could be taken).
import fs from 'node:fs';
import path from 'node:path';
import type { WorktreeCapturer } from '../../host/capture.js';
import type { Gateway } from '../common/gateway.js';
import { bridgeTransport } from '../common/gateway.js';

/** The repository's top level (nearest directory with `.git`), else the directory itself. */
export function worktreeRoot(dir: string): string {
  let d = path.resolve(dir);
  for (;;) {
    if (fs.existsSync(path.join(d, '.git'))) return d;
    const up = path.dirname(d);
    if (up === d) return path.resolve(dir);
    d = up;
  }
}

/** The path with its symbolic links resolved (as far as it exists; the rest as given). */
export function real(p: string): string {
  const abs = path.resolve(p);
  try { return fs.realpathSync(abs); } catch { /* not there (yet) */ }
  try { return path.join(fs.realpathSync(path.dirname(abs)), path.basename(abs)); } catch { return abs; }
}

/** Whether `p` is `dir` or inside it. */
export function inside(p: string, dir: string): boolean {
  const r = path.relative(dir, p);
  return r === '' || (r !== '..' && !r.startsWith(`..${path.sep}`) && !path.isAbsolute(r));
}

/** A boundary snapshot of the worktree holding `cwd`: its ID, or why it could not be taken (the execution says so). */
export async function captureBoundary(capturer: WorktreeCapturer, gw: Gateway, sessionID: string, cwd: string, hostID: string | null,
  log: (m: string) => void): Promise<{ id: string } | { error: string }> {
  try {
    const r = await capturer.snapshot(bridgeTransport(gw) as any, sessionID, worktreeRoot(cwd), hostID as any);
    return { id: r.id };
  } catch (e: any) {
    log(`capture ${cwd}: ${e?.message ?? e}`);
    return { error: String(e?.message ?? e).slice(0, 1_000) };
  }
}

/** The boundary fields of beginExecution / settleExecution for a capture. */
export const boundaryInput = (which: 'start' | 'end', c: { id: string } | { error: string }) =>
  ('id' in c ? { [`${which}Snapshot`]: c.id } : { [`${which}CaptureError`]: c.error });
