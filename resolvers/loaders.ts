import type DataLoader from 'dataloader';
import { dataloaderGetter } from '@pothos/plugin-dataloader';
import postgres from 'postgres';
import { isDistributed } from '../db/cluster.js';
import { literalLimit } from '../db/connection.js';
import { scopeCondition } from '../domain/access.js';
import { changesetFiles, changesetFilesAt, changesetRows, type ChangesetCounts, type ChangesetFileRow, type ChangesetRow } from '../domain/changesets.js';
import { sessionContexts, type ContextMessage } from '../domain/corrections.js';
import type { ExecutionRow, JobRow, MessageRow, ModelCallRow, PartRow, SessionRow } from '../domain/rows.js';
import { anyOf, carriedSessions, rowKeys } from '../domain/shard.js';
import type { SnapshotRow } from '../domain/snapshots.js';
import {
  freezeSnapshotChangeset, incompleteExecutionsBetween, pairKey, snapshotChangesetFiles, snapshotChangesetFilesAt, snapshotChangesetRows,
  type SnapshotChangesetFile, type SnapshotChangesetRow, type SnapshotPair,
} from '../domain/snapshot-changes.js';
import type { Context } from './context.js';
import type { ChangesetKind, CommentState, ReviewCommentRow } from '../domain/review-comments.js';
import { decodeCursor, encodeCursor, type CursorKey, type CursorKind } from './cursors.js';
import type { ExecutionPlan, FileRead, RowRead } from './plans.js';
import { pageSize, toPage, type Page } from './pagination.js';

/**
 * The read model: every batched read of the API. The loadable objects (Session, Execution, Message,
 * Job: schema/refs.ts) load their rows with the `…ById` functions here; every other batched read is a
 * loader below. All of them are @pothos/plugin-dataloader loaders, kept in its cache keyed by the
 * context object: built on first use, one set per request and one per subscription event (each event
 * gets a context of its own, subscriptions/shared.ts), so a later event never reads what an earlier
 * one cached. The number of SQL round trips of a request depends on its shape, not on how many rows
 * it returns.
 */

/**
 * Batches are dispatched on setImmediate, after every pending promise of the current resolution
 * wave has run, so loads from sibling resolvers land in one batch however their awaits interleave.
 */
export const loaderOptions = { batchScheduleFn: (cb: () => void) => setImmediate(cb) };

/** A loader per context: `(ctx) => DataLoader`. */
function perContext<K, V, CK = K>(
  load: (keys: readonly K[], ctx: Context) => Promise<readonly V[]>,
  options: { cacheKeyFn?: (key: K) => CK } = {},
): (ctx: Context) => DataLoader<K, V, CK> {
  return dataloaderGetter<K, V, CK>({ ...loaderOptions, ...options }, (keys, ctx) => load(keys, ctx as Context), undefined, false) as (ctx: Context) => DataLoader<K, V, CK>;
}

const scope = (ctx: Context, column: string) => scopeCondition(ctx.sql, ctx.actor, column);

function byKey<T, K>(keys: readonly K[], rows: T[], keyOf: (r: T) => K): (T | null)[] {
  const map = new Map(rows.map((r) => [keyOf(r), r]));
  return keys.map((k) => map.get(k) ?? null);
}

function groupBy<T>(keys: readonly string[], rows: T[], keyOf: (r: T) => string): T[][] {
  const map = new Map<string, T[]>(keys.map((k) => [k, []]));
  for (const r of rows) map.get(keyOf(r))?.push(r);
  return keys.map((k) => map.get(k)!);
}

// ---- the loadable objects' rows, by ID, under the caller's directory scope -------------------------

/** `<column> = ANY(the sessions the IDs carry)`, or true when one of them is of the old shape. */
function inSessionsOf(db: Context['sql'], ids: readonly string[], column: string) {
  const sessions = carriedSessions(ids);
  return sessions ? db`${db(column)} = ${anyOf(db, sessions)}` : db`true`;
}

export const sessionsById = (ids: readonly string[], ctx: Context) =>
  ctx.sql<SessionRead[]>`SELECT * FROM sessions WHERE id = ${anyOf(ctx.sql, ids)} AND ${scope(ctx, 'directory')}`;
export const executionsById = (ids: readonly string[], ctx: Context) => ctx.sql<ExecutionRead[]>`
  SELECT e.* FROM executions e JOIN sessions s ON s.id = e.session_id
  WHERE ${rowKeys(ctx.sql, ids, { alias: 'e' })} AND ${inSessionsOf(ctx.sql, ids, 's.id')} AND ${scope(ctx, 's.directory')}`;

/** A file row of a changeset without its patch: what a list of the files reads (a selection without `patch`). */
export type ListedFile = Omit<ChangesetFileRow, 'patch'>;
/** An execution row with its changeset row (null: none) and, when asked, the list of its files (null: not asked). */
export interface ExecutionWithChangeset { execution: ExecutionRow; changeset: ChangesetRow | null; files: ListedFile[] | null }
/** The columns of a changeset row `c` joined to its execution, prefixed (`splitChangeset` takes them off again). */
const CHANGESET_COLUMNS = (db: Context['sql']) => db`c.execution_id AS cs_execution_id, c.session_id AS cs_session_id, c.coverage AS cs_coverage,
  c.unavailable_reason AS cs_unavailable_reason, c.detail AS cs_detail, c.omissions AS cs_omissions, c.file_count AS cs_file_count,
  c.additions AS cs_additions, c.deletions AS cs_deletions, c.patch_bytes AS cs_patch_bytes, c.frozen_at AS cs_frozen_at,
  c.pruned_at AS cs_pruned_at`;
/**
 * Those of them a read of `counts` brings (ChangesetCounts): a list of executions showing their counts
 * reads six columns of each changeset instead of twelve (no jsonb to parse, no timestamp but pruned_at).
 */
