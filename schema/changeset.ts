import type { GraphQLResolveInfo } from 'graphql';
import { builder, allow } from './builder.js';
import { ContentMissingError, HostNotFoundError, InvalidRequestError, SessionNotFoundError } from './errors.js';
import { ExecutionRef, SessionRef } from './refs.js';
import { ExecutionNotFoundError } from './errors.js';
import type { SessionRow } from '../domain/rows.js';
import { driftPair, rangePair, type PairOf, type SnapshotChangesetFile, type SnapshotChangesetRow, type SnapshotPair } from '../domain/snapshot-changes.js';
import {
  boundaryOf, coverageOf, hasFiles,
  type BoundaryView, type BoundedExecution, type ChangesetCounts, type ChangesetFileRow, type ChangesetRow, type CoverageView, type Omission,
} from '../domain/changesets.js';
import type { Context } from '../resolvers/context.js';
import type { ChangesetKey } from '../domain/review-comments.js';
import { planChangeset, type ChangesetPlan } from '../resolvers/plans.js';
import {
  changesBetween, changesetRowOf, fileBetween, fileOfChangeset, filesOfChangeset, incompleteExecutions, previousExecution, snapshotById,
  type ExecutionRead, type ListedFile,
} from '../resolvers/loaders.js';
import { createSnapshot, missingContents, readPolicy, setPolicy, uploadContents, type Policy, type SnapshotRow } from '../domain/snapshots.js';

// ---- types ---------------------------------------------------------------------------------------

export const SnapshotRef = builder.objectRef<SnapshotRow>('Snapshot').implement({
  description: 'A manifest of a worktree captured by a host (path, content hash, size, mode, binary flag, and what was left out).',
  fields: (t) => ({
    id: t.exposeID('id'),
    capturedAt: t.expose('capturedAt', { type: 'DateTime' }),
    fileCount: t.exposeInt('fileCount', { description: 'Files captured (stored or over the size limit); ignored paths not counted.' }),
    byteSize: t.float({ description: 'Total bytes of the files counted in fileCount.', resolve: (s) => Number(s.byteSize) }),
  }),
});

const BoundaryReasonEnum = builder.enumType('BoundaryUnavailableReason', {
  values: ['NOT_SETTLED', 'START_NOT_CAPTURED', 'END_NOT_CAPTURED', 'HOST_LOST', 'EXPIRED'] as const,
});
const CoverageReasonEnum = builder.enumType('CoverageUnavailableReason', { values: ['NOT_SETTLED', 'BOUNDARY_UNAVAILABLE', 'EXPIRED'] as const });
export const OmissionReasonEnum = builder.enumType('OmissionReason', { values: ['IGNORED', 'SIZE', 'BINARY', 'TRUNCATED', 'CAPTURE_LIMIT'] as const });
const FileChangeStatusEnum = builder.enumType('FileChangeStatus', { values: ['ADDED', 'MODIFIED', 'DELETED', 'RENAMED'] as const });
const EntryKindEnum = builder.enumType('SnapshotEntryKind', {
  values: {
    FILE: { description: 'A file whose content was uploaded.' },
    OVERSIZE: { description: 'A file over the per-file capture limit: hash and size only.' },
    IGNORED: { description: 'A file excluded by ignore rules: metadata only (size, mtime, optionally hash).' },
    IGNORED_DIR: { description: 'A directory excluded by ignore rules, recorded as one fingerprint of its metadata.' },
  } as const,
});

