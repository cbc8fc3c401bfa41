import type { Db, Sql } from '../db/connection.js';
import { asText, editScript, splitLines, type BoundedExecution, type OmissionReason } from './changesets.js';
import { freezeSnapshotChangeset, snapshotChangesetFiles, snapshotChangesetRows } from './snapshot-changes.js';
import type { ManifestEntry } from './snapshots.js';

/**
 * Who changed each line (CONTRACT section 13): the attribution of a file's lines, and of the files and patch
 * lines of a changeset, to the execution or the outside edit (the drift between two executions) that last changed
 * them within a session, computed from the frozen boundary snapshots only (never a worktree, never git), so it
 * holds after the worktree is gone.
 *
 * A session's boundaries form one timeline: S1, E1, S2, E2, … (the start and end snapshot of each execution, by
 * sequence). Position p of the timeline is boundary p; the span ending at position p is the execution's own
 * (S_k → E_k: p odd) or the drift before it (E_k-1 → S_k: p even). A boundary that was not captured (or a file
 * whose content a boundary does not show: ignored, binary, over the size limit, not scanned, pruned) merges the
 * spans around it: a line that appears across a merged span is attributed to an `UNKNOWN` origin naming the
 * executions the span covers, never to one of them. Lines present at the session's first boundary (S1) are
 * `BEFORE_SESSION`.
 *
 * Like `git blame`, a line keeps its origin while it is unchanged between two boundaries where the file is known,
 * the file is followed across renames (the rename pairs of the span's own changeset, as the changeset views show
 * them), and a file deleted and added again starts over. Lines are compared with the changesets' own diff
 * (domain/changesets.ts editScript), so a `+` line of a patch is exactly a line the walk saw added.
 *
 * Cost, for a file blamed at position N of a session (B = N + 1 boundaries, M entries per manifest): one read of
 * the session's executions up to N; one statement reading the file's entries from the B manifests (O(B·M) JSON
 * scanned in Postgres, only the matching entries shipped; the files of a changeset are read together), one more per
 * round of renames followed, and one reading the renames of each span a file was born in; the file's contents read
 * once per distinct version (one statement); and one diff per boundary where the file's content changed
 * (O((n + m)·D), D bounded by the diff engine's edit limit). Nothing is cached beyond the request: every answer
 * is recomputed from the stored snapshots, so retention pruning one is seen at once (EXPIRED).
 */

export type BoundarySide = 'START' | 'END';
export type UnknownReason = 'BOUNDARY_UNAVAILABLE' | 'OMITTED' | 'EXPIRED' | 'NOT_SETTLED';

export type Origin =
  | { kind: 'EXECUTION'; execution: BoundedExecution }
  | { kind: 'OUTSIDE_EDIT'; execution: BoundedExecution; previous: BoundedExecution }
  | { kind: 'BEFORE_SESSION'; execution: BoundedExecution }
  | { kind: 'UNKNOWN'; reason: UnknownReason; detail: string; executions: BoundedExecution[]; outsideEdits: boolean };

/** The state of one path at one boundary, as its manifest shows it. */
export type FileState =
  | { kind: 'absent' }
  | { kind: 'text'; hash: string; mode: number }
  /** Present, and whether it changed is known (a fingerprint), but its lines are not: binary, over the size limit, ignored. */
  | { kind: 'opaque'; fp: string; reason: OmissionReason; detail: string }
  /** Not known at all: the boundary's manifest was pruned, or the path lies where the capture did not look. */
  | { kind: 'unknown'; reason: UnknownReason; detail: string };

const fingerprint = (s: FileState): string | null =>
  s.kind === 'absent' ? '' : s.kind === 'text' ? `f:${s.hash}:${s.mode}` : s.kind === 'opaque' ? s.fp : null;

// ---------------------------------------------------------------------------------------------
// The timeline