const COUNT_COLUMNS = (db: Context['sql']) => db`c.execution_id AS cs_execution_id, c.coverage AS cs_coverage, c.file_count AS cs_file_count,
  c.additions AS cs_additions, c.deletions AS cs_deletions, c.pruned_at AS cs_pruned_at`;
const changesetColumns = (db: Context['sql'], row: RowRead) => (row === 'whole' ? CHANGESET_COLUMNS(db) : COUNT_COLUMNS(db));
/** A listed file as the JSON array of `executionsWithChangesets` holds it: [ord, path, status, additions, deletions, binary, previous_path, similarity]. */
type ListedJson = [number, string, ChangesetFileRow['status'], number, number, boolean, string | null, number | null];
type WithChangeset = ExecutionRow & {
  csExecutionId: string | null; csSessionId: string; csCoverage: ChangesetRow['coverage']; csUnavailableReason: ChangesetRow['unavailableReason'];
  csDetail: string | null; csOmissions: ChangesetRow['omissions']; csFileCount: number; csAdditions: number; csDeletions: number;
  csPatchBytes: number; csFrozenAt: Date; csPrunedAt: Date | null; csFiles?: ListedJson[] | null;
};
/**
 * The keys of the rows of one statement that read an execution with its changeset columns (CHANGESET_COLUMNS
 * or COUNT_COLUMNS, `cs_…`: camelCased `cs…`) that are the execution's own: computed once per statement.
 */
function ownExecutionKeys(rows: readonly object[]): string[] {
  return rows.length ? Object.keys(rows[0]).filter((k) => !CHANGESET_KEY.test(k)) : [];
}
const CHANGESET_KEY = /^cs[A-Z]/;

/**
 * The execution's own columns of such a row, copied: what an object rest (`{ cs…, ...execution } = row`)
 * gives, which V8 runs property by property against the excluded keys (about 10 µs for a whole row).
 */
function executionOf(row: WithChangeset, keys: readonly string[]): ExecutionRow {
  const e: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) e[keys[i]] = (row as unknown as Record<string, unknown>)[keys[i]];
  return e as unknown as ExecutionRow;
}

/**
 * An execution row read with CHANGESET_COLUMNS (and `cs_files`), as the execution and its changeset row
 * (null: none); read with COUNT_COLUMNS, see splitCounts. `keys`: ownExecutionKeys of its statement's rows.
 */
function splitChangeset(row: WithChangeset, keys: readonly string[]): { execution: ExecutionRow; changeset: ChangesetRow | null; files: ListedJson[] | null | undefined } {
  return {
    execution: executionOf(row, keys),
    changeset: row.csExecutionId === null ? null : {
      executionId: row.csExecutionId, sessionId: row.csSessionId, coverage: row.csCoverage, unavailableReason: row.csUnavailableReason,
      detail: row.csDetail, omissions: row.csOmissions, fileCount: row.csFileCount, additions: row.csAdditions, deletions: row.csDeletions,
      patchBytes: row.csPatchBytes, frozenAt: row.csFrozenAt, prunedAt: row.csPrunedAt,
    },
    files: row.csFiles,
  };
}

/** An execution row read with COUNT_COLUMNS, as the execution and the counts of its changeset (null: none). */
function splitCounts(row: WithChangeset, keys: readonly string[]): { execution: ExecutionRow; changeset: ChangesetCounts | null } {
  return {
    execution: executionOf(row, keys),
    changeset: row.csExecutionId === null ? null : {
      executionId: row.csExecutionId, coverage: row.csCoverage, fileCount: row.csFileCount, additions: row.csAdditions,
      deletions: row.csDeletions, prunedAt: row.csPrunedAt,
    },
  };
}

/**
 * `executionsById` with, in the same statement, each execution's changeset row (the columns of
 * `changesetRows`) and, with `listFiles`, the list of its files in order, without their patches, as
 * one JSON array (the rows `changesetFiles` reads, none once pruned). One round trip where the three
 * reads would take two waves: what `execution(id) { changeset { … files { path … } } }` is, a review
 * page's first read. Patches stay out of it: escaping them into JSON costs the database more than
 * sending them as rows (`changesetFiles`). `scope` is the caller's condition on `s.directory`. Every
 * join is on the session, so it runs on one shard of a cluster when the IDs carry their session.
 */
export async function executionsWithChangesets(db: Context['sql'], ids: readonly string[], scope: Fragment, listFiles: boolean): Promise<ExecutionWithChangeset[]> {
  const rows = await db<WithChangeset[]>`
    SELECT e.*, ${CHANGESET_COLUMNS(db)} ${listFiles ? db`, f.files AS cs_files` : db``}
    FROM executions e JOIN sessions s ON s.id = e.session_id
    LEFT JOIN changesets c ON c.session_id = e.session_id AND c.execution_id = e.id
    ${listFiles ? db`LEFT JOIN LATERAL (
      SELECT json_agg(json_build_array(f.ord, f.path, f.status, f.additions, f.deletions, f.binary, f.previous_path, f.similarity) ORDER BY f.ord) AS files
      FROM changeset_files f WHERE f.session_id = c.session_id AND f.execution_id = c.execution_id AND c.pruned_at IS NULL) f ON true` : db``}
    WHERE ${rowKeys(db, ids, { alias: 'e' })} AND ${inSessionsOf(db, ids, 's.id')} AND ${scope}`;
  const keys = ownExecutionKeys(rows);
  return rows.map((r) => {
    const { execution, changeset, files } = splitChangeset(r, keys);
    const executionId = execution.id;
    return {
      execution, changeset,
      files: listFiles ? (files ?? []).map(([ord, path, status, additions, deletions, binary, previousPath, similarity]) => ({ executionId, ord, path, status, additions, deletions, binary, previousPath, similarity })) : null,
    };
  });
}