type SnapshotBoundaryView = Extract<BoundaryView, { kind: 'snapshot' }>;
type UnavailableBoundaryView = Extract<BoundaryView, { kind: 'unavailable' }>;
const SnapshotBoundary = builder.objectRef<SnapshotBoundaryView>('SnapshotBoundary').implement({
  fields: (t) => ({
    start: t.field({ type: SnapshotRef, resolve: async (b, _a, ctx) => (await snapshotById(ctx).load(b.startId))! }),
    end: t.field({ type: SnapshotRef, resolve: async (b, _a, ctx) => (await snapshotById(ctx).load(b.endId))! }),
  }),
});
const BoundaryUnavailable = builder.objectRef<UnavailableBoundaryView>('BoundaryUnavailable').implement({
  fields: (t) => ({
    reason: t.expose('reason', { type: BoundaryReasonEnum }),
    detail: t.exposeString('detail'),
  }),
});
const BoundaryUnion = builder.unionType('Boundary', {
  types: [SnapshotBoundary, BoundaryUnavailable],
  resolveType: (v: BoundaryView) => (v.kind === 'snapshot' ? 'SnapshotBoundary' : 'BoundaryUnavailable'),
});

const OmissionRef = builder.objectRef<Omission>('Omission').implement({
  fields: (t) => ({
    path: t.exposeString('path', { description: 'The changed path left out; with CAPTURE_LIMIT the subtree not scanned.' }),
    reason: t.expose('reason', { type: OmissionReasonEnum }),
    detail: t.exposeString('detail'),
  }),
});

type CompleteCoverageView = Extract<CoverageView, { kind: 'complete' }>;
type OmittedCoverageView = Extract<CoverageView, { kind: 'omitted' }>;
type UnavailableCoverageView = Extract<CoverageView, { kind: 'unavailable' }>;
/** A coverage as a field reads it: with, for `Session.changes`, the executions of the range whose own changesets are not complete. */
type WithIncomplete<T> = T & { incompleteExecutions?: readonly BoundedExecution[] };
const INCOMPLETE_EXECUTIONS = 'Session.changes: the executions of the range (from and to included), in order, whose own changesets are not CoverageComplete (omitted, unavailable, expired, or still running): what they changed cannot all be told apart from the rest of the range, though the range itself is exactly what its coverage says. Empty for an execution\'s changeset and for driftBefore.';
const CoverageComplete = builder.objectRef<WithIncomplete<CompleteCoverageView>>('CoverageComplete').implement({
  description: 'Both boundaries exist and nothing relevant was left out. With an empty file list: the execution changed nothing.',
  fields: (t) => ({
    fileCount: t.exposeInt('fileCount'),
    incompleteExecutions: t.field({ type: [ExecutionRef], description: INCOMPLETE_EXECUTIONS, resolve: (c) => c.incompleteExecutions ?? [] }),
  }),
});
const CoverageOmitted = builder.objectRef<WithIncomplete<OmittedCoverageView>>('CoverageOmitted').implement({
  description: 'The changeset is real, but some evidence is missing: each omission says which path and why.',
  fields: (t) => ({
    omissions: t.expose('omissions', { type: [OmissionRef] }),
    incompleteExecutions: t.field({ type: [ExecutionRef], description: INCOMPLETE_EXECUTIONS, resolve: (c) => c.incompleteExecutions ?? [] }),
  }),
});
const CoverageUnavailable = builder.objectRef<WithIncomplete<UnavailableCoverageView>>('CoverageUnavailable').implement({
  fields: (t) => ({
    reason: t.expose('reason', { type: CoverageReasonEnum }),
    detail: t.exposeString('detail'),
    incompleteExecutions: t.field({ type: [ExecutionRef], description: INCOMPLETE_EXECUTIONS, resolve: (c) => c.incompleteExecutions ?? [] }),
  }),
});
const CoverageUnion = builder.unionType('Coverage', {
  types: [CoverageComplete, CoverageOmitted, CoverageUnavailable],
  resolveType: (v: CoverageView) => (v.kind === 'complete' ? 'CoverageComplete' : v.kind === 'omitted' ? 'CoverageOmitted' : 'CoverageUnavailable'),
});

/**
 * A file row as a changeset read it: whole (with its patch), or listed (without: read when no patch
 * was planned, resolvers/plans.ts). A listed row's patch, asked all the same, is loaded by its path.
 */