export class Timeline {
  constructor(readonly sessionId: string, readonly executions: readonly BoundedExecution[]) {}
  /** Positions 0 … 2·executions − 1. */
  get length(): number { return this.executions.length * 2; }
  executionAt(pos: number): BoundedExecution { return this.executions[pos >> 1]; }
  sideAt(pos: number): BoundarySide { return pos % 2 === 0 ? 'START' : 'END'; }
  position(executionId: string, side: BoundarySide): number {
    const i = this.executions.findIndex((e) => e.id === executionId);
    return i < 0 ? -1 : 2 * i + (side === 'END' ? 1 : 0);
  }
  /** The snapshot of a boundary, or why there is none. */
  snapshotAt(pos: number): { id: string } | { id: null; reason: UnknownReason; detail: string } {
    const e = this.executionAt(pos);
    if (pos % 2 === 0) {
      return e.startSnapshotId ? { id: e.startSnapshotId }
        : { id: null, reason: 'BOUNDARY_UNAVAILABLE', detail: `the start of #${e.sequence} was not captured` };
    }
    if (e.status === 'RUNNING') return { id: null, reason: 'NOT_SETTLED', detail: `#${e.sequence} is still running` };
    if (e.endSnapshotId) return { id: e.endSnapshotId };
    return { id: null, reason: 'BOUNDARY_UNAVAILABLE', detail: e.status === 'ABANDONED' ? `the host was lost before #${e.sequence} settled` : `the end of #${e.sequence} was not captured` };
  }
  /** The span ending at position pos (> 0): the execution's own, or the drift before it. */
  spanOrigin(pos: number): Origin {
    const e = this.executionAt(pos);
    return pos % 2 === 1 ? { kind: 'EXECUTION', execution: e } : { kind: 'OUTSIDE_EDIT', execution: e, previous: this.executionAt(pos - 1) };
  }
  /** The spans from position `from` to `to` (from < to) merged: an UNKNOWN origin over the executions and drifts they cover. */
  merged(from: number, to: number, reason: UnknownReason, detail: string): Origin {
    const executions: BoundedExecution[] = [];
    let outsideEdits = false;
    for (let p = Math.max(from + 1, 0); p <= to; p++) {
      if (p % 2 === 1) executions.push(this.executionAt(p));
      else if (p > 0) outsideEdits = true;
    }
    return { kind: 'UNKNOWN', reason, detail, executions, outsideEdits };
  }
}

/** A session's timeline up to execution `uptoSequence` (included). */
export async function loadTimeline(db: Db, sessionId: string, uptoSequence: number): Promise<Timeline> {
  const rows = await db<BoundedExecution[]>`
    SELECT * FROM executions WHERE session_id = ${sessionId} AND sequence <= ${uptoSequence} ORDER BY sequence`;
  return new Timeline(sessionId, rows);
}

// ---------------------------------------------------------------------------------------------
// Reading the entries of some paths from the boundaries' manifests

interface ManifestSlice {
  pruned: boolean;
  partial: string | null;
  unscanned: string[];
  /** Ignored directories (opaque: nothing below them is known). */
  dirs: string[];
  files: Map<string, ManifestEntry>;
}

const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/** The entries of these paths (and every ignored directory) in these snapshots of one session: one statement. */
async function manifestSlices(db: Db, sessionId: string, snapshotIds: readonly string[], paths: readonly string[]): Promise<Map<string, ManifestSlice>> {
  const out = new Map<string, ManifestSlice>();
  if (!snapshotIds.length) return out;
  const rows = await db<{ id: string; pruned: boolean; partial: string | null; unscanned: string[] | null; entries: ManifestEntry[] | null }[]>`
    SELECT s.id, s.manifest IS NULL AS pruned, s.manifest->>'partial' AS partial,
      (SELECT jsonb_agg(u->>'p') FROM jsonb_array_elements(s.manifest->'unscanned') u) AS unscanned,
      (SELECT jsonb_agg(f) FROM jsonb_array_elements(s.manifest->'files') f WHERE f->>'p' = ANY(${paths as string[]}) OR f->>'k' = 'd') AS entries
    FROM snapshots s WHERE s.session_id = ${sessionId} AND s.id = ANY(${snapshotIds as string[]})`;
  for (const r of rows) {
    const entries = r.entries ?? [];
    out.set(r.id, {
      pruned: r.pruned, partial: r.partial, unscanned: r.unscanned ?? [],
      dirs: entries.filter((e) => e.k === 'd').map((e) => e.p),
      files: new Map(entries.filter((e) => e.k !== 'd').map((e) => [e.p, e])),
    });
  }
  return out;
}