/**
 * What a read brought of an execution's frozen changeset (ExecutionRead.changesetRead): its row (null:
 * none), whole or only its counts (`whole`), and its files when read (listed ones carry no patch:
 * `patches`).
 */
export interface ChangesetRead {
  row: ChangesetRow | ChangesetCounts | null;
  whole: boolean;
  files: readonly (ChangesetFileRow | ListedFile)[] | null;
  patches: boolean;
}
/** An execution row as the read model hands it to its fields: with what its plan brought along (resolvers/plans.ts). */
export type ExecutionRead = ExecutionRow & { changesetRead?: ChangesetRead };

/**
 * Executions by ID, each read as its plan asks (resolvers/plans.ts ExecutionPlan): with its changeset
 * in the same statement when the plan reads one (executionsWithChangesets; the list of its files too
 * when the plan lists them, and its files with their patches in the same wave when it reads those).
 * What `execution(id) { changeset { … files { … } } }`, a review page's first read, needs in one wave.
 */
export const executionReads = perContext<{ id: string; plan: ExecutionPlan }, ExecutionRead | null, string>(async (keys, ctx) => {
  const out = new Map<string, ExecutionRead>();
  const byRead = new Map<FileRead | null, Set<string>>();
  for (const k of keys) {
    const read = k.plan.changeset ? k.plan.changeset.files : null;
    if (!byRead.has(read)) byRead.set(read, new Set());
    byRead.get(read)!.add(k.id);
  }
  await Promise.all([...byRead].map(async ([read, idSet]) => {
    const ids = [...idSet];
    if (read === null) {
      for (const r of await executionsById(ids, ctx)) out.set(`${r.id}|${read}`, r);
      return;
    }
    const [rows, files] = await Promise.all([
      executionsWithChangesets(ctx.sql, ids, scope(ctx, 's.directory'), read === 'list'),
      read === 'patches' ? changesetFiles(ctx.sql, ids) : null,
    ]);
    const patched = files && new Map(groupBy(ids, files, (f) => f.executionId).map((g, i) => [ids[i], g]));
    for (const r of rows) {
      const withPatches = patched?.get(r.execution.id) ?? null;
      const changesetRead: ChangesetRead = { row: r.changeset, whole: true, files: withPatches ?? r.files, patches: !!withPatches };
      (r.execution as ExecutionRead).changesetRead = changesetRead;
      out.set(`${r.execution.id}|${read}`, r.execution);
    }
  }));
  return keys.map((k) => out.get(`${k.id}|${k.plan.changeset ? k.plan.changeset.files : null}`) ?? null);
}, { cacheKeyFn: (k) => `${k.id}|${k.plan.key}` });

export const messagesById = (ids: readonly string[], ctx: Context) => ctx.sql<MessageRow[]>`
  SELECT m.* FROM messages m JOIN sessions s ON s.id = m.session_id
  WHERE ${rowKeys(ctx.sql, ids, { alias: 'm' })} AND ${inSessionsOf(ctx.sql, ids, 's.id')} AND ${scope(ctx, 's.directory')}`;
export const jobsById = (ids: readonly string[], ctx: Context) => ctx.sql<JobRow[]>`
  SELECT j.* FROM jobs j JOIN sessions s ON s.id = j.session_id
  WHERE ${rowKeys(ctx.sql, ids, { alias: 'j' })} AND ${inSessionsOf(ctx.sql, ids, 's.id')} AND ${scope(ctx, 's.directory')}`;

// ---- per parent ----------------------------------------------------------------------------------

/** The running execution of each session (null when idle). */
export const runningExecution = perContext<string, ExecutionRow | null>(async (ids, ctx) =>
  byKey(ids, await ctx.sql<ExecutionRow[]>`SELECT * FROM executions WHERE session_id = ${anyOf(ctx.sql, ids)} AND status = 'RUNNING'`, (r) => r.sessionId));

/** The last execution of each session that is no longer running. */
export const lastSettledExecution = perContext<string, ExecutionRow | null>(async (ids, ctx) =>
  byKey(ids, await ctx.sql<ExecutionRow[]>`
    SELECT DISTINCT ON (session_id) * FROM executions
    WHERE session_id = ${anyOf(ctx.sql, ids)} AND status <> 'RUNNING' ORDER BY session_id, sequence DESC`, (r) => r.sessionId));

/**
 * The stored parts of each message, in order (Message.parts shows them through visibleParts). Message
 * IDs that carry their session find their parts by (session, message); an ID of the old shape through
 * its message row (parts have no index on message_id alone).
 */
export const partsOfMessage = perContext<string, PartRow[]>(async (ids, ctx) => {
  const db = ctx.sql;
  const sessions = carriedSessions(ids);
  const rows = sessions
    ? await db<PartRow[]>`
        SELECT * FROM parts WHERE session_id = ANY(${sessions}) AND message_id = ANY(${ids as string[]}) ORDER BY message_id, index`
    : await db<PartRow[]>`
        SELECT p.* FROM messages m JOIN parts p ON p.session_id = m.session_id AND p.message_id = m.id
        WHERE m.id = ANY(${ids as string[]}) ORDER BY p.message_id, p.index`;
  return groupBy(ids, rows, (r) => r.messageId);
});

/**
 * The model calls of each execution, in order (Execution.modelCalls): by (session, execution) for IDs that carry
 * their session, else through the execution row.
 */
