import { diffArrays } from 'diff';
import type { Db, Sql, Tx } from '../db/connection.js';
import type { ExecutionRow } from './rows.js';
import { carriedSessions, rowKeys } from './shard.js';
import { commitEvent } from './events/commit.js';
import { lockSessionIfPresent } from './session-lock.js';
import { CONTENT_LOCK, contentLockShared, readPolicy, type Manifest, type ManifestEntry, type Policy } from './snapshots.js';
import { ADVISORY_LOCKS } from '../db/advisory-locks.js';

/**
 * Frozen execution changesets (CONTRACT section 2). `freezeChangeset` runs inside the settling
 * transaction: it compares the two stored manifests, renders unified diffs from the stored contents
 * (in TypeScript, never git, never the live worktree), applies the patch budgets and stores the
 * result. Reads return those stored rows, byte for byte, until retention prunes them.
 */

export type OmissionReason = 'IGNORED' | 'SIZE' | 'BINARY' | 'TRUNCATED' | 'CAPTURE_LIMIT';
export interface Omission { path: string; reason: OmissionReason; detail: string }
export type FileStatus = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RENAMED';
export type BoundaryReason = 'NOT_SETTLED' | 'START_NOT_CAPTURED' | 'END_NOT_CAPTURED' | 'HOST_LOST' | 'EXPIRED';
export type CoverageReason = 'NOT_SETTLED' | 'BOUNDARY_UNAVAILABLE' | 'EXPIRED';

export interface ChangesetRow {
  executionId: string;
  sessionId: string;
  coverage: 'COMPLETE' | 'OMITTED' | 'UNAVAILABLE';
  unavailableReason: BoundaryReason | null;
  detail: string | null;
  omissions: Omission[];
  fileCount: number;
  additions: number;
  deletions: number;
  patchBytes: number;
  frozenAt: Date;
  prunedAt: Date | null;
}

/**
 * The part of a changeset row a list of executions reads along (resolvers/loaders.ts, `counts`): its
 * counts and what says whether its files are readable (hasFiles). Coverage and boundary read the whole row.
 */
export type ChangesetCounts = Pick<ChangesetRow, 'executionId' | 'coverage' | 'fileCount' | 'additions' | 'deletions' | 'prunedAt'>;

export interface ChangesetFileRow {
  executionId: string;
  ord: number;
  path: string;
  status: FileStatus;
  additions: number;
  deletions: number;
  binary: boolean;
  patch: string | null;
  /**
   * RENAMED: the path it had at the start (`path` is the one at the end) and how similar its two contents are, in
   * percent (100: the same bytes). Null otherwise; absent where a reader did not select them.
   */
  previousPath?: string | null;
  similarity?: number | null;
}

/** An execution row with the boundary columns this issue added. */
export type BoundedExecution = ExecutionRow & { startSnapshotId?: string | null; endSnapshotId?: string | null };

// ---------------------------------------------------------------------------------------------
// Rendering

const CONTEXT = 3;
/** Above this many differing lines (after trimming common ends), a file is rendered as a whole replacement. */
const MAX_DIFF_LINES = 20_000;
const MAX_EDIT_LENGTH = 1_000;

/** A text's lines, each with its "\n" (the last without one when the text does not end with it). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const parts = text.split('\n');
  const last = parts.pop()!;
  const lines = parts.map((l) => l + '\n');
  if (last !== '') lines.push(last);
  return lines;
}

/** One line of an edit script: kept (0), removed (1) or added (2), with its 0-based old and new positions. */
export interface Op { t: 0 | 1 | 2; line: string; o: number; n: number }

/**
 * The edit script old → new: common ends are trimmed, the middle goes through the diff library's
 * Myers implementation (bounded edit length); a middle too large or too different is rendered as
 * delete-all plus add-all, still an exact patch.
 */
export function editScript(a: string[], b: string[]): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const ops: Op[] = [];
  let o = 0;
  let n = 0;
  const push = (t: 0 | 1 | 2, line: string) => {
    ops.push({ t, line, o, n });
    if (t !== 2) o++;
    if (t !== 1) n++;
  };
  for (let i = 0; i < pre; i++) push(0, a[i]);
  let changes = am.length + bm.length <= MAX_DIFF_LINES && am.length > 0 && bm.length > 0
    ? diffArrays(am, bm, { maxEditLength: MAX_EDIT_LENGTH })
    : undefined;
  if (changes) {
    for (const c of changes) for (const line of c.value) push(c.removed ? 1 : c.added ? 2 : 0, line);
  } else {
    for (const line of am) push(1, line);
    for (const line of bm) push(2, line);
  }
  for (let i = a.length - suf; i < a.length; i++) push(0, a[i]);
  return ops;
}

