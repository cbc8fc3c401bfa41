import type { Db, Sql, Tx } from '../db/connection.js';
import { CATALOGUE, JOURNAL_TABLES, readEvent, UnknownEventError, type EventDef, type JournalTable, type PayloadOf, type UpcastContext } from './events/catalogue.js';
import { PayloadError, type Shape } from './events/shape.js';
import { replayLock } from './session-lock.js';

/**
 * Replay: rebuilding every table the journal owns (domain/events/catalogue.ts JOURNAL_TABLES:
 * sessions and their children, executions, jobs, messages and parts, compactions, review comments, tombstones; seal state lives on
 * sessions) from the journal alone, with the projectors of the live write path. The projectors name
 * tables unqualified, so replay sets `search_path` to a scratch schema holding empty copies of those
 * tables and runs them there, one session at a time, in seq order (every projector touches only its
 * event's session). Events are read through the catalogue: checked, older versions upcast.
 *
 * On a Citus coordinator the scratch tables are plain tables of the coordinator (nothing distributes
 * them): the projectors run there as on one Postgres, and the statements that compare or copy them
 * against the live, distributed tables are joins Citus plans by reading the scratch table whole (a
 * FULL or LEFT JOIN, UPDATE … FROM), never a subquery correlated to a row of the other side, which
 * Citus refuses between a coordinator table and a distributed one.
 */

export class ReplayError extends Error {}

/** What names a row of each journal table in a difference (`ProjectionDiff.key`). */
const KEYS: Record<JournalTable, readonly string[]> = {
  sessions: ['id'], session_children: ['parent_id', 'child_id'], executions: ['id'], model_calls: ['execution_id', 'index'], jobs: ['id'], messages: ['id'], parts: ['id'], compactions: ['session_id', 'seq'],
  review_comments: ['id'], tombstones: ['id'],
};

/**
 * Primary key of each journal table (what rows are matched on): led by the session (migration 053), so
 * on a cluster distributed by session (README "Scaling") the live side of a match is read by its key.
 */
const MATCH: Record<JournalTable, readonly string[]> = {
  sessions: ['id'], session_children: ['parent_id', 'child_id'], executions: ['session_id', 'id'], model_calls: ['session_id', 'execution_id', 'index'], jobs: ['session_id', 'id'], messages: ['session_id', 'id'], parts: ['session_id', 'id'],
  compactions: ['session_id', 'seq'], review_comments: ['session_id', 'id'], tombstones: ['session_id', 'id'],
};
const match = (t: JournalTable, a: string, b: string) => MATCH[t].map((k) => `${a}."${k}" = ${b}."${k}"`).join(' AND ');

export interface ReplayStats {
  sessions: number;
  events: number;
  /** Rows replayed per table. */
  rows: Record<JournalTable, number>;
  /**
   * Sessions whose journal holds events of an older version that cannot rebuild some of their rows
   * exactly, with those tables: verification and rebuild leave those rows out.
   */
  inexact: Map<string, Set<JournalTable>>;
}

interface StoredEvent { sessionId: string; seq: string; type: string; version: number; payload: unknown; at: string }

function checkSchemaName(schema: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema) || schema === 'public') throw new Error(`not a usable schema name: ${schema}`);
}

/** The schema the live tables are in (the connection's current schema). */
async function liveSchema(tx: Tx): Promise<string> {
  const [r] = await tx<{ s: string }[]>`SELECT current_schema() AS s`;
  return r.s;
}

/**
 * Tables outside the journal's that a projector also writes: the removal of a session deletes its
 * idempotency keys (domain/events/projectors.ts sessionRemoved). Replay gives them empty copies, so the
 * projectors run unchanged; it neither rebuilds nor compares them.
 */
const SIDE_TABLES = ['idempotency_keys'] as const;