export const modelCallsOfExecution = perContext<string, ModelCallRow[]>(async (ids, ctx) => {
  const db = ctx.sql;
  const sessions = carriedSessions(ids);
  const rows = sessions
    ? await db<ModelCallRow[]>`
        SELECT * FROM model_calls WHERE session_id = ANY(${sessions}) AND execution_id = ANY(${ids as string[]}) ORDER BY execution_id, index`
    : await db<ModelCallRow[]>`
        SELECT c.* FROM executions e JOIN model_calls c ON c.session_id = e.session_id AND c.execution_id = e.id
        WHERE e.id = ANY(${ids as string[]}) ORDER BY c.execution_id, c.index`;
  return groupBy(ids, rows, (r) => r.executionId);
});

/** What the next model request of each session would see (Session.context). */
export const contextOfSession = perContext<string, ContextMessage[]>((ids, ctx) => sessionContexts(ctx.sql, ids));

// ---- changesets ----------------------------------------------------------------------------------

/** The frozen changeset row of each execution (null: none), whole. */
export const changesetRowOf = perContext<string, ChangesetRow | null>(async (ids, ctx) =>
  byKey(ids, await changesetRows(ctx.sql, ids), (r) => r.executionId));

/** The files of each execution's frozen changeset, in order, with their patches. */
export const filesOfChangeset = perContext<string, ChangesetFileRow[]>(async (ids, ctx) =>
  groupBy(ids, await changesetFiles(ctx.sql, ids), (r) => r.executionId));

export const fileOfChangeset = perContext<{ executionId: string; path: string }, ChangesetFileRow | null, string>(
  async (keys, ctx) => byKey(keys.map((k) => `${k.executionId}\0${k.path}`), await changesetFilesAt(ctx.sql, keys), (r) => `${r.executionId}\0${r.path}`),
  { cacheKeyFn: (k) => `${k.executionId}\0${k.path}` },
);

// ---- changesets between snapshots (ranges of executions, drift) ------------------------------------

/** A changeset between two snapshots as a request reads it: its stored row and, when asked, its files (null: not asked). */
export interface BetweenRead { row: SnapshotChangesetRow; files: SnapshotChangesetFile[] | null }

/**
 * The changesets of snapshot pairs (domain/snapshot-changes.ts), with their files when the selection reads
 * them ('list': without patches): the stored rows and files in one wave (two statements, on the pairs'
 * shards); a pair not stored yet is computed and stored then (freezeSnapshotChangeset), once for every
 * reader. Null: a snapshot of the pair has expired.
 */
export const changesBetween = perContext<{ pair: SnapshotPair; files: FileRead }, BetweenRead | null, string>(async (keys, ctx) => {
  const pairs = [...new Map(keys.map((k) => [pairKey(k.pair), k.pair])).values()];
  const withFiles = [...new Map(keys.filter((k) => k.files !== 'none').map((k) => [pairKey(k.pair), k.pair])).values()];
  const patches = keys.some((k) => k.files === 'patches');
  const [rows, files] = await Promise.all([snapshotChangesetRows(ctx.sql, pairs), snapshotChangesetFiles(ctx.sql, withFiles, patches)]);
  const stored = new Map(rows.map((r) => [pairKey(r), r]));
  const filesOf = new Map<string, SnapshotChangesetFile[]>();
  for (const f of files) {
    const k = pairKey(f as unknown as SnapshotPair);
    if (!filesOf.has(k)) filesOf.set(k, []);
    filesOf.get(k)!.push(f);
  }
  const out = new Map<string, BetweenRead | null>();
  // Pairs not stored yet (a page's drifts on its first view): computed side by side, each in its own
  // transaction (the pool bounds how many at once).
  await Promise.all(pairs.map(async (p) => {
    const k = pairKey(p);
    const row = stored.get(k);
    if (row) { out.set(k, { row, files: filesOf.get(k) ?? [] }); return; }
    const frozen = await freezeSnapshotChangeset(ctx.sql, p);
    out.set(k, frozen && { row: frozen.row, files: frozen.files });
  }));
  return keys.map((key) => {
    const r = out.get(pairKey(key.pair)) ?? null;
    return r && { row: r.row, files: key.files === 'none' ? null : r.files };
  });
}, { cacheKeyFn: (k) => `${pairKey(k.pair)}|${k.files}` });

/** One file of a changeset between snapshots by its path (null: it did not change). */
export const fileBetween = perContext<SnapshotPair & { path: string }, SnapshotChangesetFile | null, string>(
  async (keys, ctx) => byKey(keys.map((k) => `${pairKey(k)}\0${k.path}`), await snapshotChangesetFilesAt(ctx.sql, keys),
    (r) => `${pairKey(r as unknown as SnapshotPair)}\0${r.path}`),
  { cacheKeyFn: (k) => `${pairKey(k)}\0${k.path}` },
);

/** The executions from sequence `from` to `to` of a session whose own changesets are not complete (incompleteExecutionsBetween). */
export const incompleteExecutions = perContext<{ sessionId: string; from: number; to: number }, ExecutionRow[], string>(async (keys, ctx) => {
  const key = (k: { sessionId: string; from: number; to: number }) => `${k.sessionId}|${k.from}|${k.to}`;
  const grouped = groupBy(keys.map(key), await incompleteExecutionsBetween<ExecutionRow>(ctx.sql, keys), key);
  return grouped.map((g) => g.map((r) => r.execution));
}, { cacheKeyFn: (k) => `${k.sessionId}|${k.from}|${k.to}` });

/** The execution before each one in its session (by sequence; null for a session's first). */
export const previousExecution = perContext<{ sessionId: string; sequence: number }, ExecutionRow | null, string>(async (keys, ctx) => {
  const key = (k: { sessionId: string; sequence: number }) => `${k.sessionId}|${k.sequence}`;
  const rows = await ctx.sql<ExecutionRow[]>`
    SELECT e.* FROM executions e
    JOIN unnest(${keys.map((k) => k.sessionId)}::text[], ${keys.map((k) => k.sequence - 1)}::int[]) AS k(s, seq) ON e.session_id = k.s AND e.sequence = k.seq
    WHERE e.session_id = ${anyOf(ctx.sql, [...new Set(keys.map((k) => k.sessionId))])}`;
  return byKey(keys.map(key), rows, (r) => `${r.sessionId}|${r.sequence + 1}`);
}, { cacheKeyFn: (k) => `${k.sessionId}|${k.sequence}` });