function hunks(ops: Op[]): { header: string; body: string }[] {
  const out: { header: string; body: string }[] = [];
  const total = ops.length;
  let i = 0;
  while (i < total) {
    while (i < total && ops[i].t === 0) i++;
    if (i >= total) break;
    const start = Math.max(0, i - CONTEXT);
    let end = i;
    let j = i + 1;
    while (j < total) {
      if (ops[j].t !== 0) { end = j; j++; continue; }
      let k = j;
      while (k < total && ops[k].t === 0) k++;
      if (k < total && k - j <= 2 * CONTEXT) { j = k; continue; }
      break;
    }
    const stop = Math.min(total, end + 1 + CONTEXT);
    let oldLines = 0;
    let newLines = 0;
    let body = '';
    for (let x = start; x < stop; x++) {
      const op = ops[x];
      if (op.t !== 2) oldLines++;
      if (op.t !== 1) newLines++;
      const text = op.line.endsWith('\n') ? op.line.slice(0, -1) : op.line;
      body += (op.t === 0 ? ' ' : op.t === 1 ? '-' : '+') + text + '\n';
      if (!op.line.endsWith('\n')) body += '\\ No newline at end of file\n';
    }
    const oldStart = oldLines === 0 ? ops[start].o : ops[start].o + 1;
    const newStart = newLines === 0 ? ops[start].n : ops[start].n + 1;
    out.push({ header: `@@ -${oldStart},${oldLines} +${newStart},${newLines} @@\n`, body });
    i = stop;
  }
  return out;
}

const modeString = (m: number) => m.toString(8).padStart(6, '0');

/** A rename's old path and similarity, for renderFilePatch. */
export interface RenameOf { previousPath: string; similarity: number }

/**
 * A git-style unified diff of one file, with fixed `a/` and `b/` prefixes: the output depends only
 * on the two stored contents, never on any Git configuration (noprefix, autocrlf, color, attributes).
 * A rename (`renamed`) is headed as git heads one (`similarity index`, `rename from`, `rename to`), its hunks
 * only the differences between the old path's content and the new one's (none when they are the same).
 */