/** Empty copies of every journal table (and SIDE_TABLES) in `schema` (columns, defaults, checks, indexes; no foreign keys). */
async function createTargets(tx: Tx, live: string, schema: string): Promise<void> {
  await tx`CREATE SCHEMA IF NOT EXISTS ${tx(schema)}`;
  const tables = [...JOURNAL_TABLES, ...SIDE_TABLES];
  for (const t of [...tables].reverse()) await tx`DROP TABLE IF EXISTS ${tx(schema + '.' + t)}`;
  for (const t of tables) await tx`CREATE TABLE ${tx(schema + '.' + t)} (LIKE ${tx(live + '.' + t)} INCLUDING ALL)`;
}

/**
 * What the upcasts may ask of the session folded so far: the host of each execution (from its
 * execution.started) and that host's kind (the first word of its registered name: hosts are never deleted).
 */
class SessionFold implements UpcastContext {
  private readonly hostOf = new Map<string, string>();
  constructor(private readonly kinds: ReadonlyMap<string, string>) {}
  started(executionID: string, hostID: string) { this.hostOf.set(executionID, hostID); }
  hostKindOf(executionID: string): string | null {
    const h = this.hostOf.get(executionID);
    return h === undefined ? null : this.kinds.get(h) ?? null;
  }
}

/** Applies one stored event to the tables `search_path` points at, as commitEvent applied it live. */
async function applyStored(tx: Tx, e: StoredEvent, stats: ReplayStats, fold: SessionFold): Promise<void> {
  let read;
  try {
    read = readEvent(e.type, e.version, e.payload, fold);
  } catch (err) {
    if (err instanceof UnknownEventError || err instanceof PayloadError) {
      throw new ReplayError(`seq ${e.seq} of ${e.sessionId}: ${err.message}`);
    }
    throw err;
  }
  if (read.inexact.length) {
    let set = stats.inexact.get(e.sessionId);
    if (!set) stats.inexact.set(e.sessionId, (set = new Set()));
    for (const t of read.inexact) set.add(t);
  }
  if (read.type === 'execution.started') {
    const p = read.payload as PayloadOf<'execution.started'>;
    fold.started(p.executionID, p.hostID);
  }
  const d = CATALOGUE[read.type] as EventDef<Shape<unknown>, unknown>;
  const seq = Number(e.seq);
  if (!d.opens) {
    await tx`UPDATE sessions SET last_seq = ${seq}${d.touches ? tx`, updated_at = ${e.at}::text::timestamptz` : tx``} WHERE id = ${e.sessionId}`;
  }
  await d.project(replayLock(tx, e.sessionId), { sessionID: e.sessionId, seq, at: e.at, payload: read.payload });
}