export const snapshotById = perContext<string, SnapshotRow | null>(async (ids, ctx) => byKey(ids, await ctx.sql<SnapshotRow[]>`
  SELECT id, session_id, host_id, captured_at, file_count, byte_size, pruned_at FROM snapshots WHERE ${rowKeys(ctx.sql, ids)}`, (r) => r.id));

// ---- connections: one page of children per parent --------------------------------------------------

export interface PageArgs { first?: number | null; after?: string | null }
/** A page's key but its parent: its size, its cursor and the plan of its rows (`''`: read whole). */
interface PageOf<A> { limit: number; after: A | null; plan: string }
interface PageKey<A> extends PageOf<A> { parent: string }
const pageOfKey = (k: PageOf<unknown>) => `${k.limit}|${k.after ?? ''}|${k.plan}`;
const pageKey = (k: PageKey<unknown>) => `${k.parent}|${pageOfKey(k)}`;

/**
 * A page a read brought along with its parent (SessionRead.executionsRead): the page of which key.
 * `Session.executions` answers it when its own key is the same, and loads otherwise.
 */
export interface PageRead<T extends object> { key: string; page: Page<T> }

/**
 * A loader of one page of children per parent. Keys with the same page (size, cursor, plan) are
 * fetched in one query (pageEach: up to limit+1 rows per parent through the index), with what the
 * plan reads of each row (`fetch` gets it).
 */
function paged<T extends object, K extends CursorKind, P extends { key: string } | undefined = undefined>(
  kind: K,
  cursorKey: (row: T) => CursorKey<K>,
  parentOf: (row: T) => string,
  fetch: (ctx: Context, parents: string[], limit: number, after: CursorKey<K> | null, plan: P) => Promise<T[]>,
) {
  const loader = perContext<PageKey<CursorKey<K>> & { read: P }, Page<T>, string>(
    async (keys, ctx) => {
      const groups = new Map<string, (PageKey<CursorKey<K>> & { read: P })[]>();
      for (const k of keys) {
        const g = pageOfKey(k);
        if (!groups.has(g)) groups.set(g, []);
        groups.get(g)!.push(k);
      }
      const result = new Map<PageKey<CursorKey<K>>, Page<T>>();
      await Promise.all(
        [...groups.values()].map(async (group) => {
          const { limit, after, read } = group[0];
          const parents = [...new Set(group.map((k) => k.parent))];
          const rows = await fetch(ctx, parents, limit + 1, after, read);
          const perParent = groupBy(parents, rows, parentOf);
          const pages = new Map(parents.map((p, i) => [p, pageOfRows(perParent[i], limit)]));
          for (const k of group) result.set(k, pages.get(k.parent)!);
        }),
      );
      return keys.map((k) => result.get(k)!);
    },
    { cacheKeyFn: pageKey },
  );
  const pageOfRows = (rows: T[], limit: number) => toPage(rows, limit, (r) => encodeCursor(kind, cursorKey(r)));
  /** The page of `parent` these arguments ask for, read as `plan` asks; `given`: one its parent's read brought (answered when its key is this page's). */
  const load = (ctx: Context, parent: string, args: PageArgs, plan?: P, given?: PageRead<T>): Page<T> | Promise<Page<T>> => {
    const key = { parent, limit: pageSize(args.first), after: decodeCursor(kind, args.after), plan: plan?.key ?? '', read: plan as P };
    return given && given.key === pageOfKey(key) ? given.page : loader(ctx).load(key);
  };
  /** The page of rows `fetch` read for these page arguments (up to limit+1 rows), as `load` would answer it, with its key. */
  load.pageRead = (page: PageOf<CursorKey<K>>, rows: T[]): PageRead<T> => ({ key: pageOfKey(page), page: pageOfRows(rows, page.limit) });
  return load;
}

type Fragment = postgres.PendingQuery<postgres.Row[]>;
/** Rows of other tables joined to each child row `x` of a page (`join`), and the columns read of them (`select`). */
interface Along { join: Fragment; select: Fragment }

/**
 * Up to `limit` rows of `table` (as `x`) per parent (`column` = parent), those matching `where`, in
 * `order`; with `along`, each row joined to what it brings along (the LIMIT cuts the joined rows, so
 * `along` must join at most one row to each). The form depends on where the tables are:
 * - one parent: a plain `WHERE … ORDER BY … LIMIT` (on a cluster, a router query on the parent's shard
 *   when the parent is a session);
 * - one Postgres: `unnest(parents) CROSS JOIN LATERAL (… LIMIT)`, which reads limit rows per parent
 *   through the index;
 * - distributed (db/cluster.ts isDistributed), children of sessions: Citus cannot push down a LIMIT
 *   correlated to a row of `unnest`, but it does push one correlated to a row of a colocated table on
 *   the distribution column, so the LATERAL is driven by the parents' own `sessions` rows (each shard
 *   then reads limit rows per parent of its own through the index, as one Postgres does). A window form
 *   (row_number() OVER (PARTITION BY session_id …)) would push down too, but sorts every row of a
 *   parent matching `where` before cutting (PostgreSQL 15 cannot read `session_id = ANY(…)` in index
 *   order): a page of a long session would read all of it;
 * - distributed, children of a session by parent_id (sessions are distributed by id: a parent's
 *   children may live on any shard): `row_number() OVER (PARTITION BY parent_id ORDER BY …) <= limit`,
 *   which Citus computes on the coordinator over the children of those parents, read from every shard.
 * `where` and `order` name the columns of `table` unqualified (so, with `along`, only columns its
 * tables do not share); `columns` (null: all) must include the ones they and the caller's parent and
 * cursor read. `along` joins on the session (colocated tables), so every form pushes down as before.
 */