export type FileRow = ChangesetFileRow | ListedFile | SnapshotChangesetFile;
function patchOf(f: FileRow, ctx: Context): string | null | Promise<string | null> {
  if ('patch' in f && f.patch !== undefined) return f.patch ?? null;
  const file = 'executionId' in f
    ? fileOfChangeset(ctx).load({ executionId: f.executionId, path: f.path })
    : fileBetween(ctx).load({ ...(f as unknown as SnapshotPair), path: f.path });
  return file.then((r) => r?.patch ?? null);
}

export const FileChangeRef = builder.objectRef<FileRow>('FileChange').implement({
  fields: (t) => ({
    path: t.exposeString('path', { description: 'The file\'s path at the end of the changeset (for RENAMED its new path).' }),
    status: t.expose('status', {
      type: FileChangeStatusEnum,
      description: 'RENAMED: a file deleted from `previousPath` and added at `path` with the same content (by hash) or a similar one (`similarity` at least 50%, as git measures it), one file whose patch holds only their differences.',
    }),
    previousPath: t.string({ nullable: true, description: 'RENAMED: the path the file had at the start of the changeset. Null for every other status.',
      resolve: (f) => f.previousPath ?? null }),
    similarity: t.int({ nullable: true, description: 'RENAMED: how much of the two contents is the same, in percent, as git\'s similarity index (the bytes of the lines they share over the larger one\'s size): 100 only for the same bytes. Null for every other status.',
      resolve: (f) => f.similarity ?? null }),
    additions: t.exposeInt('additions'),
    deletions: t.exposeInt('deletions'),
    binary: t.exposeBoolean('binary'),
    patch: t.string({ nullable: true, description: 'Null where the content was not rendered (see the coverage omissions).', resolve: (f, _a, ctx) => patchOf(f, ctx) }),
  }),
});

/**
 * A changeset as its fields read it: the execution, its frozen row (null while running or when no
 * boundary was recorded; only its counts when its plan read no more of it) and its files when its plan
 * reads them (listed ones, without patches, when it reads no patch), all read before any field of it
 * resolves. The counts are getters, exposed like a row's columns.
 */
class ChangesetParent {
  constructor(readonly execution: BoundedExecution, readonly row: ChangesetRow | ChangesetCounts | null, readonly files: readonly FileRow[] | null,
    /** Session.changes of one execution (from = to): its own changeset, with the range's incomplete executions. */
    readonly incomplete?: readonly BoundedExecution[]) {}
  get fileCount(): number { return readable(this)?.fileCount ?? 0; }
  get additions(): number { return readable(this)?.additions ?? 0; }
  get deletions(): number { return readable(this)?.deletions ?? 0; }
}
const readable = (c: ChangesetParent): ChangesetCounts | null => (c.execution.status !== 'RUNNING' && hasFiles(c.row) ? c.row : null);

/**
 * A changeset between two snapshots (Session.changes over several executions, Execution.driftBefore):
 * `execution` is the one whose boundary ends it (`to`; the execution whose drift it is), `coverage` what
 * the read found (the stored row's, or why there is none), `row` and `files` the stored changeset (null
 * when unavailable; files null when its plan reads none).
 */
class BetweenParent {
  /** Which changeset this is (a range, from `fromExecutionID`; or the drift before `execution`): what review comments are anchored on. */
  key: ChangesetKey = { kind: 'DRIFT', executionID: '', fromExecutionID: null };
  constructor(readonly execution: BoundedExecution, readonly pair: SnapshotPair | null, readonly coverage: WithIncomplete<CoverageView>,
    readonly row: SnapshotChangesetRow | null, readonly files: readonly SnapshotChangesetFile[] | null, readonly boundary: BoundaryView) {}
  get fileCount(): number { return this.row?.fileCount ?? 0; }
  get additions(): number { return this.row?.additions ?? 0; }
  get deletions(): number { return this.row?.deletions ?? 0; }
}
export type AnyChangeset = ChangesetParent | BetweenParent;