function stateIn(slice: ManifestSlice | undefined, path: string): FileState {
  if (!slice || slice.pruned) return { kind: 'unknown', reason: 'EXPIRED', detail: 'the boundary snapshot was pruned by retention' };
  const unscanned = slice.unscanned.find((u) => under(path, u));
  if (unscanned) return { kind: 'unknown', reason: 'OMITTED', detail: `${unscanned} was not scanned by the capture` };
  const dir = slice.dirs.find((d) => under(path, d));
  if (dir) return { kind: 'unknown', reason: 'OMITTED', detail: `${path} lies in the ignored directory ${dir}` };
  const e = slice.files.get(path);
  if (!e) {
    return slice.partial ? { kind: 'unknown', reason: 'OMITTED', detail: `the capture may have left out paths: ${slice.partial}` } : { kind: 'absent' };
  }
  if (e.k === 'f' && !e.b) return { kind: 'text', hash: e.h!, mode: e.m };
  if (e.k === 'f') return { kind: 'opaque', fp: `f:${e.h}:${e.m}`, reason: 'BINARY', detail: `${path} is binary` };
  if (e.k === 'o') return { kind: 'opaque', fp: `o:${e.h}:${e.m}`, reason: 'SIZE', detail: `${path} is over the capture's size limit (${e.s} bytes)` };
  return { kind: 'opaque', fp: `i:${e.h ?? ''}:${e.s}:${e.t ?? ''}:${e.m}`, reason: 'IGNORED', detail: `${path} is ignored` };
}

// ---------------------------------------------------------------------------------------------
// Following a file back through the timeline

/** Where one file was at each position up to `end`: its path and state there (null: the boundary was not captured). */
export interface Chain { end: number; at: ({ path: string; state: FileState } | null)[] }

/** The renames of a span (its files' new path → old path), read once per span by one `chains` call. */
type Renames = (from: number, to: number) => Promise<Map<string, string>>;

/**
 * The renames of the span from position `from` to position `to` (the previous position where a file was seen): the
 * span's own changeset says, an execution's frozen one when the span is exactly an execution, else the changeset
 * between the two snapshots (computed and stored once, as Session.changes and driftBefore store theirs). One
 * statement per span asked, whatever the number of files born in it.
 */
function renamesOf(sql: Sql, t: Timeline): Renames {
  const memo = new Map<string, Promise<Map<string, string>>>();
  const read = async (from: number, to: number): Promise<Map<string, string>> => {
    if (to === from + 1 && to % 2 === 1) {
      const e = t.executionAt(to);
      const rows = await sql<{ path: string; previousPath: string | null }[]>`
        SELECT f.path, f.previous_path FROM changeset_files f
        WHERE f.session_id = ${t.sessionId} AND f.execution_id = ${e.id} AND f.status = 'RENAMED'`;
      return new Map(rows.flatMap((r) => (r.previousPath ? [[r.path, r.previousPath] as [string, string]] : [])));
    }
    const a = t.snapshotAt(from).id;
    const b = t.snapshotAt(to).id;
    if (!a || !b) return new Map();
    const pair = { sessionId: t.sessionId, startSnapshotId: a, endSnapshotId: b };
    const files = (await snapshotChangesetRows(sql, [pair])).length
      ? await snapshotChangesetFiles(sql, [pair], false)
      : (await freezeSnapshotChangeset(sql, pair))?.files ?? [];
    return new Map(files.flatMap((f) => (f.status === 'RENAMED' && f.previousPath ? [[f.path, f.previousPath] as [string, string]] : [])));
  };
  return (from, to) => {
    const key = `${from}|${to}`;
    let m = memo.get(key);
    if (!m) memo.set(key, (m = read(from, to)));
    return m;
  };
}