function pageEach<T extends object>(ctx: Context, table: string, column: 'session_id' | 'parent_id', parents: string[], limit: number,
  where: Fragment, order: Fragment, columns: readonly string[] | null = null, along: Along | null = null): Promise<T[]> {
  const db = ctx.sql;
  const c = db(`x.${column}`);
  const cols = columns ? db(columns.map((n) => `x.${n}`)) : db`x.*`;
  const select = along ? db`${cols}, ${along.select}` : cols;
  const from = along ? db`${db(table)} x ${along.join}` : db`${db(table)} x`;
  if (parents.length === 1) return db<T[]>`SELECT ${select} FROM ${from} WHERE ${c} = ${parents[0]} AND ${where} ORDER BY ${order} LIMIT ${limit}`;
  if (isDistributed(db) && column === 'session_id') {
    // (session_id = ANY(parents) inside as well: Citus prunes each table by its own conditions.)
    return db<T[]>`
      SELECT page.* FROM sessions p CROSS JOIN LATERAL (
        SELECT ${select} FROM ${from} WHERE x.session_id = p.id AND x.session_id = ANY(${parents}) AND ${where} ORDER BY ${order} LIMIT ${limit}) page
      WHERE p.id = ANY(${parents})`;
  }
  if (isDistributed(db)) {
    return withoutRank(db<(T & { pageRank?: number })[]>`
      SELECT * FROM (
        SELECT ${select}, row_number() OVER (PARTITION BY ${c} ORDER BY ${order}) AS page_rank FROM ${from} WHERE ${c} = ANY(${parents}) AND ${where}
      ) page WHERE page_rank <= ${limit} ORDER BY ${db(column)}, page_rank`);
  }
  return db<T[]>`
    SELECT page.* FROM unnest(${parents}::text[]) AS p(parent) CROSS JOIN LATERAL (
      SELECT ${select} FROM ${from} WHERE ${c} = p.parent AND ${where} ORDER BY ${order} LIMIT ${limit}) page`;
}

/**
 * `pageEach` for children of executions (messages, jobs), in one form on one Postgres and on a cluster:
 * the LATERAL is driven by the executions' own rows, found by key (domain/shard.ts rowKeys; an ID of the
 * old shape through the index on id), and reads limit rows per execution by (session, execution) through
 * the index. On a cluster that is a LATERAL correlated on the distribution column to a colocated table,
 * which Citus pushes down; with the sessions the IDs carry repeated inside, it runs on their shards alone.
 */
function pageEachExecution<T extends object>(ctx: Context, table: string, executions: string[], limit: number,
  where: Fragment, order: Fragment): Promise<T[]> {
  const db = ctx.sql;
  return db<T[]>`
    SELECT c.* FROM executions x CROSS JOIN LATERAL (
      SELECT * FROM ${db(table)} WHERE session_id = x.session_id AND execution_id = x.id AND ${inSessionsOf(db, executions, 'session_id')}
        AND ${where} ORDER BY ${order} LIMIT ${limit}) c
    WHERE ${rowKeys(db, executions, { alias: 'x' })}`;
}

/** The rows of a window-form page without their rank column. */
async function withoutRank<T extends object>(q: Promise<(T & { pageRank?: number })[]>): Promise<T[]> {
  return (await q).map(({ pageRank: _, ...r }) => r as T);
}

/** Children of a session, in ID order. */
export const childrenOfSession = paged('session', (r: SessionRow) => r.id, (r) => r.parentId!, (ctx, parents, limit, after) =>
  pageEach<SessionRow>(ctx, 'sessions', 'parent_id', parents, limit,
    ctx.sql`${after ? ctx.sql`id > ${after}` : ctx.sql`true`} AND ${scope(ctx, 'directory')}`, ctx.sql`id`));

/**
 * Executions of a session, newest first, read as their plan asks (resolvers/plans.ts ExecutionPlan):
 * its columns, and with the changeset rows of the settled ones (whole, or their counts) in the same
 * statement when it reads them, kept on each execution (ExecutionRead.changesetRead).
 */
export const executionsOfSession = paged('execution', (r: ExecutionRead) => r.sequence, (r) => r.sessionId, async (ctx, parents, limit, after, plan: ExecutionPlan | undefined) => {
  const db = ctx.sql;
  const where = after !== null ? db`sequence < ${after}` : db`true`;
  // Without a plan (a caller outside a GraphQL selection): whole rows, nothing along.
  const row = plan?.changeset?.row;
  const columns = plan?.columns ?? null;
  if (!row) return pageEach<ExecutionRead>(ctx, 'executions', 'session_id', parents, limit, where, db`sequence DESC`, columns);
  const rows = await pageEach<WithChangeset>(ctx, 'executions', 'session_id', parents, limit, where, db`sequence DESC`, columns,
    { join: db`LEFT JOIN changesets c ON c.session_id = x.session_id AND c.execution_id = x.id`, select: changesetColumns(db, row) });
  const keys = ownExecutionKeys(rows);
  return rows.map((r) => withChangesetRead(row === 'whole' ? splitChangeset(r, keys) : splitCounts(r, keys), row));
});

/** An execution with the changeset row read along with it (whole, or its counts). */
function withChangesetRead({ execution, changeset }: { execution: ExecutionRead; changeset: ChangesetRow | ChangesetCounts | null }, row: RowRead): ExecutionRead {
  execution.changesetRead = { row: changeset, whole: row === 'whole', files: null, patches: false };
  return execution;
}