/** The changeset a Changeset object is, as review comments name it (schema/review-comments.ts Changeset.comments). */
export function changesetKeyOf(c: AnyChangeset): ChangesetKey & { sessionId: string } {
  if (c instanceof BetweenParent) return { ...c.key, executionID: c.key.executionID || c.execution.id, sessionId: c.execution.sessionId };
  return { kind: 'EXECUTION', executionID: c.execution.id, fromExecutionID: null, sessionId: c.execution.sessionId };
}

/** The whole frozen row of an execution's changeset: the one read, or loaded when its plan read only the counts. */
function wholeRowOf(c: ChangesetParent, ctx: Context): ChangesetRow | null | Promise<ChangesetRow | null> {
  if (c.execution.status === 'RUNNING') return null;
  return !c.row || 'omissions' in c.row ? (c.row as ChangesetRow | null) : changesetRowOf(ctx).load(c.execution.id);
}
/** The files of a changeset: those read, or loaded when its plan read none (none when they are not readable). */
function filesOf(c: AnyChangeset, ctx: Context): readonly FileRow[] | Promise<readonly FileRow[]> {
  if (c instanceof BetweenParent) return !c.row ? [] : c.files ?? changesBetween(ctx).load({ pair: c.pair!, files: 'patches' }).then((r) => r?.files ?? []);
  return !readable(c) ? [] : c.files ?? filesOfChangeset(ctx).load(c.execution.id);
}
const hasReadableFiles = (c: AnyChangeset): boolean => (c instanceof BetweenParent ? !!c.row : !!readable(c));
function coverageOfChangeset(c: AnyChangeset, ctx: Context): WithIncomplete<CoverageView> | Promise<WithIncomplete<CoverageView>> {
  if (c instanceof BetweenParent) return c.coverage;
  const view = (row: ChangesetRow | null): WithIncomplete<CoverageView> => {
    const v: WithIncomplete<CoverageView> = coverageOf(c.execution, row);
    if (c.incomplete) v.incompleteExecutions = c.incomplete;
    return v;
  };
  const row = wholeRowOf(c, ctx);
  return row instanceof Promise ? row.then(view) : view(row);
}
function boundaryOfChangeset(c: AnyChangeset, ctx: Context): BoundaryView | Promise<BoundaryView> {
  if (c instanceof BetweenParent) return c.boundary;
  const row = wholeRowOf(c, ctx);
  return row instanceof Promise ? row.then((r) => boundaryOf(c.execution, r)) : boundaryOf(c.execution, row);
}
/** The whole unified diff: the files' patches in path order, each loaded when its row was listed without one. */
function patchOfChangeset(c: AnyChangeset, ctx: Context): string | null | Promise<string | null> {
  if (!hasReadableFiles(c)) return null;
  const join = (files: readonly FileRow[]) => {
    const patches = files.map((f) => patchOf(f, ctx));
    return patches.some((p) => p instanceof Promise) ? Promise.all(patches).then((ps) => ps.map((p) => p ?? '').join('')) : patches.map((p) => p ?? '').join('');
  };
  const files = filesOf(c, ctx);
  return files instanceof Promise ? files.then(join) : join(files);
}

