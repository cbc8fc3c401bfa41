import type { Db, Sql } from '../db/connection.js';
import {
  computeChangeset, differingContents, insertFileRows,
  type BoundaryReason, type BoundedExecution, type ChangesetFileRow, type CoverageReason, type Omission,
} from './changesets.js';
import { anyOf } from './shard.js';
import { contentLockShared, readPolicy, type Manifest } from './snapshots.js';

/**
 * Changesets between two boundary snapshots of one session (CONTRACT section 11): the changes of a range
 * of executions (`Session.changes`: the start boundary of one execution to the end boundary of a later
 * one) and the drift before an execution (`Execution.driftBefore`: the previous execution's end boundary
 * to its own start boundary, what changed while no execution of the session ran).
 *
 * Computed like an execution's changeset (computeChangeset over the stored manifests and contents, never
 * the live worktree) the first time a pair is read, and stored, once per (session, start, end): manifests
 * never change, so a pair's changeset never does either, and every later read returns the stored rows.
 * Not a state change of the session (nothing a journal event says or replay rebuilds): a derived copy,
 * written outside the session lock with `ON CONFLICT DO NOTHING`, so concurrent first reads store it once.
 * Retention deletes a pair's rows in the transaction that prunes either of its snapshots
 * (pruneChangesets), after which the pair reads EXPIRED.
 */

/** Two snapshots of one session: where a changeset between them starts and ends. */
export interface SnapshotPair { sessionId: string; startSnapshotId: string; endSnapshotId: string }

export interface SnapshotChangesetRow extends SnapshotPair {
  coverage: 'COMPLETE' | 'OMITTED';
  omissions: Omission[];
  fileCount: number;
  additions: number;
  deletions: number;
  patchBytes: number;
  frozenAt: Date;
}

/** A file row of a changeset between snapshots; without `patch` when listed only. */
export type SnapshotChangesetFile = Omit<ChangesetFileRow, 'executionId' | 'patch'> & SnapshotPair & { patch?: string | null };

/** Where the pair of a range or a drift comes from, or why there is none. */
export type PairOf =
  | { kind: 'pair'; pair: SnapshotPair }
  | { kind: 'unavailable'; reason: CoverageReason; boundaryReason: BoundaryReason; detail: string };

const unavailable = (boundaryReason: BoundaryReason, detail: string): PairOf =>
  ({ kind: 'unavailable', reason: boundaryReason === 'NOT_SETTLED' ? 'NOT_SETTLED' : 'BOUNDARY_UNAVAILABLE', boundaryReason, detail });

/** Why an execution's end boundary is missing (null: it has one). */
function endMissing(e: BoundedExecution): PairOf | null {
  if (e.status === 'RUNNING') return unavailable('NOT_SETTLED', `Execution ${e.sequence} is still running: its end boundary does not exist yet.`);
  if (e.status === 'ABANDONED') return unavailable('HOST_LOST', `HOST_LOST: the host was lost before execution ${e.sequence} settled: it has no end boundary.`);
  if (!e.endSnapshotId) return unavailable('END_NOT_CAPTURED', `END_NOT_CAPTURED: the host did not capture a snapshot when execution ${e.sequence} settled.`);
  return null;
}
function startMissing(e: BoundedExecution): PairOf | null {
  if (!e.startSnapshotId) return unavailable('START_NOT_CAPTURED', `START_NOT_CAPTURED: the host did not capture a snapshot when execution ${e.sequence} began.`);
  return null;
}

/** The pair of `Session.changes(from, to)`: the start boundary of `from`, the end boundary of `to` (same session, from not after to). */
export function rangePair(from: BoundedExecution, to: BoundedExecution): PairOf {
  return startMissing(from) ?? endMissing(to)
    ?? { kind: 'pair', pair: { sessionId: to.sessionId, startSnapshotId: from.startSnapshotId!, endSnapshotId: to.endSnapshotId! } };
}