// ---- a list of sessions with a page of executions of each, in one statement ---------------------

/** The columns of a changeset row, in the order sessionsWithExecutions reads them (CHANGESET_COLUMNS, COUNT_COLUMNS). */
const CHANGESET_KEYS = {
  whole: ['executionId', 'sessionId', 'coverage', 'unavailableReason', 'detail', 'omissions', 'fileCount', 'additions',
    'deletions', 'patchBytes', 'frozenAt', 'prunedAt'],
  counts: ['executionId', 'coverage', 'fileCount', 'additions', 'deletions', 'prunedAt'],
} as const;

/** The page of executions each session of a list reads: what `executionsOfSession` would be asked (the plan's columns, its changeset row: null for none). */
export interface ExecutionsOfEach { limit: number; after: number | null; columns: readonly string[]; changesets: RowRead | null }

/**
 * Sessions (`SELECT <sessionColumns> FROM sessions WHERE <where> ORDER BY id DESC LIMIT <limit>`) and,
 * in the same statement, each one's page of executions as `executionsOfSession` reads it: the same
 * rows (newest first, up to limit+1, after the cursor, the same columns) with, when `changesets`, their
 * changeset rows or their counts (null: none). One round trip where a list of sessions with their executions took
 * two; a session's columns come on the first of its rows only (the others carry its ID and NULLs), which
 * costs less than aggregating the executions as JSON (what PostgreSQL spends escaping and the gateway
 * parsing) or than decoding them again on each of its executions' rows (13% of the gateway's CPU for
 * `sessions(first: 20)` with five executions each). Read
 * as arrays of values (postgres.js decodes each by its type as for rows), made into the rows here.
 * On one PostgreSQL (a cluster reads the pages apart: Citus cannot push down the LATERAL over a list).
 */
export async function sessionsWithExecutions(db: Context['sql'], q: { where: Fragment; limit: number; sessionColumns: readonly string[]; page: ExecutionsOfEach }) {
  const { page } = q;
  const along = page.changesets;
  const sessionKeys = q.sessionColumns.map((c) => postgres.toCamel(c));
  const executionKeys = page.columns.map((c) => postgres.toCamel(c));
  const changesetKeys = along ? CHANGESET_KEYS[along] : [];
  // A session's columns on its first row only (its ID on every row, for grouping; a session without executions
  // has one row, whose `nth` is NULL): the rows after it carry NULL there, which costs nothing to decode.
  const sessionSelect = q.sessionColumns.map((c) => (c === 'id' ? db`s.id` : db`CASE WHEN p.nth > 1 THEN NULL ELSE s.${db(c)} END`));
  const values = await db`
    SELECT ${sessionSelect.reduce((a, f) => db`${a}, ${f}`)}, ${db(page.columns.map((c) => `p.${c}`))}
      ${along ? db`, ${db(changesetKeys.map((k) => `p.cs_${postgres.fromCamel(k)}`))}` : db``}
    FROM (SELECT ${db(q.sessionColumns as string[])} FROM sessions WHERE ${q.where} ORDER BY id DESC LIMIT ${literalLimit(db, q.limit)}) s
    LEFT JOIN LATERAL (
      SELECT page.*, row_number() OVER (ORDER BY page.sequence DESC) AS nth FROM (
        SELECT ${db(page.columns.map((c) => `x.${c}`))} ${along ? db`, ${changesetColumns(db, along)}` : db``}
        FROM executions x ${along ? db`LEFT JOIN changesets c ON c.session_id = x.session_id AND c.execution_id = x.id` : db``}
        WHERE x.session_id = s.id AND ${page.after !== null ? db`x.sequence < ${page.after}` : db`true`}
        ORDER BY x.sequence DESC LIMIT ${literalLimit(db, page.limit + 1)}) page) p ON true
    ORDER BY s.id DESC, p.sequence DESC`.values();
  const sessions: SessionRow[] = [];
  const pages = new Map<string, { execution: ExecutionRow; changeset: ChangesetRow | ChangesetCounts | null }[]>();
  const idAt = q.sessionColumns.indexOf('id');
  const executionIdAt = q.sessionColumns.length + page.columns.indexOf('id');
  const changesetAt = q.sessionColumns.length + page.columns.length;
  let rows: { execution: ExecutionRow; changeset: ChangesetRow | ChangesetCounts | null }[] = [];
  for (const v of values as unknown as unknown[][]) {
    if (!sessions.length || sessions[sessions.length - 1].id !== v[idAt]) {
      const session: Record<string, unknown> = {};
      for (let i = 0; i < sessionKeys.length; i++) session[sessionKeys[i]] = v[i];
      sessions.push(session as unknown as SessionRow);
      pages.set(session.id as string, (rows = []));
    }
    if (v[executionIdAt] === null) continue; // a session without executions (after the cursor)
    const execution: Record<string, unknown> = {};
    for (let i = 0; i < executionKeys.length; i++) execution[executionKeys[i]] = v[q.sessionColumns.length + i];
    let changeset: Record<string, unknown> | null = null;
    if (along && v[changesetAt] !== null) {
      changeset = {};
      for (let i = 0; i < changesetKeys.length; i++) changeset[changesetKeys[i]] = v[changesetAt + i];
    }
    rows.push({ execution: execution as unknown as ExecutionRow, changeset: changeset as unknown as ChangesetRow | ChangesetCounts | null });
  }
  return { sessions, pages };
}

/** A session row as the read model hands it to its fields: with the page of executions its list's plan brought along. */
export type SessionRead = SessionRow & { executionsRead?: PageRead<ExecutionRead> };

/**
 * `sessionsWithExecutions` for a request: the sessions, each with its page of executions as
 * `executionsOfSession` reads it for this plan (SessionRead.executionsRead), so the `executions` field of
 * each session answers without a read of its own.
 */