/** Folds the whole journal (in `live`), session by session, into the empty tables of `schema`. */
async function replayInto(tx: Tx, live: string, schema: string): Promise<ReplayStats> {
  const rows = Object.fromEntries(JOURNAL_TABLES.map((t) => [t, 0])) as Record<JournalTable, number>;
  const stats: ReplayStats = { sessions: 0, events: 0, rows, inexact: new Map() };
  const journal = tx(live + '.journal');
  const sessions = await tx<{ sessionId: string }[]>`SELECT DISTINCT session_id FROM ${journal} ORDER BY session_id`;
  const kinds = new Map((await tx<{ id: string; kind: string }[]>`SELECT id, split_part(name, ' ', 1) AS kind FROM ${tx(live + '.hosts')}`).map((h) => [h.id, h.kind]));
  await tx`SELECT set_config('search_path', ${schema}, true)`;
  try {
    for (const { sessionId } of sessions) {
      const fold = new SessionFold(kinds);
      for (let after = 0; ;) {
        const events = await tx<StoredEvent[]>`
          SELECT session_id, seq, type, version, payload, created_at::text AS at FROM ${journal}
          WHERE session_id = ${sessionId} AND seq > ${after} ORDER BY seq LIMIT 5000`;
        for (const e of events) {
          if (Number(e.seq) !== after + 1) throw new ReplayError(`journal of ${sessionId} has a gap: seq ${e.seq} after ${after}`);
          await applyStored(tx, e, stats, fold);
          after = Number(e.seq);
        }
        stats.events += events.length;
        if (events.length < 5000) break;
      }
      stats.sessions++;
    }
  } finally {
    await tx`SELECT set_config('search_path', ${live}, true)`;
  }
  for (const t of JOURNAL_TABLES) {
    const [c] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM ${tx(schema + '.' + t)}`;
    stats.rows[t] = c.n;
  }
  return stats;
}

/**
 * Replays the journal into freshly created, empty tables in `<schema>` (same columns as the live
 * ones, no foreign keys), leaving the live tables untouched.
 */
export async function replayIntoSchema(sql: Sql, schema: string): Promise<ReplayStats> {
  checkSchemaName(schema);
  return sql.begin(async (tx) => {
    const live = await liveSchema(tx);
    await createTargets(tx, live, schema);
    return replayInto(tx, live, schema);
  });
}

/** The session of a row of `table` (the column that says which session it belongs to). */
const SESSION_COLUMN: Record<JournalTable, string> = {
  sessions: 'id', session_children: 'child_id', executions: 'session_id', model_calls: 'session_id', jobs: 'session_id', messages: 'session_id', parts: 'session_id', compactions: 'session_id',
  review_comments: 'session_id', tombstones: 'session_id',
};

/** SQL condition: the row `alias` of `table` is not one an inexact older event produced. */
function exactRows(table: JournalTable, alias: string, inexact: Map<string, Set<JournalTable>>): string {
  const ids = [...inexact].filter(([, ts]) => ts.has(table)).map(([id]) => id);
  if (!ids.length) return 'true';
  const list = ids.map((id) => `'${id.replace(/'/g, "''")}'`).join(', ');
  return `${alias}."${SESSION_COLUMN[table]}" NOT IN (${list})`;
}

/** The columns of a table (a name `search_path` resolves, or schema-qualified), in order. */
async function columnsOf(db: Db, table: string): Promise<string[]> {
  return (await db<{ name: string }[]>`
    SELECT attname AS name FROM pg_attribute
    WHERE attrelid = ${table}::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`).map((c) => c.name);
}

export interface ProjectionDiff {
  table: JournalTable;
  key: string;
  live: unknown;
  replayed: unknown;
}

/**
 * Row-by-row differences between the live tables and those in `<schema>` (every column, exact),
 * leaving out rows an older event version cannot rebuild exactly (`inexact`, from the replay).
 */
export async function compareProjections(db: Db, schema: string, opts: { limit?: number; inexact?: ReplayStats['inexact'] } = {}): Promise<ProjectionDiff[]> {
  checkSchemaName(schema);
  const limit = opts.limit ?? 20;
  const inexact = opts.inexact ?? new Map();
  const diffs: ProjectionDiff[] = [];
  for (const table of JOURNAL_TABLES) {
    const key = KEYS[table].map((k) => `coalesce(l."${k}", r."${k}")::text`).join(` || '/' || `);
    // Each side through a subquery that names every column: Citus, joining a distributed table with a
    // coordinator one, reads only the columns a statement names, and a whole-row reference (to_jsonb(l))
    // to the table itself would see NULL in all the others (Citus 13.2: no difference found at all).
    const list = (await columnsOf(db, table)).map((c) => `"${c}"`).join(', ');
    const present = (a: string) => `${a}."${MATCH[table][0]}" IS NOT NULL`;
    const rows = await db.unsafe<{ key: string; live: unknown; replayed: unknown }[]>(`
      SELECT ${key} AS key, to_jsonb(l) AS live, to_jsonb(r) AS replayed
      FROM (SELECT ${list} FROM "${table}") l FULL JOIN (SELECT ${list} FROM "${schema}"."${table}") r ON ${match(table, 'r', 'l')}
      WHERE to_jsonb(l) IS DISTINCT FROM to_jsonb(r)
        AND (NOT ${present('l')} OR ${exactRows(table, 'l', inexact)}) AND (NOT ${present('r')} OR ${exactRows(table, 'r', inexact)})
      ORDER BY 1 LIMIT ${Number(limit)}`);
    for (const r of rows) diffs.push({ table, key: r.key, live: r.live, replayed: r.replayed });
  }
  return diffs;
}