/** The pair of `Execution.driftBefore`: the end boundary of the previous execution, the start boundary of this one. */
export function driftPair(previous: BoundedExecution, e: BoundedExecution): PairOf {
  return endMissing(previous) ?? startMissing(e)
    ?? { kind: 'pair', pair: { sessionId: e.sessionId, startSnapshotId: previous.endSnapshotId!, endSnapshotId: e.startSnapshotId! } };
}

export const pairKey = (p: SnapshotPair) => `${p.sessionId}|${p.startSnapshotId}|${p.endSnapshotId}`;

/** The sessions of these pairs and their keys as arrays (the statements below join them with unnest). */
function keysOf(pairs: readonly SnapshotPair[]) {
  return {
    sessions: [...new Set(pairs.map((p) => p.sessionId))],
    s: pairs.map((p) => p.sessionId), a: pairs.map((p) => p.startSnapshotId), b: pairs.map((p) => p.endSnapshotId),
  };
}

/** The stored changesets of these pairs (those stored: a pair not read before has none yet). Read on their sessions' shards. */
export async function snapshotChangesetRows(db: Db, pairs: readonly SnapshotPair[]): Promise<SnapshotChangesetRow[]> {
  if (!pairs.length) return [];
  const k = keysOf(pairs);
  return db<SnapshotChangesetRow[]>`
    SELECT r.* FROM snapshot_changesets r
    JOIN unnest(${k.s}::text[], ${k.a}::text[], ${k.b}::text[]) AS k(s, a, b)
      ON r.session_id = k.s AND r.start_snapshot_id = k.a AND r.end_snapshot_id = k.b
    WHERE r.session_id = ${anyOf(db, k.sessions)}`;
}

/** The files of the stored changesets of these pairs, in order; with their patches or listed only. */
export async function snapshotChangesetFiles(db: Db, pairs: readonly SnapshotPair[], patches: boolean): Promise<SnapshotChangesetFile[]> {
  if (!pairs.length) return [];
  const k = keysOf(pairs);
  return db<SnapshotChangesetFile[]>`
    SELECT f.session_id, f.start_snapshot_id, f.end_snapshot_id, f.ord, f.path, f.status, f.additions, f.deletions, f.binary,
      f.previous_path, f.similarity
      ${patches ? db`, f.patch` : db``}
    FROM snapshot_changeset_files f
    JOIN unnest(${k.s}::text[], ${k.a}::text[], ${k.b}::text[]) AS k(s, a, b)
      ON f.session_id = k.s AND f.start_snapshot_id = k.a AND f.end_snapshot_id = k.b
    WHERE f.session_id = ${anyOf(db, k.sessions)}
    ORDER BY f.session_id, f.start_snapshot_id, f.end_snapshot_id, f.ord`;
}

/** Single files of stored changesets between snapshots, by (pair, path): what a review UI loads as a file is opened. */
export async function snapshotChangesetFilesAt(db: Db, keys: readonly (SnapshotPair & { path: string })[]): Promise<SnapshotChangesetFile[]> {
  if (!keys.length) return [];
  const k = keysOf(keys);
  return db<SnapshotChangesetFile[]>`
    SELECT f.session_id, f.start_snapshot_id, f.end_snapshot_id, f.ord, f.path, f.status, f.additions, f.deletions, f.binary, f.patch,
      f.previous_path, f.similarity
    FROM snapshot_changeset_files f
    JOIN unnest(${k.s}::text[], ${k.a}::text[], ${k.b}::text[], ${keys.map((x) => x.path)}::text[]) AS k(s, a, b, path)
      ON f.session_id = k.s AND f.start_snapshot_id = k.a AND f.end_snapshot_id = k.b AND f.path = k.path
    WHERE f.session_id = ${anyOf(db, k.sessions)}`;
}

/** A changeset between snapshots with its files (with patches), as stored; null: a snapshot of the pair has expired. */
export interface Frozen { row: SnapshotChangesetRow; files: SnapshotChangesetFile[] }

/**
 * The changeset of a pair, computed from the stored manifests and contents and stored (once: a pair stored
 * meanwhile by another reader is read back instead). Null when a manifest of the pair was pruned by
 * retention. Under the shared content lock, so retention cannot prune a manifest or content this reads
 * before the rows are stored (its sweep takes the lock exclusively and then deletes the pairs it prunes).
 */