export const ChangesetRef = builder.objectRef<AnyChangeset>('Changeset').implement({
  description: 'The file changes of one execution, frozen when it settled from its two boundary snapshots; or, for Session.changes and Execution.driftBefore, the changes between two boundary snapshots of a session, computed from the stored snapshots once and stored.',
  fields: (t) => ({
    execution: t.field({
      type: ExecutionRef,
      description: 'The execution whose changeset this is; for Session.changes the execution `to` (whose end boundary ends it); for driftBefore the execution whose start boundary ends it.',
      resolve: (c) => c.execution,
    }),
    boundary: t.field({
      type: BoundaryUnion,
      description: 'The two snapshots this changeset goes between (for an execution\'s changeset its own boundary; for Session.changes the start of `from` and the end of `to`; for driftBefore the end of the previous execution and the start of this one), or why there are none: with Snapshot.text, what a review page expands context from.',
      resolve: (c, _a, ctx) => boundaryOfChangeset(c, ctx),
    }),
    coverage: t.field({ type: CoverageUnion, resolve: (c, _a, ctx) => coverageOfChangeset(c, ctx) }),
    files: t.field({ type: [FileChangeRef], resolve: (c, _a, ctx) => filesOf(c, ctx) }),
    file: t.field({
      type: FileChangeRef,
      nullable: true,
      description: 'One file of the changeset by its path (null when it did not change, or coverage is unavailable): lets a client load each file\'s patch as it is opened instead of every patch at once.',
      args: { path: t.arg.string({ required: true }) },
      resolve: (c, { path }, ctx) => {
        if (!hasReadableFiles(c)) return null;
        if (c instanceof BetweenParent) return fileBetween(ctx).load({ ...c.pair!, path });
        return fileOfChangeset(ctx).load({ executionId: c.execution.id, path });
      },
    }),
    fileCount: t.exposeInt('fileCount'),
    additions: t.exposeInt('additions'),
    deletions: t.exposeInt('deletions'),
    patch: t.string({
      nullable: true,
      description: 'The whole unified diff (the rendered file patches in path order); null when coverage is unavailable.',
      resolve: (c, _a, ctx) => patchOfChangeset(c, ctx),
    }),
  }),
});

/**
 * The changeset of an execution as its plan asks: what the execution's own read brought along
 * (ExecutionRead.changesetRead: a page of executions, or execution(id), read it in the same statement)
 * when that covers the plan, synchronously; else one batched load of its row and of its files.
 */
function changesetOf(e: ExecutionRead, ctx: Context, plan: ChangesetPlan, incomplete?: readonly BoundedExecution[]): ChangesetParent | Promise<ChangesetParent> {
  if (e.status === 'RUNNING') return new ChangesetParent(e, null, null, incomplete);
  const read = e.changesetRead;
  const row = read && (read.whole || plan.row === 'counts') ? read.row : undefined;
  const files = plan.files === 'none' ? null : read?.files && (read.patches || plan.files === 'list') ? read.files : undefined;
  if (row !== undefined && files !== undefined) return new ChangesetParent(e, row, files, incomplete);
  return Promise.all([row !== undefined ? row : changesetRowOf(ctx).load(e.id), files !== undefined ? files : filesOfChangeset(ctx).load(e.id)])
    .then(([row, files]) => new ChangesetParent(e, row, files, incomplete));
}

builder.objectFields(ExecutionRef, (t) => ({
  boundary: t.field({
    type: BoundaryUnion,
    resolve: (e, _a, ctx) => {
      if (e.status === 'RUNNING') return boundaryOf(e, null);
      const read = e.changesetRead;
      if (read?.whole) return boundaryOf(e, read.row as ChangesetRow | null);
      return changesetRowOf(ctx).load(e.id).then((row) => boundaryOf(e, row));
    },
  }),
  changeset: t.field({ type: ChangesetRef, resolve: (e, _a, ctx, info) => changesetOf(e, ctx, planChangeset(info)) }),
  driftBefore: t.field({
    type: ChangesetRef,
    nullable: true,
    description: 'What changed in the worktree between the end boundary of the previous execution of the session (by sequence) and the start boundary of this one, while no execution of the session ran (the user editing, another tool): empty with CoverageComplete when nothing did; CoverageUnavailable when either boundary is missing or expired. Null for the first execution of a session, which has no previous boundary.',
    resolve: (e, _a, ctx, info) => driftOf(e, ctx, planChangeset(info)),
  }),
}));

