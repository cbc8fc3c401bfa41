import DataLoader from 'dataloader';
import { builder } from './builder.js';
import { ExecutionNotFoundError, InvalidRequestError } from './errors.js';
import { ExecutionRef, SessionRef } from './refs.js';
import { FileChangeRef, OmissionReasonEnum, SnapshotRef, type FileRow } from './changeset.js';
import { snapshotById } from '../resolvers/loaders.js';
import type { Context } from '../resolvers/context.js';
import type { SessionRow } from '../domain/rows.js';
import type { BoundedExecution } from '../domain/changesets.js';
import { checkPath } from '../domain/snapshots.js';
import {
  attributeFiles, blame, loadTimeline, type Blame, type BoundarySide, type Extent, type FileAttribution, type Origin, type Run, type Timeline,
} from '../domain/attribution.js';

/**
 * Who changed each line (domain/attribution.ts): `FileChange.attribution` on every changeset's file, and
 * `Session.blame(path, at)`. CONTRACT section 13.
 */

const BoundarySideEnum = builder.enumType('BoundarySide', {
  values: {
    START: { description: 'The snapshot captured when the execution began.' },
    END: { description: 'The snapshot captured when the execution settled.' },
  } as const,
});
const UnknownReasonEnum = builder.enumType('AttributionUnknownReason', {
  values: {
    BOUNDARY_UNAVAILABLE: { description: 'A boundary of the span was not captured (or its host was lost): the executions and drifts around it cannot be told apart.' },
    OMITTED: { description: 'The file\'s content is not known at a boundary of the span: ignored, binary, over the size limit, or not scanned by the capture.' },
    EXPIRED: { description: 'A boundary snapshot of the span was pruned by retention.' },
    NOT_SETTLED: { description: 'The span ends at an execution still running.' },
  } as const,
});

type ExecutionOriginV = Extract<Origin, { kind: 'EXECUTION' }>;
type OutsideOriginV = Extract<Origin, { kind: 'OUTSIDE_EDIT' }>;
type BeforeOriginV = Extract<Origin, { kind: 'BEFORE_SESSION' }>;
type UnknownOriginV = Extract<Origin, { kind: 'UNKNOWN' }>;

const ExecutionOrigin = builder.objectRef<ExecutionOriginV>('ExecutionOrigin').implement({
  description: 'Changed by an execution: between its start and end boundary (its prompt, agent and model are the execution\'s).',
  fields: (t) => ({ execution: t.field({ type: ExecutionRef, resolve: (o) => o.execution }) }),
});
const OutsideEditOrigin = builder.objectRef<OutsideOriginV>('OutsideEditOrigin').implement({
  description: 'Changed outside any execution of the session: between the end boundary of `previous` and the start boundary of `execution` (the user, another tool); `execution.driftBefore` is that changeset.',
  fields: (t) => ({
    execution: t.field({ type: ExecutionRef, description: 'The execution whose drift this is (the edit happened before it began).', resolve: (o) => o.execution }),
    previous: t.field({ type: ExecutionRef, description: 'The execution before it (the edit happened after it settled).', resolve: (o) => o.previous }),
  }),
});
const BeforeSessionOrigin = builder.objectRef<BeforeOriginV>('BeforeSessionOrigin').implement({
  description: 'Not changed within the session: already there at its first boundary, the start of its first execution.',
  fields: (t) => ({ execution: t.field({ type: ExecutionRef, description: 'The session\'s first execution.', resolve: (o) => o.execution }) }),
});
const UnknownOrigin = builder.objectRef<UnknownOriginV>('UnknownOrigin').implement({
  description: 'Changed somewhere within a span the snapshots cannot split (a boundary not captured, the file\'s content not known at one): one of `executions` or, when `outsideEdits`, an edit between them. Never a guess.',
  fields: (t) => ({
    reason: t.expose('reason', { type: UnknownReasonEnum }),
    detail: t.exposeString('detail'),
    executions: t.field({ type: [ExecutionRef], description: 'The executions within the span, in order.', resolve: (o) => o.executions }),
    outsideEdits: t.exposeBoolean('outsideEdits', { description: 'Whether the span also covers time between executions (outside edits).' }),
  }),
});
const LineOriginUnion = builder.unionType('LineOrigin', {
  description: 'What last changed a file or a line within a session.',
  types: [ExecutionOrigin, OutsideEditOrigin, BeforeSessionOrigin, UnknownOrigin],
  resolveType: (o: Origin) => ({ EXECUTION: 'ExecutionOrigin', OUTSIDE_EDIT: 'OutsideEditOrigin', BEFORE_SESSION: 'BeforeSessionOrigin', UNKNOWN: 'UnknownOrigin' } as const)[o.kind],
});

const LineRunRef = builder.objectRef<Run>('LineRun').implement({
  description: 'Consecutive lines with the same origin.',
  fields: (t) => ({
    start: t.exposeInt('start', { description: 'The first line\'s number (1-based).' }),
    count: t.exposeInt('count'),
    origin: t.field({ type: LineOriginUnion, resolve: (r) => r.origin }),
  }),
});