export async function freezeSnapshotChangeset(sql: Sql, pair: SnapshotPair): Promise<Frozen | null> {
  return sql.begin(async (tx) => {
    await contentLockShared(tx);
    const snaps = await tx<{ id: string; manifest: Manifest | null }[]>`
      SELECT id, manifest FROM snapshots WHERE session_id = ${pair.sessionId} AND id = ANY(${[pair.startSnapshotId, pair.endSnapshotId]})`;
    const start = snaps.find((s) => s.id === pair.startSnapshotId)?.manifest;
    const end = snaps.find((s) => s.id === pair.endSnapshotId)?.manifest;
    if (!start || !end) return null;
    const [policy, contents] = await Promise.all([readPolicy(tx), differingContents(tx, start, end)]);
    const c = computeChangeset(start, end, contents, policy);
    const [row] = await tx<SnapshotChangesetRow[]>`
      INSERT INTO snapshot_changesets (session_id, start_snapshot_id, end_snapshot_id, coverage, omissions, file_count, additions, deletions, patch_bytes)
      VALUES (${pair.sessionId}, ${pair.startSnapshotId}, ${pair.endSnapshotId}, ${c.omissions.length ? 'OMITTED' : 'COMPLETE'},
        ${tx.json(c.omissions as any)}, ${c.files.length}, ${c.additions}, ${c.deletions}, ${c.patchBytes})
      ON CONFLICT DO NOTHING RETURNING *`;
    if (!row) {
      // Stored by a concurrent first read (committed: the conflict waited for it).
      const [stored] = await snapshotChangesetRows(tx, [pair]);
      return { row: stored, files: await snapshotChangesetFiles(tx, [pair], true) };
    }
    const files = c.files.map((f, ord) => ({
      session_id: pair.sessionId, start_snapshot_id: pair.startSnapshotId, end_snapshot_id: pair.endSnapshotId, ord,
      path: f.path, status: f.status, additions: f.additions, deletions: f.deletions, binary: f.binary, patch: f.patch,
      previous_path: f.previousPath, similarity: f.similarity,
    }));
    await insertFileRows(tx, 'snapshot_changeset_files', files);
    return {
      row,
      files: c.files.map((f, ord) => ({ sessionId: pair.sessionId, startSnapshotId: pair.startSnapshotId, endSnapshotId: pair.endSnapshotId, ord, ...f })),
    };
  });
}

/**
 * The executions of a session from sequence `from` to `to` (both included) whose own changesets are not
 * complete (omitted, unavailable, pruned, not frozen yet, or none recorded), in order.
 */
export async function incompleteExecutionsBetween<T extends object>(db: Db, ranges: readonly { sessionId: string; from: number; to: number }[]):
  Promise<{ sessionId: string; from: number; to: number; execution: T }[]> {
  if (!ranges.length) return [];
  const rows = await db<(T & { rangeFrom: number; rangeTo: number; sessionId: string })[]>`
    SELECT e.*, k.lo AS range_from, k.hi AS range_to FROM executions e
    LEFT JOIN changesets c ON c.session_id = e.session_id AND c.execution_id = e.id
    JOIN unnest(${ranges.map((r) => r.sessionId)}::text[], ${ranges.map((r) => r.from)}::int[], ${ranges.map((r) => r.to)}::int[]) AS k(s, lo, hi)
      ON e.session_id = k.s AND e.sequence BETWEEN k.lo AND k.hi
    WHERE e.session_id = ${anyOf(db, [...new Set(ranges.map((r) => r.sessionId))])}
      AND (c.execution_id IS NULL OR c.coverage <> 'COMPLETE' OR c.pruned_at IS NOT NULL)
    ORDER BY e.session_id, e.sequence`;
  return rows.map(({ rangeFrom, rangeTo, ...e }) => ({ sessionId: e.sessionId, from: rangeFrom, to: rangeTo, execution: e as unknown as T }));
}