/** What a changeset between snapshots reads as: its stored row, or why there is none. */
function betweenOf(execution: BoundedExecution, of: PairOf, ctx: Context, plan: ChangesetPlan, incomplete: readonly BoundedExecution[] | undefined): BetweenParent | Promise<BetweenParent> {
  if (of.kind === 'unavailable') {
    return new BetweenParent(execution, null, { kind: 'unavailable', reason: of.reason, detail: of.detail, incompleteExecutions: incomplete }, null, null,
      { kind: 'unavailable', reason: of.boundaryReason, detail: of.detail });
  }
  return changesBetween(ctx).load({ pair: of.pair, files: plan.files }).then((read) => {
    if (!read) {
      const detail = 'A boundary snapshot was pruned by the retention policy.';
      return new BetweenParent(execution, of.pair, { kind: 'unavailable', reason: 'EXPIRED', detail, incompleteExecutions: incomplete }, null, null,
        { kind: 'unavailable', reason: 'EXPIRED', detail });
    }
    const { row } = read;
    const coverage: WithIncomplete<CoverageView> = row.coverage === 'OMITTED'
      ? { kind: 'omitted', omissions: row.omissions, incompleteExecutions: incomplete }
      : { kind: 'complete', fileCount: row.fileCount, incompleteExecutions: incomplete };
    return new BetweenParent(execution, of.pair, coverage, row, read.files, { kind: 'snapshot', startId: of.pair.startSnapshotId, endId: of.pair.endSnapshotId });
  });
}

/** Execution.driftBefore: the changeset from the previous execution's end boundary to this one's start (null for the first). */
async function driftOf(e: BoundedExecution, ctx: Context, plan: ChangesetPlan): Promise<BetweenParent | null> {
  if (e.sequence <= 1) return null;
  const previous = await previousExecution(ctx).load({ sessionId: e.sessionId, sequence: e.sequence });
  if (!previous) return null;
  const drift = await betweenOf(e, driftPair(previous, e), ctx, plan, undefined);
  drift.key = { kind: 'DRIFT', executionID: e.id, fromExecutionID: null };
  return drift;
}

/**
 * Session.changes(from, to): both executions of this session (else ExecutionNotFoundError when missing
 * or outside the caller's scope, InvalidRequestError when of another session), `from` not after `to`. One
 * execution (from = to) reads its own frozen changeset; a longer range the changeset between the start
 * boundary of `from` and the end boundary of `to`. Either way with the range's incomplete executions.
 */
async function sessionChanges(s: SessionRow, fromID: string, toID: string, ctx: Context, info: GraphQLResolveInfo): Promise<AnyChangeset> {
  const [from, to] = await ExecutionRef.getDataloader(ctx).loadMany([fromID, toID]);
  if (!from || from instanceof Error) throw new ExecutionNotFoundError(fromID);
  if (!to || to instanceof Error) throw new ExecutionNotFoundError(toID);
  for (const [field, e] of [['from', from], ['to', to]] as const) {
    if (e.sessionId !== s.id) throw new InvalidRequestError(field, `Execution ${e.id} belongs to another session than ${s.id}.`);
  }
  if (from.sequence > to.sequence) {
    throw new InvalidRequestError('to', `Execution ${to.id} (sequence ${to.sequence}) comes before execution ${from.id} (sequence ${from.sequence}): a range goes from an execution to the same or a later one.`);
  }
  const incomplete = incompleteExecutions(ctx).load({ sessionId: s.id, from: from.sequence, to: to.sequence });
  const plan = planChangeset(info);
  if (from.id === to.id) {
    const [list, changeset] = await Promise.all([incomplete, changesetOf(to, ctx, plan)]);
    return new ChangesetParent(changeset.execution, changeset.row, changeset.files, list);
  }
  const [list, changeset] = await Promise.all([incomplete, betweenOf(to, rangePair(from, to), ctx, plan, undefined)]);
  changeset.coverage.incompleteExecutions = list;
  changeset.key = { kind: 'RANGE', executionID: to.id, fromExecutionID: from.id };
  return changeset;
}

builder.objectFields(SessionRef, (t) => ({
  changes: t.field({
    type: ChangesetRef,
    description: 'The changes from the start boundary of execution `from` to the end boundary of execution `to` (both of this session, `from` not later than `to`; the same execution: its own changeset), computed from the stored snapshots, never the live worktree, and stored once. Coverage as for an execution: omissions of either boundary for changed paths, CoverageUnavailable when a boundary is missing (BOUNDARY_UNAVAILABLE), still running (NOT_SETTLED) or expired (EXPIRED); `incompleteExecutions` lists the executions of the range whose own changesets are not complete.',
    errors: { types: [ExecutionNotFoundError, InvalidRequestError], union: { name: 'SessionChangesResult' } },
    args: {
      from: t.arg.id({ required: true, description: 'The first execution of the range (its start boundary).' }),
      to: t.arg.id({ required: true, description: 'The last execution of the range (its end boundary).' }),
    },
    resolve: (s, { from, to }, ctx, info) => sessionChanges(s, String(from), String(to), ctx, info),
  }),
}));