/**
 * The chains of these files, each named by its path at position `end` (a file absent there, deleted: by its path
 * before): the paths' entries of every captured boundary read at once, then, going back from `end`, a file absent
 * before a position where it is present is looked up among the span's renames and followed under its old path (read
 * in one more statement per round of renames).
 */
export async function chains(sql: Sql, t: Timeline, end: number, paths: readonly string[]): Promise<Map<string, Chain>> {
  const snaps: (string | null)[] = [];
  for (let p = 0; p <= end; p++) snaps.push(t.snapshotAt(p).id);
  const ids = [...new Set(snaps.filter((s): s is string => !!s))];
  const slices = new Map<string, Map<string, ManifestSlice>>();
  const read = async (wanted: string[]) => {
    const got = await manifestSlices(sql, t.sessionId, ids, wanted);
    for (const w of wanted) slices.set(w, got);
  };
  await read([...new Set(paths)]);
  const stateOf = (pos: number, path: string): FileState | null => (snaps[pos] ? stateIn(slices.get(path)!.get(snaps[pos]!), path) : null);
  const out = new Map<string, Chain>();
  const renames = renamesOf(sql, t);
  // Each file: its path going back; a rename switches it (and may need the old path's entries read first).
  const todo = paths.map((p) => ({ name: p, path: p, pos: end, at: new Array<Chain['at'][number]>(end + 1).fill(null), lastSeen: -1 }));
  while (todo.length) {
    const needs: string[] = [];
    for (let i = 0; i < todo.length; i++) {
      const f = todo[i];
      let blocked = false;
      while (f.pos >= 0) {
        if (!slices.has(f.path)) { needs.push(f.path); blocked = true; break; }
        const s = stateOf(f.pos, f.path);
        if (s && s.kind !== 'unknown' && f.lastSeen >= 0) {
          const later = f.at[f.lastSeen]!;
          if (later.state.kind !== 'absent' && s.kind === 'absent') {
            const old = (await renames(f.pos, f.lastSeen)).get(later.path);
            if (old && old !== f.path) { f.path = old; continue; }
          }
        }
        f.at[f.pos] = s ? { path: f.path, state: s } : null;
        if (s && s.kind !== 'unknown') f.lastSeen = f.pos;
        f.pos--;
      }
      if (!blocked) { out.set(f.name, { end, at: f.at }); todo.splice(i--, 1); }
    }
    if (needs.length) await read([...new Set(needs)]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// File-level history: which spans changed a file

/**
 * The origins of the changes of a chain after position `after` (−1: from the session's start, where a file present
 * at S1 counts as BEFORE_SESSION), oldest first: each span (or merged span) across which the file's fingerprint
 * (existence, content hash, mode) changed.
 */
export function changesOf(t: Timeline, chain: Chain, after: number): Origin[] {
  const out: Origin[] = [];
  let prev = -1;
  let prevFp: string | null = null;
  let gap: { reason: UnknownReason; detail: string } | null = null;
  for (let p = 0; p <= chain.end; p++) {
    const c = chain.at[p];
    const snap = t.snapshotAt(p);
    if (!c || c.state.kind === 'unknown') {
      gap ??= !c ? (snap.id === null ? { reason: snap.reason, detail: snap.detail } : { reason: 'EXPIRED', detail: 'pruned' })
        : { reason: (c.state as { reason: UnknownReason }).reason, detail: (c.state as { detail: string }).detail };
      continue;
    }
    // A file moved (its path changed: a rename followed) changed, though its lines did not.
    const fp = `${c.path}\u0000${fingerprint(c.state)!}`;
    if (prev < 0) {
      if (fingerprint(c.state) !== '' && p > after) out.push(p === 0 ? { kind: 'BEFORE_SESSION', execution: t.executionAt(0) } : t.merged(-1, p, gap?.reason ?? 'BOUNDARY_UNAVAILABLE', gap?.detail ?? 'the session\'s first boundary was not captured'));
    } else if (fp !== prevFp && p > after) {
      out.push(p === prev + 1 && !gap ? t.spanOrigin(p) : t.merged(prev, p, gap?.reason ?? 'BOUNDARY_UNAVAILABLE', gap?.detail ?? ''));
    }
    prev = p;
    prevFp = fp;
    gap = null;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Line-level: the walk

/** Runs of consecutive lines with the same origin (1-based start). */
export interface Run { start: number; count: number; origin: Origin }

export interface Walk {
  /** The file's lines at the end position, each with its origin; null when its content is not known there. */
  lines: { text: string; origin: Origin }[] | null;
  /** Why the content is not known at the end (null when it is). */
  unknown: { reason: UnknownReason | 'ABSENT'; omission: OmissionReason | null; detail: string } | null;
  /** With `mark`: the lines at that position (by 0-based index) that a later span removed, and which. */
  removedBy: Map<number, Origin>;
  /** With `mark`: the file's lines at that position (null when not known there). */
  marked: string[] | null;
}

interface LineState { text: string; origin: Origin; mark: number | null }

/** The stored contents of these hashes, as text (null: not UTF-8 text, or missing). */
async function texts(db: Db, hashes: readonly string[]): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (let i = 0; i < hashes.length; i += 200) {
    const rows = await db<{ hash: string; data: Buffer }[]>`SELECT hash, data FROM contents WHERE hash = ANY(${hashes.slice(i, i + 200) as string[]})`;
    for (const r of rows) out.set(r.hash, asText(r.data));
  }
  return out;
}

/** The contents a walk reads: each text version where the file's fingerprint differs from the previous observed one. */
function versionsOf(chain: Chain): Set<string> {
  const need = new Set<string>();
  let lastFp: string | null = null;
  for (let p = 0; p <= chain.end; p++) {
    const c = chain.at[p];
    if (!c || c.state.kind === 'unknown') continue;
    const fp = fingerprint(c.state);
    if (c.state.kind === 'text' && fp !== lastFp) need.add(c.state.hash);
    lastFp = fp;
  }
  return need;
}

/**
 * Walks a chain from the session's first boundary to its end, diffing the file's content wherever it changed, and
 * returns the origin of each line at the end. With `mark` (a position), the lines there are followed too, and each
 * one removed later says by which span (the `-` lines of a changeset starting there).
 */
export async function walk(db: Db, t: Timeline, chain: Chain, mark: number | null = null, read?: Map<string, string | null>): Promise<Walk> {
  const contents = read ?? await texts(db, [...versionsOf(chain)]);
  const removedBy = new Map<number, Origin>();
  let marked: string[] | null = null;
  let lines: LineState[] | null = null;
  let prev = -1;
  let prevFp: string | null = null;
  let gap: { reason: UnknownReason; detail: string } | null = null;
  let endUnknown: Walk['unknown'] = null;
  for (let p = 0; p <= chain.end; p++) {
    const c = chain.at[p];
    const snap = t.snapshotAt(p);
    if (!c || c.state.kind === 'unknown') {
      gap ??= !c ? (snap.id === null ? { reason: snap.reason, detail: snap.detail } : { reason: 'EXPIRED', detail: 'pruned' })
        : { reason: (c.state as { reason: UnknownReason }).reason, detail: (c.state as { detail: string }).detail };
      if (p === chain.end) endUnknown = { reason: gap.reason, omission: c?.state.kind === 'unknown' && c.state.reason === 'OMITTED' ? omissionOf(c.state.detail) : null, detail: c?.state.kind === 'unknown' ? c.state.detail : gap.detail };
      continue;
    }
    const fp = fingerprint(c.state);
    const origin: Origin = prev < 0
      ? (p === 0 ? { kind: 'BEFORE_SESSION', execution: t.executionAt(0) } : t.merged(-1, p, gap?.reason ?? 'BOUNDARY_UNAVAILABLE', gap?.detail ?? 'the session\'s first boundary was not captured'))
      : p === prev + 1 && !gap ? t.spanOrigin(p) : t.merged(prev, p, gap?.reason ?? 'BOUNDARY_UNAVAILABLE', gap?.detail ?? '');
    const text = c.state.kind === 'text' ? contents.get(c.state.hash) ?? null : null;
    const removeAll = (ls: LineState[] | null) => { for (const l of ls ?? []) if (l.mark !== null) removedBy.set(l.mark, origin); };
    if (fp === prevFp && prev >= 0) {
      // Unchanged: every line keeps its origin.
    } else if (c.state.kind === 'absent') {
      removeAll(lines);
      lines = [];
    } else if (text === null) {
      // Present, but its lines cannot be read here (binary, too large, ignored, not UTF-8).
      removeAll(lines);
      lines = null;
    } else if (lines === null) {
      lines = splitLines(text).map((l) => ({ text: l, origin, mark: null }));
    } else {
      const ops = editScript(lines.map((l) => l.text), splitLines(text));
      const next: LineState[] = [];
      for (const op of ops) {
        if (op.t === 0) next.push(lines[op.o]);
        else if (op.t === 1) { const l = lines[op.o]; if (l.mark !== null) removedBy.set(l.mark, origin); }
        else next.push({ text: op.line, origin, mark: null });
      }
      lines = next;
    }
    if (p === mark) {
      if (lines) lines = lines.map((l, i) => ({ ...l, mark: i }));
      marked = lines ? lines.map((l) => l.text) : null;
    }
    if (p === chain.end && lines === null) {
      const s = c.state as Extract<FileState, { kind: 'opaque' }>;
      endUnknown = c.state.kind === 'opaque' ? { reason: 'OMITTED', omission: s.reason, detail: s.detail } : { reason: 'OMITTED', omission: 'BINARY', detail: `${c.path} is not UTF-8 text` };
    }
    if (p === chain.end && c.state.kind === 'absent') endUnknown = { reason: 'ABSENT', omission: null, detail: `${c.path} does not exist at this boundary` };
    prev = p;
    prevFp = fp;
    gap = null;
  }
  return {
    lines: endUnknown ? null : (lines ?? []).map((l) => ({ text: l.text, origin: l.origin })),
    unknown: endUnknown, removedBy, marked,
  };
}

const omissionOf = (detail: string): OmissionReason => (/ignored/.test(detail) ? 'IGNORED' : 'CAPTURE_LIMIT');

const sameOrigin = (a: Origin, b: Origin): boolean => {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'UNKNOWN' && b.kind === 'UNKNOWN') {
    return a.reason === b.reason && a.outsideEdits === b.outsideEdits && a.executions.map((e) => e.id).join() === b.executions.map((e) => e.id).join();
  }
  return (a as { execution: BoundedExecution }).execution.id === (b as { execution: BoundedExecution }).execution.id;
};

/** Consecutive lines (1-based numbers, each with its origin, in order) as runs of one origin. */
export function runsOf(lines: readonly { line: number; origin: Origin }[]): Run[] {
  const out: Run[] = [];
  for (const l of lines) {
    const last = out[out.length - 1];
    if (last && last.start + last.count === l.line && sameOrigin(last.origin, l.origin)) last.count++;
    else out.push({ start: l.line, count: 1, origin: l.origin });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Blame and a changeset's attribution

export interface Blame {
  path: string;
  execution: BoundedExecution;
  side: BoundarySide;
  snapshotId: string | null;
  /** The text and its runs; or why there is none. */
  text: string | null;
  runs: Run[];
  unknown: Walk['unknown'];
  /** Every change of the file within the session up to this boundary, oldest first. */
  changes: Origin[];
}

/** The blame of a file at a boundary of a session's execution (the timeline read up to it). */
export async function blame(sql: Sql, sessionId: string, at: BoundedExecution, side: BoundarySide, path: string): Promise<Blame> {
  const t = await loadTimeline(sql, sessionId, at.sequence);
  const end = t.position(at.id, side);
  const snap = t.snapshotAt(end);
  const base = { path, execution: at, side, snapshotId: snap.id };
  if (snap.id === null) {
    return { ...base, text: null, runs: [], unknown: { reason: snap.reason, omission: null, detail: snap.detail }, changes: [] };
  }
  const chain = (await chains(sql, t, end, [path])).get(path)!;
  const w = await walk(sql, t, chain);
  const changes = changesOf(t, chain, -1);
  if (!w.lines) return { ...base, text: null, runs: [], unknown: w.unknown, changes };
  return {
    ...base, text: w.lines.map((l) => l.text).join(''), unknown: null, changes,
    runs: runsOf(w.lines.map((l, i) => ({ line: i + 1, origin: l.origin }))),
  };
}

/** A changeset's extent on the timeline: its start and end positions. */
export interface Extent { timeline: Timeline; start: number; end: number }

/**
 * The extent of a changeset between two snapshots of a session, on its timeline (read up to the execution whose
 * boundary ends it): an execution's own (its start to its end), a range (`from`'s start to `to`'s end), a drift
 * (the previous end to the execution's start).
 */
export async function extentOf(db: Db, sessionId: string, startExecution: BoundedExecution, startSide: BoundarySide, endExecution: BoundedExecution, endSide: BoundarySide): Promise<Extent> {
  const timeline = await loadTimeline(db, sessionId, endExecution.sequence);
  return { timeline, start: timeline.position(startExecution.id, startSide), end: timeline.position(endExecution.id, endSide) };
}

export interface FileAttribution {
  /** The spans of the changeset that changed the file, oldest first (the last one changed it last). */
  changes: Origin[];
  /** Runs of the patch's lines: removed lines (OLD side, numbered in the start's file) and added ones (NEW side). */
  removed: Run[];
  added: Run[];
}

/**
 * The attribution of files of a changeset (by their path at its end, and their path at its start when renamed):
 * which spans of its extent changed each, and, with `lines`, who removed each `-` line and who last changed each
 * `+` line of its patch (the patch is the diff of the start's content and the end's: the same diff is computed
 * here). A `+` line the walk kept from before the changeset's start (a line the diff of the two ends counts as
 * added though it only moved) keeps its own origin, as `git blame` would say.
 */
export async function attributeFiles(sql: Sql, x: Extent, files: readonly { path: string; status: string }[], lines: boolean): Promise<Map<string, FileAttribution>> {
  const out = new Map<string, FileAttribution>();
  if (!files.length || x.start < 0 || x.end < 0) return out;
  const cs = await chains(sql, x.timeline, x.end, files.map((f) => f.path));
  // Every version of every file read at once.
  const read = lines ? await texts(sql, [...new Set([...cs.values()].flatMap((c) => [...versionsOf(c)]))]) : undefined;
  for (const f of files) {
    const chain = cs.get(f.path)!;
    const changes = changesOf(x.timeline, chain, x.start);
    if (!lines) { out.set(f.path, { changes, removed: [], added: [] }); continue; }
    const w = await walk(sql, x.timeline, chain, x.start, read);
    const removed: { line: number; origin: Origin }[] = [];
    const added: { line: number; origin: Origin }[] = [];
    const before = w.marked ?? [];
    const after = w.lines?.map((l) => l.text) ?? [];
    if ((w.marked || f.status === 'ADDED') && (w.lines || f.status === 'DELETED')) {
      for (const op of editScript(before, after)) {
        if (op.t === 1) {
          const by = w.removedBy.get(op.o);
          if (by) removed.push({ line: op.o + 1, origin: by });
        } else if (op.t === 2) added.push({ line: op.n + 1, origin: w.lines![op.n].origin });
      }
    }
    out.set(f.path, { changes, removed: runsOf(removed), added: runsOf(added) });
  }
  return out;
}