export interface RebuildStats extends ReplayStats {
  /** Rows of the live tables the rebuild had to change (all zero when they already matched the journal). */
  changed: { deleted: number; updated: number; inserted: number };
}

/**
 * Rebuilds every live journal table from the journal, in one transaction: the journal is replayed into
 * a scratch schema, and the live tables are made equal to it row by row (rows the journal does not
 * produce are deleted, differing rows are overwritten, missing rows inserted). Rows that match are left
 * alone, so rows of other tables that reference them (snapshots, changesets) survive. Rows an older
 * event version cannot rebuild exactly are left as they are (counted in `inexact`).
 *
 * Writers wait (EXCLUSIVE locks; readers keep reading the old rows until commit). A writer that had
 * appended its event when the locks were taken but not yet written its projection is blocked until we
 * commit: its event is not visible to us and it writes its own rows afterwards, so nothing is lost or
 * doubled.
 */
export async function rebuildProjections(sql: Sql): Promise<RebuildStats> {
  const schema = `gateway_rebuild_${process.pid}`;
  return sql.begin(async (tx) => {
    const live = await liveSchema(tx);
    await tx.unsafe(`LOCK TABLE ${JOURNAL_TABLES.map((t) => `"${t}"`).join(', ')} IN EXCLUSIVE MODE`);
    await createTargets(tx, live, schema);
    const stats = await replayInto(tx, live, schema);
    const changed = { deleted: 0, updated: 0, inserted: 0 };
    const count = (r: { count: number }) => Number(r.count);
    // Children first for deletions, parents first for insertions. The rows to delete or insert are
    // found by an anti-join (LEFT JOIN … IS NULL), which one Postgres plans as NOT EXISTS and Citus by
    // reading the scratch table whole (a correlated NOT EXISTS between it and a distributed table is refused).
    for (const t of [...JOURNAL_TABLES].reverse()) {
      const keys = MATCH[t];
      changed.deleted += count(await tx.unsafe(`
        DELETE FROM "${t}" l USING (
          SELECT ${keys.map((k) => `d."${k}"`).join(', ')} FROM "${t}" d LEFT JOIN "${schema}"."${t}" r ON ${match(t, 'r', 'd')}
          WHERE r."${keys[0]}" IS NULL AND ${exactRows(t, 'd', stats.inexact)}
        ) d WHERE ${match(t, 'l', 'd')}`));
    }
    for (const t of JOURNAL_TABLES) {
      const cols = await columnsOf(tx, `${live}.${t}`);
      const values = cols.filter((c) => !MATCH[t].includes(c));
      const set = values.map((c) => `"${c}" = r."${c}"`).join(', ');
      // Rows compared column by column, not through to_jsonb: Citus refuses a function of the row's
      // columns in a distributed UPDATE (every column type here has an equality). A table that is all
      // key (session_children) has nothing to update.
      const row = (a: string) => `ROW(${values.map((c) => `${a}."${c}"`).join(', ')})`;
      if (values.length) changed.updated += count(await tx.unsafe(`
        UPDATE "${t}" l SET ${set} FROM "${schema}"."${t}" r
        WHERE ${match(t, 'r', 'l')} AND ${row('l')} IS DISTINCT FROM ${row('r')} AND ${exactRows(t, 'l', stats.inexact)}`));
      const list = cols.map((c) => `"${c}"`).join(', ');
      changed.inserted += count(await tx.unsafe(`
        INSERT INTO "${t}" (${list}) SELECT ${cols.map((c) => `r."${c}"`).join(', ')}
        FROM "${schema}"."${t}" r LEFT JOIN "${t}" l ON ${match(t, 'r', 'l')}
        WHERE l."${MATCH[t][0]}" IS NULL AND ${exactRows(t, 'r', stats.inexact)}`));
    }
    await tx`DROP SCHEMA ${tx(schema)} CASCADE`;
    return { ...stats, changed };
  });
}