export function renderFilePatch(path: string, status: FileStatus, oldText: string | null, newText: string | null, oldMode: number, newMode: number,
  renamed?: RenameOf): { patch: string; additions: number; deletions: number } {
  const oldPath = renamed?.previousPath ?? path;
  let head = `diff --git a/${oldPath} b/${path}\n`;
  if (status === 'ADDED') head += `new file mode ${modeString(newMode)}\n`;
  else if (status === 'DELETED') head += `deleted file mode ${modeString(oldMode)}\n`;
  else if (oldMode !== newMode) head += `old mode ${modeString(oldMode)}\nnew mode ${modeString(newMode)}\n`;
  if (renamed) head += `similarity index ${renamed.similarity}%\nrename from ${oldPath}\nrename to ${path}\n`;
  const ops = editScript(splitLines(oldText ?? ''), splitLines(newText ?? ''));
  const hs = hunks(ops);
  let additions = 0;
  let deletions = 0;
  for (const op of ops) { if (op.t === 1) deletions++; else if (op.t === 2) additions++; }
  if (hs.length === 0) return { patch: head, additions, deletions };
  let patch = head + (status === 'ADDED' ? '--- /dev/null\n' : `--- a/${oldPath}\n`) + (status === 'DELETED' ? '+++ /dev/null\n' : `+++ b/${path}\n`);
  for (const h of hs) patch += h.header + h.body;
  return { patch, additions, deletions };
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Text when it renders as text (no NUL in the first 8000 bytes, valid UTF-8); null when binary. */
export function asText(data: Uint8Array): string | null {
  const probe = Math.min(data.length, 8000);
  for (let i = 0; i < probe; i++) if (data[i] === 0) return null;
  try {
    const s = utf8.decode(data);
    return s.includes('\u0000') ? null : s;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Comparing two manifests

interface ComputedFile {
  path: string; status: FileStatus; additions: number; deletions: number; binary: boolean; patch: string | null;
  previousPath: string | null; similarity: number | null;
}
export interface Computed { files: ComputedFile[]; omissions: Omission[]; additions: number; deletions: number; patchBytes: number }

function isUnder(path: string, regions: Set<string>): string | null {
  if (regions.size === 0) return null;
  if (regions.has(path)) return path;
  let i = path.lastIndexOf('/');
  while (i > 0) {
    const p = path.slice(0, i);
    if (regions.has(p)) return p;
    i = p.lastIndexOf('/');
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Renames

/** The least similarity for a deleted file and an added one to be one renamed file, in percent (git's default, -M50%). */
export const RENAME_THRESHOLD = 50;
/**
 * Similar (not identical) renames are looked for only when the deleted text files times the added ones are at most
 * this many (git's diff.renameLimit of 400, squared): the search runs inside the settling transaction.
 */
export const RENAME_PAIR_LIMIT = 400 * 400;
/** A file larger than this is a rename only when its content is the same (by hash). */
const RENAME_MAX_BYTES = 4 * 1024 * 1024;

const fileType = (m: number) => m & 0o170000;

/**
 * What git's similarity counts of a content (diffcore-delta): its bytes in chunks, each a line (with its "\n")
 * or 64 bytes where a line is longer, the "\r" of "\r\n" left out; the bytes of each distinct chunk summed.
 */
function chunkBytes(data: Buffer): { size: number; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  let size = 0;
  let chunk: number[] = [];
  const flush = () => {
    if (!chunk.length) return;
    const k = String.fromCharCode(...chunk);
    counts.set(k, (counts.get(k) ?? 0) + chunk.length);
    size += chunk.length;
    chunk = [];
  };
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (c === 13 && data[i + 1] === 10) continue;
    chunk.push(c);
    if (c === 10 || chunk.length === 64) flush();
  }
  flush();
  return { size, counts };
}

/** How similar two contents are, in percent: the bytes they share over the larger one's (git's similarity index). */
export function similarity(a: Buffer, b: Buffer): number {
  return similarityOf(chunkBytes(a), chunkBytes(b));
}
function similarityOf(x: ReturnType<typeof chunkBytes>, y: ReturnType<typeof chunkBytes>): number {
  const max = Math.max(x.size, y.size);
  if (max === 0) return 100;
  let shared = 0;
  const [small, large] = x.counts.size <= y.counts.size ? [x.counts, y.counts] : [y.counts, x.counts];
  for (const [k, n] of small) shared += Math.min(n, large.get(k) ?? 0);
  return Math.floor((shared * 100) / max);
}

interface Changed { path: string; a: ManifestEntry | undefined; b: ManifestEntry | undefined }
interface Renames { byTarget: Map<string, { source: Changed; similarity: number }>; sources: Set<string> }

/**
 * Pairs deleted files with added ones, as git does: first the same content (by hash; the same kind of file,
 * regular or link; among several deleted files of that content the one of the same name, else the first by
 * path), then, among the text files left, pairs at least RENAME_THRESHOLD similar, the most similar first (ties
 * by new path, then old path), each file in one pair at most. Empty files are never paired. Pure and
 * deterministic: the same manifests and contents always give the same pairs.
 */
function detectRenames(changed: readonly Changed[], contents: Map<string, Buffer>): Renames {
  const out: Renames = { byTarget: new Map(), sources: new Set() };
  const movable = (e: ManifestEntry | undefined): e is ManifestEntry => !!e && (e.k === 'f' || e.k === 'o') && !!e.h && e.s > 0;
  const deleted = changed.filter((c) => !c.b && movable(c.a));
  const added = changed.filter((c) => !c.a && movable(c.b));
  if (!deleted.length || !added.length) return out;
  const pair = (source: Changed, target: Changed, sim: number) => {
    out.byTarget.set(target.path, { source, similarity: sim });
    out.sources.add(source.path);
  };
  const base = (p: string) => p.slice(p.lastIndexOf('/') + 1);
  const byHash = new Map<string, Changed[]>();
  for (const d of deleted) {
    const k = `${d.a!.h}|${fileType(d.a!.m)}`;
    if (!byHash.has(k)) byHash.set(k, []);
    byHash.get(k)!.push(d);
  }
  for (const t of added) {
    const list = byHash.get(`${t.b!.h}|${fileType(t.b!.m)}`)?.filter((d) => !out.sources.has(d.path));
    if (!list?.length) continue;
    pair(list.find((d) => base(d.path) === base(t.path)) ?? list[0], t, 100);
  }
  const text = (e: ManifestEntry): Buffer | null => {
    if (e.k !== 'f' || e.b || e.s > RENAME_MAX_BYTES) return null;
    const data = contents.get(e.h!);
    return data && asText(data) !== null ? data : null;
  };
  const sources = deleted.filter((d) => !out.sources.has(d.path)).map((d) => ({ c: d, data: text(d.a!) })).filter((x) => x.data);
  const targets = added.filter((t) => !out.byTarget.has(t.path)).map((t) => ({ c: t, data: text(t.b!) })).filter((x) => x.data);
  if (!sources.length || !targets.length || sources.length * targets.length > RENAME_PAIR_LIMIT) return out;
  const chunks = new Map<Changed, ReturnType<typeof chunkBytes>>();
  const chunksOf = (c: Changed, data: Buffer) => { let v = chunks.get(c); if (!v) chunks.set(c, (v = chunkBytes(data))); return v; };
  const candidates: { s: Changed; t: Changed; sim: number }[] = [];
  for (const t of targets) {
    for (const s of sources) {
      if (fileType(s.c.a!.m) !== fileType(t.c.b!.m)) continue;
      // The larger content's share the smaller one could at most cover.
      const [x, y] = [s.data!.length, t.data!.length];
      if (Math.min(x, y) * 100 < RENAME_THRESHOLD * Math.max(x, y)) continue;
      const sim = similarityOf(chunksOf(s.c, s.data!), chunksOf(t.c, t.data!));
      if (sim >= RENAME_THRESHOLD) candidates.push({ s: s.c, t: t.c, sim });
    }
  }
  candidates.sort((x, y) => y.sim - x.sim || (x.t.path < y.t.path ? -1 : x.t.path > y.t.path ? 1 : 0) || (x.s.path < y.s.path ? -1 : x.s.path > y.s.path ? 1 : 0));
  for (const c of candidates) {
    if (out.sources.has(c.s.path) || out.byTarget.has(c.t.path)) continue;
    pair(c.s, c.t, Math.min(c.sim, 99));
  }
  return out;
}

/**
 * The changeset between two manifests. `contents` gives the stored bytes of a hash (only stored
 * files, `k = 'f'`, are asked for). Pure: the same inputs always give the same bytes.
 */
export function computeChangeset(start: Manifest, end: Manifest, contents: Map<string, Buffer>, policy: Pick<Policy, 'filePatchBytes' | 'changesetPatchBytes'>): Computed {
  const omissions: Omission[] = [];
  const A = new Map(start.files.map((e) => [e.p, e]));
  const B = new Map(end.files.map((e) => [e.p, e]));

  // Opaque regions: subtrees a capture did not scan, and ignored directories (kept as one fingerprint).
  const opaque = new Set<string>();
  const unscannedDetail = new Map<string, string[]>();
  for (const [side, m] of [['start', start], ['end', end]] as const) {
    for (const u of m.unscanned) {
      opaque.add(u.p);
      if (!unscannedDetail.has(u.p)) unscannedDetail.set(u.p, []);
      unscannedDetail.get(u.p)!.push(`not scanned by the ${side} capture${u.d ? `: ${u.d}` : ''}`);
    }
  }
  for (const [p, d] of unscannedDetail) omissions.push({ path: p, reason: 'CAPTURE_LIMIT', detail: d.join('; ') });
  // A capture that may have left out paths anywhere: the files are still what the two manifests show,
  // but nothing proves that is all of them.
  const partial = [['start', start.partial], ['end', end.partial]].filter(([, d]) => d).map(([side, d]) => `the ${side} capture may have left out paths: ${d}`);
  if (partial.length) omissions.push({ path: '.', reason: 'CAPTURE_LIMIT', detail: partial.join('; ') });
  const unscanned = new Set(unscannedDetail.keys());
  const dirs = new Set<string>();
  for (const e of start.files) if (e.k === 'd') dirs.add(e.p);
  for (const e of end.files) if (e.k === 'd') dirs.add(e.p);
  for (const d of dirs) {
    opaque.add(d);
    if (isUnder(d, unscanned)) continue;
    const a = A.get(d);
    const b = B.get(d);
    if (a?.k === 'd' && b?.k === 'd' && a.h === b.h) continue;
    const describe = (e: ManifestEntry | undefined) =>
      !e ? 'absent' : e.k === 'd' ? `ignored directory of ${e.n ?? '?'} entries, ${e.s} bytes` : 'not ignored';
    omissions.push({ path: d, reason: 'IGNORED', detail: `ignored directory changed: ${describe(a)} at start, ${describe(b)} at end` });
  }

  const paths = new Set<string>();
  for (const p of A.keys()) paths.add(p);
  for (const p of B.keys()) paths.add(p);
  // The paths that changed (the start's entry, the end's), each a file of the changeset unless a rename pairs it.
  const changed: { path: string; a: ManifestEntry | undefined; b: ManifestEntry | undefined }[] = [];
  for (const p of paths) {
    const a = A.get(p);
    const b = B.get(p);
    if (a?.k === 'd' || b?.k === 'd') continue;
    if (isUnder(p, opaque)) continue;
    if (a?.k === 'i' || b?.k === 'i') {
      const same = a && b && a.k === b.k && a.s === b.s && a.m === b.m &&
        (a.h && b.h ? a.h === b.h : a.t !== null && a.t === b.t);
      if (!same) {
        const describe = (e: ManifestEntry | undefined) =>
          !e ? 'absent' : e.k === 'i' ? `ignored, ${e.s} bytes` : `not ignored, ${e.s} bytes`;
        omissions.push({ path: p, reason: 'IGNORED', detail: `ignored path changed: ${describe(a)} at start, ${describe(b)} at end` });
      }
      continue;
    }
    if (a && b && a.h === b.h && a.m === b.m) continue;
    changed.push({ path: p, a, b });
  }
  const renames = detectRenames(changed, contents);
  const files: ComputedFile[] = [];
  let budget = policy.changesetPatchBytes;
  let additions = 0;
  let deletions = 0;
  let patchBytes = 0;

  const items = changed.filter((c) => !renames.sources.has(c.path)).map((c) => {
    const r = renames.byTarget.get(c.path);
    return r ? { path: c.path, a: r.source.a, b: c.b, renamed: { previousPath: r.source.path, similarity: r.similarity } } : { ...c, renamed: undefined };
  });
  items.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  for (const { path: p, a, b, renamed } of items) {
    const status: FileStatus = renamed ? 'RENAMED' : !a ? 'ADDED' : !b ? 'DELETED' : 'MODIFIED';
    const previousPath = renamed?.previousPath ?? null;
    const similarity = renamed?.similarity ?? null;
    const row = (x: { additions: number; deletions: number; binary: boolean; patch: string | null }): ComputedFile => ({ path: p, status, ...x, previousPath, similarity });
    // The same bytes under another path: nothing to render, whatever they are (binary, over the size limit).
    if (renamed && a!.h === b!.h) {
      const r = renderFilePatch(p, status, '', '', a!.m, b!.m, renamed);
      const bytes = Buffer.byteLength(r.patch, 'utf8');
      budget -= Math.min(budget, bytes);
      patchBytes += bytes;
      files.push(row({ additions: 0, deletions: 0, binary: !!(a!.b || b!.b), patch: r.patch }));
      continue;
    }
    if (a?.k === 'o' || b?.k === 'o') {
      files.push(row({ additions: 0, deletions: 0, binary: !!(a?.b || b?.b), patch: null }));
      omissions.push({ path: p, reason: 'SIZE', detail: `over the per-file capture limit (${a ? a.s : 0} → ${b ? b.s : 0} bytes); content not stored` });
      continue;
    }
    const text = (e: ManifestEntry | undefined): string | null => {
      if (!e) return '';
      if (e.b) return null;
      const data = contents.get(e.h!);
      if (!data) throw new Error(`freeze: content of ${e === a && previousPath ? previousPath : p} is missing`);
      return asText(data);
    };
    const oldText = a?.b || b?.b ? null : text(a);
    const newText = oldText === null ? null : text(b);
    if (oldText === null || newText === null) {
      files.push(row({ additions: 0, deletions: 0, binary: true, patch: null }));
      omissions.push({ path: p, reason: 'BINARY', detail: `binary content (${a ? a.s : 0} → ${b ? b.s : 0} bytes), not rendered` });
      continue;
    }
    const r = renderFilePatch(p, status, a ? oldText : null, b ? newText : null, a?.m ?? 0o100644, b?.m ?? 0o100644, renamed);
    additions += r.additions;
    deletions += r.deletions;
    const bytes = Buffer.byteLength(r.patch, 'utf8');
    if (bytes > policy.filePatchBytes) {
      files.push(row({ additions: r.additions, deletions: r.deletions, binary: false, patch: null }));
      omissions.push({ path: p, reason: 'TRUNCATED', detail: `patch of ${bytes} bytes exceeds the per-file budget of ${policy.filePatchBytes} bytes` });
      continue;
    }
    if (bytes > budget) {
      files.push(row({ additions: r.additions, deletions: r.deletions, binary: false, patch: null }));
      omissions.push({ path: p, reason: 'TRUNCATED', detail: `patch of ${bytes} bytes exceeds what is left of the changeset budget of ${policy.changesetPatchBytes} bytes` });
      continue;
    }
    budget -= bytes;
    patchBytes += bytes;
    files.push(row({ additions: r.additions, deletions: r.deletions, binary: false, patch: r.patch }));
  }
  omissions.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : x.reason < y.reason ? -1 : x.reason > y.reason ? 1 : 0));
  return { files, omissions, additions, deletions, patchBytes };
}

// ---------------------------------------------------------------------------------------------
// Freezing, inside the settling transaction

/**
 * Computes and stores the changeset of an execution that this transaction settles. The caller
 * holds the session lock and has checked both snapshot IDs (requireBoundarySnapshot).
 */
export async function freezeChangeset(tx: Tx, e: { id: string; sessionId: string; startSnapshotId: string | null; endSnapshotId: string | null;
  startCaptureError?: string | null; endCaptureError?: string | null }): Promise<void> {
  const unavailable = async (reason: BoundaryReason, detail: string) => {
    await tx`INSERT INTO changesets (execution_id, session_id, coverage, unavailable_reason, detail)
      VALUES (${e.id}, ${e.sessionId}, 'UNAVAILABLE', ${reason}, ${detail})`;
  };
  if (!e.startSnapshotId) {
    return unavailable('START_NOT_CAPTURED', e.startCaptureError
      ? `The host could not capture a snapshot when the execution began: ${e.startCaptureError}`
      : 'The host did not capture a snapshot when the execution began.');
  }
  if (!e.endSnapshotId) {
    return unavailable('END_NOT_CAPTURED', e.endCaptureError
      ? `The host could not capture a snapshot when the execution settled: ${e.endCaptureError}`
      : 'The host did not capture a snapshot when the execution settled.');
  }
  await contentLockShared(tx);
  // Both are snapshots of this session (requireBoundarySnapshot): read on its shard.
  const snaps = await tx<{ id: string; manifest: Manifest | null }[]>`
    SELECT id, manifest FROM snapshots WHERE session_id = ${e.sessionId} AND id = ANY(${[e.startSnapshotId, e.endSnapshotId]})`;
  const start = snaps.find((s) => s.id === e.startSnapshotId)?.manifest;
  const end = snaps.find((s) => s.id === e.endSnapshotId)?.manifest;
  if (!start) return unavailable('EXPIRED', 'The start snapshot expired before the execution settled.');
  if (!end) return unavailable('EXPIRED', 'The end snapshot expired before the execution settled.');
  const policy = await readPolicy(tx);

  const contents = await differingContents(tx, start, end);
  const c = computeChangeset(start, end, contents, policy);
  await tx`INSERT INTO changesets (execution_id, session_id, coverage, omissions, file_count, additions, deletions, patch_bytes)
    VALUES (${e.id}, ${e.sessionId}, ${c.omissions.length ? 'OMITTED' : 'COMPLETE'}, ${tx.json(c.omissions as any)},
      ${c.files.length}, ${c.additions}, ${c.deletions}, ${c.patchBytes})`;
  const rows = c.files.map((f, ord) => ({
    execution_id: e.id, session_id: e.sessionId, ord, path: f.path, status: f.status,
    additions: f.additions, deletions: f.deletions, binary: f.binary, patch: f.patch, previous_path: f.previousPath, similarity: f.similarity,
  }));
  await insertFileRows(tx, 'changeset_files', rows);
}

/**
 * The stored contents of the files that differ between two manifests (only those are read), for
 * computeChangeset. The caller holds the shared content lock (contentLockShared), so none is pruned
 * underneath.
 */
export async function differingContents(tx: Tx, start: Manifest, end: Manifest): Promise<Map<string, Buffer>> {
  const A = new Map(start.files.map((f) => [f.p, f]));
  const need = new Set<string>();
  for (const b of end.files) {
    const a = A.get(b.p);
    if (a && a.h === b.h && a.m === b.m) continue;
    if (b.k === 'f' && !b.b) need.add(b.h!);
    if (a?.k === 'f' && !a.b) need.add(a.h!);
  }
  const B = new Set(end.files.map((f) => f.p));
  for (const a of start.files) if (!B.has(a.p) && a.k === 'f' && !a.b) need.add(a.h!);
  const contents = new Map<string, Buffer>();
  const list = [...need];
  for (let i = 0; i < list.length; i += 500) {
    const rows = await tx<{ hash: string; data: Buffer }[]>`SELECT hash, data FROM contents WHERE hash = ANY(${list.slice(i, i + 500)})`;
    for (const r of rows) contents.set(r.hash, r.data);
  }
  return contents;
}

/**
 * Inserts file rows in batches bounded by rows and bytes (a parameterized statement carries at most
 * 65535 parameters).
 */
export async function insertFileRows(tx: Tx, table: string, rows: readonly ({ patch: string | null } & Record<string, unknown>)[]): Promise<void> {
  let batch: (typeof rows)[number][] = [];
  let bytes = 0;
  const flush = async () => {
    if (batch.length) await tx`INSERT INTO ${tx(table)} ${tx(batch as Record<string, unknown>[])}`;
    batch = [];
    bytes = 0;
  };
  for (const r of rows) {
    batch.push(r);
    bytes += r.patch?.length ?? 0;
    if (batch.length >= 1000 || bytes > 16 * 1024 * 1024) await flush();
  }
  await flush();
}

// ---------------------------------------------------------------------------------------------
// Reading

export type BoundaryView =
  | { kind: 'snapshot'; startId: string; endId: string }
  | { kind: 'unavailable'; reason: BoundaryReason; detail: string };

export type CoverageView =
  | { kind: 'complete'; fileCount: number }
  | { kind: 'omitted'; omissions: Omission[] }
  | { kind: 'unavailable'; reason: CoverageReason; detail: string };

export function boundaryOf(e: BoundedExecution, cs: ChangesetRow | null): BoundaryView {
  if (e.status === 'RUNNING') return { kind: 'unavailable', reason: 'NOT_SETTLED', detail: 'The execution is still running.' };
  if (e.status === 'ABANDONED') return { kind: 'unavailable', reason: 'HOST_LOST', detail: 'The host was lost before the execution settled.' };
  if (!cs) return { kind: 'unavailable', reason: 'END_NOT_CAPTURED', detail: 'No boundary was recorded for this execution.' };
  if (cs.prunedAt) return { kind: 'unavailable', reason: 'EXPIRED', detail: 'The snapshots were pruned by the retention policy.' };
  if (cs.coverage === 'UNAVAILABLE') return { kind: 'unavailable', reason: cs.unavailableReason ?? 'END_NOT_CAPTURED', detail: cs.detail ?? '' };
  return { kind: 'snapshot', startId: e.startSnapshotId!, endId: e.endSnapshotId! };
}

export function coverageOf(e: BoundedExecution, cs: ChangesetRow | null): CoverageView {
  if (e.status === 'RUNNING') return { kind: 'unavailable', reason: 'NOT_SETTLED', detail: 'The execution is still running.' };
  if (!cs) {
    return { kind: 'unavailable', reason: 'BOUNDARY_UNAVAILABLE', detail: e.status === 'ABANDONED' ? 'The host was lost before the execution settled.' : 'No boundary was recorded.' };
  }
  if (cs.prunedAt) return { kind: 'unavailable', reason: 'EXPIRED', detail: 'The changeset was pruned by the retention policy.' };
  if (cs.coverage === 'UNAVAILABLE') {
    if (cs.unavailableReason === 'EXPIRED') return { kind: 'unavailable', reason: 'EXPIRED', detail: cs.detail ?? '' };
    return { kind: 'unavailable', reason: 'BOUNDARY_UNAVAILABLE', detail: `${cs.unavailableReason}: ${cs.detail ?? ''}` };
  }
  if (cs.coverage === 'OMITTED') return { kind: 'omitted', omissions: cs.omissions };
  return { kind: 'complete', fileCount: cs.fileCount };
}

/** Whether the files of a changeset row are readable (frozen and not pruned). */
export function hasFiles(cs: ChangesetCounts | null): boolean {
  return !!cs && !cs.prunedAt && cs.coverage !== 'UNAVAILABLE';
}

export async function changesetRows(db: Db, executionIDs: readonly string[]): Promise<ChangesetRow[]> {
  return db<ChangesetRow[]>`SELECT * FROM changesets WHERE ${rowKeys(db, executionIDs, { column: 'execution_id' })}`;
}

/**
 * The files of frozen, unpruned changesets, in order. Found through their changeset row (by session and
 * execution; an execution ID of the old shape through the changesets index on execution_id).
 */
export async function changesetFiles(db: Db, executionIDs: readonly string[]): Promise<ChangesetFileRow[]> {
  const sessions = carriedSessions(executionIDs);
  return db<ChangesetFileRow[]>`
    SELECT f.execution_id, f.ord, f.path, f.status, f.additions, f.deletions, f.binary, f.patch, f.previous_path, f.similarity
    FROM changesets c JOIN changeset_files f ON f.session_id = c.session_id AND f.execution_id = c.execution_id
    WHERE ${rowKeys(db, executionIDs, { alias: 'c', column: 'execution_id' })} AND c.pruned_at IS NULL
      ${sessions ? db`AND f.session_id = ANY(${sessions})` : db``}
    ORDER BY f.execution_id, f.ord`;
}

/**
 * Single files of frozen changesets, by (execution, path): what a review UI loads as a file is opened,
 * so a 500-file changeset never ships every patch at once. Pruned changesets answer nothing.
 */
export async function changesetFilesAt(db: Db, keys: readonly { executionId: string; path: string }[]): Promise<ChangesetFileRow[]> {
  if (!keys.length) return [];
  const executionIDs = [...new Set(keys.map((k) => k.executionId))];
  const sessions = carriedSessions(executionIDs);
  return db<ChangesetFileRow[]>`
    SELECT f.execution_id, f.ord, f.path, f.status, f.additions, f.deletions, f.binary, f.patch, f.previous_path, f.similarity
    FROM changesets c JOIN changeset_files f ON f.session_id = c.session_id AND f.execution_id = c.execution_id
    JOIN unnest(${keys.map((k) => k.executionId)}::text[], ${keys.map((k) => k.path)}::text[]) AS k(execution_id, path)
      ON k.execution_id = f.execution_id AND k.path = f.path
    WHERE ${rowKeys(db, executionIDs, { alias: 'c', column: 'execution_id' })} AND c.pruned_at IS NULL
      ${sessions ? db`AND f.session_id = ANY(${sessions})` : db``}`;
}

// ---------------------------------------------------------------------------------------------
// Retention

const PRUNER_LOCK = ADVISORY_LOCKS.pruner;

export interface PruneResult { skipped: boolean; changesets: number; snapshots: number; contents: number }

/**
 * The database's clock (its transaction time) as text, exact to the microsecond: passed to the statements
 * below as a parameter, never `now()` inside them, since on a cluster distributed by session (docs/citus.md)
 * a distributed UPDATE or DELETE must not evaluate a function per shard, and the cut-offs of
 * one pass are then the same on every shard.
 */
async function clock(db: Db): Promise<string> {
  const [r] = await db<{ now: string }[]>`SELECT now()::text AS now`;
  return r.now;
}

/**
 * The changesets retention may prune at `now`, by session (a read: each session's pass checks again
 * under its lock). Every table is joined on session_id: on a cluster each session's rows are read on its
 * shard.
 */
function prunableChangesets(db: Db, policy: Policy, sessionID: string | null, limit: number, now: string) {
  return db<{ executionId: string; sessionId: string }[]>`
    SELECT c2.execution_id, e.session_id FROM changesets c2 JOIN executions e ON e.session_id = c2.session_id AND e.id = c2.execution_id
    WHERE c2.pruned_at IS NULL ${sessionID ? db`AND c2.session_id = ${sessionID} AND e.session_id = ${sessionID}` : db``}
      AND e.settled_at < ${now}::timestamptz - ${policy.retainMs} * interval '1 millisecond'
      AND EXISTS (SELECT 1 FROM executions n WHERE n.session_id = e.session_id AND n.sequence = e.sequence + 1 AND n.status <> 'RUNNING')
      AND (SELECT count(*) FROM executions l WHERE l.session_id = e.session_id AND l.sequence > e.sequence AND l.status <> 'RUNNING') >= ${policy.retainExecutions}
    ORDER BY c2.frozen_at LIMIT ${limit}`;
}

/**
 * Applies the retention policy once. Any instance may run it at any time, concurrently: every step is
 * guarded by its own condition, so nothing is done twice.
 *
 * A changeset is pruned only after its session's next execution has settled, and once it is older
 * than `retainMs` with at least `retainExecutions` later settled executions in its session. Pruning a
 * changeset is a state change of its session, so it takes that path: per session, one transaction under
 * the session lock (SKIP LOCKED: a busy session is pruned by a later pass) drops its patches and commits
 * a `changeset.pruned` event per execution, which `sessionEvents` subscribers see. Then, in one
 * transaction (a concurrent run that pruned nothing skips it; one that pruned waits its turn, so the
 * snapshots of what it pruned are swept before it returns), the snapshots only pruned changesets used lose their
 * manifests and contents no longer referenced by any manifest go after the grace period. The execution
 * itself, its status and its settlement are untouched.
 *
 * On a cluster distributed by session (docs/citus.md), a session's pass runs on its shard; the sweep
 * reads every shard's snapshots, and deletes contents (distributed by hash, not with the snapshots)
 * against the referenced hashes computed first (a CTE Citus plans on its own, then broadcasts), never
 * through a subquery correlated across the two.
 */
export async function pruneChangesets(sql: Sql, opts: { batch?: number } = {}): Promise<PruneResult> {
  const policy = await readPolicy(sql);
  const candidates = await prunableChangesets(sql, policy, null, opts.batch ?? 1000, await clock(sql));
  let changesets = 0;
  for (const sessionID of [...new Set(candidates.map((c) => c.sessionId))]) {
    changesets += await sql.begin(async (tx) => {
      const lock = await lockSessionIfPresent(tx, sessionID, { skipLocked: true });
      if (!lock) return 0;
      const now = await clock(tx);
      const ids = (await prunableChangesets(tx, policy, sessionID, opts.batch ?? 1000, now)).map((r) => r.executionId);
      if (!ids.length) return 0;
      await tx`
        WITH c AS (UPDATE changesets SET pruned_at = ${now}::timestamptz WHERE session_id = ${sessionID} AND execution_id = ANY(${ids}))
        DELETE FROM changeset_files WHERE session_id = ${sessionID} AND execution_id = ANY(${ids})`;
      for (const executionID of ids) await commitEvent(lock, 'changeset.pruned', { executionID });
      return ids.length;
    });
  }
  const swept = await sql.begin(async (tx) => {
    // Advisory locks hold on the node that takes them: every gateway connection goes to the Citus
    // coordinator (docs/citus.md), so these are taken there, for every instance alike.
    // A run that pruned changesets waits for a sweep in progress and sweeps after it: that sweep may
    // have read before this run's prunes committed, and would leave their snapshots for a later pass.
    // A run that pruned nothing skips when another sweeps.
    if (changesets > 0) await tx`SELECT pg_advisory_xact_lock(${PRUNER_LOCK})`;
    else {
      const [{ ok }] = await tx`SELECT pg_try_advisory_xact_lock(${PRUNER_LOCK}) AS ok`;
      if (!ok) return null;
    }
    // Exclusive: waits for uploads, snapshot creations and freezes in flight, and holds new ones
    // back until this commits, so no content checked to exist by them disappears underneath.
    await tx`SELECT pg_advisory_xact_lock(${CONTENT_LOCK})`;
    const now = await clock(tx);
    // Snapshots used by executions: kept while any of them is running or has an unpruned changeset.
    const used = await tx`
      UPDATE snapshots s SET manifest = NULL, pruned_at = ${now}::timestamptz
      WHERE s.pruned_at IS NULL
        AND EXISTS (SELECT 1 FROM executions e WHERE e.session_id = s.session_id AND (e.start_snapshot_id = s.id OR e.end_snapshot_id = s.id))
        AND NOT EXISTS (
          SELECT 1 FROM executions e LEFT JOIN changesets c ON c.session_id = e.session_id AND c.execution_id = e.id
          WHERE e.session_id = s.session_id AND (e.start_snapshot_id = s.id OR e.end_snapshot_id = s.id)
            AND (e.status = 'RUNNING' OR (c.execution_id IS NOT NULL AND c.pruned_at IS NULL)))
      RETURNING s.id, s.session_id`;
    // Changesets between two snapshots (Session.changes, Execution.driftBefore) go with either of them.
    if (used.length) {
      const ids = used.map((u) => u.id as string);
      await tx`DELETE FROM snapshot_changesets
        WHERE session_id = ANY(${[...new Set(used.map((u) => u.sessionId as string))]})
          AND (start_snapshot_id = ANY(${ids}) OR end_snapshot_id = ANY(${ids}))`;
    }
    // Snapshots no execution used, older than the grace period.
    const unused = await tx`
      DELETE FROM snapshots s
      WHERE s.captured_at < ${now}::timestamptz - ${policy.graceMs} * interval '1 millisecond'
        AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.session_id = s.session_id AND (e.start_snapshot_id = s.id OR e.end_snapshot_id = s.id))
      RETURNING s.id`;
    // The hashes every stored manifest references, computed on their own (MATERIALIZED: on a cluster,
    // one distributed read of the snapshots, its result then sent to the contents' shards).
    const gone = await tx`
      WITH refs AS MATERIALIZED (
        SELECT DISTINCT f->>'h' AS h FROM snapshots s, jsonb_array_elements(s.manifest->'files') f
        WHERE s.manifest IS NOT NULL AND f->>'k' = 'f'
      )
      DELETE FROM contents c
      WHERE c.touched_at < ${now}::timestamptz - ${policy.graceMs} * interval '1 millisecond'
        AND NOT EXISTS (SELECT 1 FROM refs WHERE refs.h = c.hash)
      RETURNING c.hash`;
    return { snapshots: used.length + unused.length, contents: gone.length };
  });
  if (!swept) return { skipped: changesets === 0, changesets, snapshots: 0, contents: 0 };
  return { skipped: false, changesets, ...swept };
}