// ---- host protocol: contents and snapshots --------------------------------------------------------

const ContentInput = builder.inputType('ContentInput', {
  fields: (t) => ({
    hash: t.string({ required: true, description: 'SHA-256 of the bytes, lowercase hex.' }),
    base64: t.string({ required: true }),
  }),
});
const UploadContentsInput = builder.inputType('UploadContentsInput', {
  fields: (t) => ({ contents: t.field({ type: [ContentInput], required: true }) }),
});
const ContentsUploaded = builder.objectRef<{ stored: number; alreadyPresent: number }>('ContentsUploaded').implement({
  fields: (t) => ({
    stored: t.exposeInt('stored', { description: 'Contents of the batch that were not held for the caller before (see missingContents).' }),
    alreadyPresent: t.exposeInt('alreadyPresent', { description: 'Contents of the batch that were already held for the caller.' }),
  }),
});
const MissingContents = builder.objectRef<{ hashes: string[] }>('MissingContents').implement({
  fields: (t) => ({ hashes: t.exposeStringList('hashes') }),
});

const SnapshotFileInput = builder.inputType('SnapshotFileInput', {
  fields: (t) => ({
    path: t.string({ required: true, description: 'Relative to the worktree root, "/"-separated.' }),
    kind: t.field({ type: EntryKindEnum, required: true }),
    hash: t.string({ required: false }),
    size: t.float({ required: true }),
    mode: t.int({ required: true, description: 'Git-style mode, e.g. 33188 (0o100644).' }),
    binary: t.boolean({ required: false }),
    mtimeMs: t.float({ required: false }),
    count: t.int({ required: false }),
  }),
});
const UnscannedInput = builder.inputType('UnscannedInput', {
  fields: (t) => ({ path: t.string({ required: true }), detail: t.string({ required: false }) }),
});
const CreateSnapshotInput = builder.inputType('CreateSnapshotInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    hostID: t.id({ required: false }),
    files: t.field({
      type: [SnapshotFileInput],
      required: true,
      description: 'The manifest entries. Without base: the whole manifest. With base: the entries added or changed since the base (each replaces the base entry at its path); unchanged entries are left out.',
    }),
    unscanned: t.field({ type: [UnscannedInput], required: false, description: 'Subtrees the capture stopped before scanning. Always given whole: never inherited from base.' }),
    partial: t.string({ required: false, description: 'Set (to the reason) when the capture may have left out paths anywhere in the worktree, e.g. a snapshot made by another tool whose filters cannot be replayed. Changesets with this boundary list their files but read CoverageOmitted, with a CAPTURE_LIMIT omission on the path ".". Always given whole: never inherited from base.' }),
    base: t.id({
      required: false,
      description: 'Send the manifest as a delta against this snapshot of the same session (not pruned; otherwise InvalidRequestError on base, and the host sends the whole manifest): the stored manifest is the base\'s, minus the removed paths, with files added or replacing entries, validated as a whole manifest. Only the contents of files need to be held; the base\'s are.',
    }),
    removed: t.stringList({
      required: false,
      description: 'With base only: paths of base entries that no longer exist (each must be in the base and not also in files).',
    }),
  }),
});

builder.queryField('missingContents', (t) =>
  t.field({
    type: MissingContents,
    extensions: allow('host'),
    description: 'Which of these content hashes the gateway does not hold for the caller: upload those before createSnapshot. For a directory-scoped token a content counts as held only when a host within its scope uploaded it (contents are stored once, but no directory learns what another holds).',
    errors: { types: [InvalidRequestError] },
    args: { hashes: t.arg.stringList({ required: true }) },
    resolve: async (_r, { hashes }, ctx) => ({ hashes: await missingContents(ctx.sql, ctx.actor, hashes) }),
  }),
);