export async function sessionsWithExecutionPages(ctx: Context, q: { where: Fragment; limit: number; sessionColumns: readonly string[]; page: { limit: number; after: number | null; plan: ExecutionPlan } }): Promise<SessionRead[]> {
  const { limit, after, plan } = q.page;
  const row = plan.changeset?.row ?? null;
  const { sessions, pages } = await sessionsWithExecutions(ctx.sql, { ...q, page: { limit, after, columns: plan.columns, changesets: row } });
  return sessions.map((s) => {
    const rows = pages.get(s.id)!.map((r) => (row ? withChangesetRead(r, row) : r.execution));
    (s as SessionRead).executionsRead = executionsOfSession.pageRead({ limit, after, plan: plan.key }, rows);
    return s;
  });
}

/** Messages of a session, oldest first. */
export const messagesOfSession = paged('message', (r: MessageRow) => r.position, (r) => r.sessionId, (ctx, parents, limit, after) =>
  pageEach<MessageRow>(ctx, 'messages', 'session_id', parents, limit,
    after !== null ? ctx.sql`position > ${after}` : ctx.sql`true`, ctx.sql`position`));

/** Jobs of a session, in the order they started. */
export const jobsOfSession = paged('job', (r: JobRow) => r.id, (r) => r.sessionId, (ctx, parents, limit, after) =>
  pageEach<JobRow>(ctx, 'jobs', 'session_id', parents, limit, after ? ctx.sql`id > ${after}` : ctx.sql`true`, ctx.sql`id`));

/** Messages of an execution, oldest first. */
export const messagesOfExecution = paged('message', (r: MessageRow) => r.position, (r) => r.executionId!, (ctx, parents, limit, after) =>
  pageEachExecution<MessageRow>(ctx, 'messages', parents, limit,
    after !== null ? ctx.sql`position > ${after}` : ctx.sql`true`, ctx.sql`position`));

/** Jobs of an execution, in the order they started. */
export const jobsOfExecution = paged('job', (r: JobRow) => r.id, (r) => r.executionId!, (ctx, parents, limit, after) =>
  pageEachExecution<JobRow>(ctx, 'jobs', parents, limit, after ? ctx.sql`id > ${after}` : ctx.sql`true`, ctx.sql`id`));

// ---- review comments (domain/review-comments.ts) ---------------------------------------------------

/** A changeset as review comments name it, with its session, and the state asked for (null: every state). */
export interface CommentsOfChangesetKey { sessionId: string; kind: ChangesetKind; executionID: string; fromExecutionID: string | null; state: CommentState | null }
const changesetCommentsKey = (k: Omit<CommentsOfChangesetKey, 'state'>) => `${k.sessionId}|${k.kind}|${k.executionID}|${k.fromExecutionID ?? ''}`;

/**
 * The comments of each changeset (Changeset.comments), in their order (path, line, time): one statement for
 * every changeset of the wave, on their sessions' shards. The changeset was reached through a scoped read.
 */
export const commentsOfChangeset = perContext<CommentsOfChangesetKey, ReviewCommentRow[], string>(async (keys, ctx) => {
  const distinct = [...new Map(keys.map((k) => [changesetCommentsKey(k), k])).values()];
  const rows = await ctx.sql<ReviewCommentRow[]>`
    SELECT c.* FROM review_comments c
    JOIN unnest(${distinct.map((k) => k.sessionId)}::text[], ${distinct.map((k) => k.kind)}::text[], ${distinct.map((k) => k.executionID)}::text[],
      ${distinct.map((k) => k.fromExecutionID ?? '')}::text[]) AS k(s, kind, e, f)
      ON c.session_id = k.s AND c.execution_id = k.e AND c.changeset_kind = k.kind AND coalesce(c.from_execution_id, '') = k.f
    WHERE c.session_id = ${anyOf(ctx.sql, [...new Set(distinct.map((k) => k.sessionId))])}
    ORDER BY c.path NULLS FIRST, c.line NULLS FIRST, c.created_at, c.id`;
  const grouped = groupBy(distinct.map(changesetCommentsKey), rows, (r) => changesetCommentsKey({
    sessionId: r.sessionId, kind: r.changesetKind, executionID: r.executionId, fromExecutionID: r.fromExecutionId,
  }));
  const byKey = new Map(distinct.map((k, i) => [changesetCommentsKey(k), grouped[i]]));
  return keys.map((k) => byKey.get(changesetCommentsKey(k))!.filter((r) => k.state === null || r.state === k.state));
}, { cacheKeyFn: (k) => `${changesetCommentsKey(k)}|${k.state ?? ''}` });

/** Comments of a session, oldest first (by ID: a session's IDs sort in creation order); `plan.key` the state asked for. */
export const commentsOfSession = paged('comment', (r: ReviewCommentRow) => r.id, (r) => r.sessionId,
  (ctx, parents, limit, after, state: { key: string }) =>
    pageEach<ReviewCommentRow>(ctx, 'review_comments', 'session_id', parents, limit,
      ctx.sql`${after ? ctx.sql`id > ${after}` : ctx.sql`true`} AND ${state.key ? ctx.sql`state = ${state.key}` : ctx.sql`true`}`, ctx.sql`id`));

/** Review comments by ID, within the caller's scope (null: unknown or out of scope). */
export const commentById = perContext<string, ReviewCommentRow | null>(async (ids, ctx) => {
  const rows = await ctx.sql<ReviewCommentRow[]>`
    SELECT c.* FROM review_comments c JOIN sessions s ON s.id = c.session_id
    WHERE ${rowKeys(ctx.sql, ids, { alias: 'c' })} AND ${inSessionsOf(ctx.sql, ids, 's.id')} AND ${scope(ctx, 's.directory')}`;
  return byKey(ids, rows, (r) => r.id);
});