const FileAttributionRef = builder.objectRef<FileAttribution>('FileAttribution').implement({
  description: 'Who changed a file of a changeset: each span of the changeset that changed it, and who removed or last changed each line of its patch.',
  fields: (t) => ({
    changedBy: t.field({
      type: [LineOriginUnion],
      description: 'Each span within the changeset that changed the file (content, mode or existence), oldest first: for a range the executions and outside edits; for an execution\'s changeset that execution; for a drift the outside edit.',
      resolve: (a) => a.changes,
    }),
    lastChangedBy: t.field({ type: LineOriginUnion, nullable: true, description: 'The last of changedBy.', resolve: (a) => a.changes[a.changes.length - 1] ?? null }),
    removedLines: t.field({
      type: [LineRunRef],
      description: 'The patch\'s removed lines (numbered on the OLD side), by the span that removed them. Empty when the patch is not rendered.',
      resolve: (a) => a.removed,
    }),
    addedLines: t.field({
      type: [LineRunRef],
      description: 'The patch\'s added lines (numbered on the NEW side), by what last changed them within the session (as git blame would say). Empty when the patch is not rendered.',
      resolve: (a) => a.added,
    }),
  }),
});

// ---- FileChange.attribution ------------------------------------------------------------------------

/** A session's whole timeline, once per request. */
const timelines = new WeakMap<Context, Map<string, Promise<Timeline>>>();
function timelineOf(ctx: Context, sessionId: string): Promise<Timeline> {
  let m = timelines.get(ctx);
  if (!m) timelines.set(ctx, (m = new Map()));
  let t = m.get(sessionId);
  if (!t) m.set(sessionId, (t = loadTimeline(ctx.sql, sessionId, 2 ** 31 - 1)));
  return t;
}

/**
 * The extent of the changeset a file row belongs to: an execution's own (its start to its end); between two
 * snapshots (a range, a drift), the positions of its two snapshots on the timeline (the last position of its end
 * snapshot, and the last of its start snapshot before that: a snapshot a host reused for two boundaries in a row
 * bounds an empty span, so which one is taken changes nothing).
 */
async function extentOfRow(f: FileRow, ctx: Context): Promise<Extent | null> {
  if ('executionId' in f) {
    const [e] = await ExecutionRef.getDataloader(ctx).loadMany([f.executionId]);
    if (!e || e instanceof Error) return null;
    const timeline = await timelineOf(ctx, e.sessionId);
    return { timeline, start: timeline.position(e.id, 'START'), end: timeline.position(e.id, 'END') };
  }
  const timeline = await timelineOf(ctx, f.sessionId);
  let end = -1;
  for (let p = timeline.length - 1; p >= 0 && end < 0; p--) if (timeline.snapshotAt(p).id === f.endSnapshotId) end = p;
  let start = -1;
  for (let p = end; p >= 0 && start < 0; p--) if (timeline.snapshotAt(p).id === f.startSnapshotId) start = p;
  return end < 0 || start < 0 ? null : { timeline, start, end };
}

interface AttributionKey { row: FileRow; lines: boolean }
const attributionLoaders = new WeakMap<Context, DataLoader<AttributionKey, FileAttribution | null>>();
/** The files of one changeset asked in one tick are attributed together (their manifests' entries read in one statement). */
function attributionLoader(ctx: Context): DataLoader<AttributionKey, FileAttribution | null> {
  let l = attributionLoaders.get(ctx);
  if (!l) {
    l = new DataLoader<AttributionKey, FileAttribution | null>(async (keys) => {
      const extents = await Promise.all(keys.map((k) => extentOfRow(k.row, ctx)));
      const groups = new Map<string, { extent: Extent; lines: boolean; files: { path: string; status: string }[] }>();
      keys.forEach((k, i) => {
        const x = extents[i];
        if (!x) return;
        const id = `${x.timeline.sessionId}|${x.start}|${x.end}|${k.lines}`;
        let g = groups.get(id);
        if (!g) groups.set(id, (g = { extent: x, lines: k.lines, files: [] }));
        g.files.push({ path: k.row.path, status: k.row.status });
      });
      const results = new Map<string, Map<string, FileAttribution>>();
      for (const [id, g] of groups) results.set(id, await attributeFiles(ctx.sql, g.extent, g.files, g.lines));
      return keys.map((k, i) => {
        const x = extents[i];
        return x ? results.get(`${x.timeline.sessionId}|${x.start}|${x.end}|${k.lines}`)?.get(k.row.path) ?? null : null;
      });
    }, { cache: false });
    attributionLoaders.set(ctx, l);
  }
  return l;
}

const lineFields = new Set(['removedLines', 'addedLines']);
builder.objectField(FileChangeRef, 'attribution', (t) => t.field({
  type: FileAttributionRef,
  nullable: true,
  description: 'Who changed this file within the changeset (CONTRACT section 13): for a range each execution and outside edit between its two ends, and who removed or last changed each line of its patch; computed from the stored boundary snapshots. Null when the changeset\'s extent is no longer on its session\'s timeline.',
  resolve: (f, _a, ctx, info) => {
    const sel = info.fieldNodes.flatMap((n) => n.selectionSet?.selections ?? []);
    const lines = sel.some((s) => s.kind !== 'Field' || lineFields.has(s.name.value));
    return attributionLoader(ctx).load({ row: f, lines });
  },
}));