builder.mutationFields((t) => ({
  uploadContents: t.field({
    type: ContentsUploaded,
    extensions: allow('host'),
    errors: { types: [InvalidRequestError] },
    args: { input: t.arg({ type: UploadContentsInput, required: true }) },
    resolve: (_r, { input }, ctx) => uploadContents(ctx.sql, ctx.actor, { contents: input.contents }),
  }),
  createSnapshot: t.field({
    type: SnapshotRef,
    extensions: allow('host'),
    errors: { types: [SessionNotFoundError, HostNotFoundError, ContentMissingError, InvalidRequestError] },
    args: { input: t.arg({ type: CreateSnapshotInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      createSnapshot(ctx.sql, ctx.actor, {
        ...input,
        files: input.files as any,
        unscanned: input.unscanned as any,
      }),
  }),
}));

// ---- admin: limits and retention (one row shared by every instance) -------------------------------

const PolicyRef = builder.objectRef<Policy>('ChangesetPolicy').implement({
  description: 'Patch budgets, upload limits and the retention policy of changesets, applied by every instance.',
  fields: (t) => ({
    filePatchBytes: t.exposeFloat('filePatchBytes', { description: 'Per-file patch budget; over it the patch is null and TRUNCATED recorded.' }),
    changesetPatchBytes: t.exposeFloat('changesetPatchBytes', { description: 'Per-changeset patch budget.' }),
    maxContentBytes: t.exposeFloat('maxContentBytes', { description: 'Largest single content a host may upload.' }),
    maxUploadBytes: t.exposeFloat('maxUploadBytes', { description: 'Largest uploadContents batch.' }),
    maxManifestFiles: t.exposeInt('maxManifestFiles'),
    retainMs: t.exposeFloat('retainMs', { description: 'A changeset is kept at least this long after it settled.' }),
    retainExecutions: t.exposeInt('retainExecutions', { description: 'And while fewer than this many later executions of its session have settled.' }),
    graceMs: t.exposeFloat('graceMs', { description: 'Unreferenced contents and unused snapshots younger than this are kept.' }),
  }),
});
const PolicyInput = builder.inputType('ChangesetPolicyInput', {
  fields: (t) => ({
    filePatchBytes: t.float({ required: false }),
    changesetPatchBytes: t.float({ required: false }),
    maxContentBytes: t.float({ required: false }),
    maxUploadBytes: t.float({ required: false }),
    maxManifestFiles: t.int({ required: false }),
    retainMs: t.float({ required: false }),
    retainExecutions: t.int({ required: false }),
    graceMs: t.float({ required: false }),
  }),
});
// Readable by every role (readers, plugins and hosts alike: hosts size their uploads by it); it is the
// instance's configuration, the same for every directory, so a scoped token learns nothing of another's.
builder.queryField('changesetPolicy', (t) =>
  t.field({
    type: PolicyRef,
    extensions: allow('reader', 'plugin', 'host'),
    description: 'The instance\'s patch budgets, upload limits and retention (any role). Changed by setChangesetPolicy (unscoped admin).',
    resolve: (_r, _a, ctx) => readPolicy(ctx.sql),
  }),
);
builder.mutationField('setChangesetPolicy', (t) =>
  t.field({
    type: PolicyRef,
    // Instance-wide (every directory's budgets and retention): refused with FORBIDDEN to a scoped admin.
    extensions: { ...allow('admin'), instanceWide: true },
    description: 'Changes the instance\'s changeset policy (unscoped admin only; a directory-scoped admin gets FORBIDDEN).',
    errors: { types: [InvalidRequestError] },
    args: { input: t.arg({ type: PolicyInput, required: true }) },
    resolve: (_r, { input }, ctx) => setPolicy(ctx.sql, input as Partial<Policy>),
  }),
);