// ---- Session.blame ---------------------------------------------------------------------------------

const BlameUnavailableReasonEnum = builder.enumType('BlameUnavailableReason', {
  values: {
    ABSENT: { description: 'The file does not exist at this boundary.' },
    BOUNDARY_UNAVAILABLE: { description: 'The boundary was not captured (or its host was lost).' },
    NOT_SETTLED: { description: 'The execution is still running: its end boundary does not exist yet.' },
    OMITTED: { description: 'The file\'s lines are not known here: ignored, binary, over the size limit, not UTF-8, or not scanned (see omission).' },
    EXPIRED: { description: 'The boundary snapshot was pruned by retention.' },
  } as const,
});
type BlameTextV = Blame & { text: string };
const BlameText = builder.objectRef<BlameTextV>('BlameText').implement({
  description: 'The file\'s text at the boundary, its lines in runs of one origin.',
  fields: (t) => ({
    text: t.exposeString('text'),
    lineCount: t.int({ resolve: (b) => b.runs.reduce((n, r) => n + r.count, 0) }),
    runs: t.field({ type: [LineRunRef], description: 'Every line of the file, in order, in runs of one origin.', resolve: (b) => b.runs }),
  }),
});
const BlameUnavailable = builder.objectRef<Blame>('BlameUnavailable').implement({
  description: 'Why the file cannot be blamed at this boundary.',
  fields: (t) => ({
    reason: t.field({ type: BlameUnavailableReasonEnum, resolve: (b) => b.unknown!.reason }),
    omission: t.field({ type: OmissionReasonEnum, nullable: true, description: 'With OMITTED: why the content is not known.', resolve: (b) => b.unknown!.omission }),
    detail: t.string({ resolve: (b) => b.unknown!.detail }),
  }),
});
const BlameContent = builder.unionType('BlameContent', {
  types: [BlameText, BlameUnavailable],
  resolveType: (b: Blame) => (b.text !== null ? 'BlameText' : 'BlameUnavailable'),
});
const BlameRef = builder.objectRef<Blame>('Blame').implement({
  description: 'A file at one boundary of a session, each line with what last changed it within the session (or BeforeSessionOrigin).',
  fields: (t) => ({
    path: t.exposeString('path'),
    execution: t.field({ type: ExecutionRef, description: 'The execution whose boundary this is.', resolve: (b) => b.execution }),
    side: t.field({ type: BoundarySideEnum, resolve: (b) => b.side }),
    snapshot: t.field({ type: SnapshotRef, nullable: true, description: 'The boundary\'s snapshot (null: not captured).',
      resolve: (b, _a, ctx) => (b.snapshotId ? snapshotById(ctx).load(b.snapshotId) : null) }),
    changedBy: t.field({
      type: [LineOriginUnion],
      description: 'Every change of the file within the session up to this boundary, oldest first (its first appearance included; BeforeSessionOrigin when it was there at the session\'s first boundary).',
      resolve: (b) => b.changes,
    }),
    content: t.field({ type: BlameContent, resolve: (b) => b }),
  }),
});

const BoundaryInput = builder.inputType('BoundaryInput', {
  description: 'One boundary of an execution: its start or end snapshot.',
  fields: (t) => ({
    execution: t.id({ required: true }),
    side: t.field({ type: BoundarySideEnum, required: true, defaultValue: 'END' }),
  }),
});

async function sessionBlame(s: SessionRow, path: string, at: { execution: string | number; side: BoundarySide }, ctx: Context): Promise<Blame> {
  const p = checkPath(path, 'path');
  const id = String(at.execution);
  const [e] = await ExecutionRef.getDataloader(ctx).loadMany([id]);
  if (!e || e instanceof Error) throw new ExecutionNotFoundError(id);
  if (e.sessionId !== s.id) throw new InvalidRequestError('at', `Execution ${e.id} belongs to another session than ${s.id}.`);
  return blame(ctx.sql, s.id, e as BoundedExecution, at.side, p);
}

builder.objectFields(SessionRef, (t) => ({
  blame: t.field({
    type: BlameRef,
    description: 'A file as it was at one boundary of an execution of this session, each line with what last changed it within the session: an execution, an outside edit (between executions), nothing (BeforeSessionOrigin) or, where the snapshots cannot tell, UnknownOrigin. Computed from the stored snapshots, never a worktree; follows renames.',
    errors: { types: [ExecutionNotFoundError, InvalidRequestError], union: { name: 'SessionBlameResult' } },
    args: {
      path: t.arg.string({ required: true, description: 'The file\'s path at that boundary.' }),
      at: t.arg({ type: BoundaryInput, required: true }),
    },
    resolve: (s, { path, at }, ctx) => sessionBlame(s, path, at as { execution: string; side: BoundarySide }, ctx),
  }),
}));
