import type { Db, Sql, Tx } from '../db/connection.js';

/**
 * Rebuilding the message and part projections from the journal.
 *
 * The fold below is written independently of the live write path (domain/messages.ts,
 * domain/corrections.ts): the replay test compares the two after long random histories. Timestamps
 * are carried as Postgres text so microseconds survive the round trip (a JS Date would drop them);
 * the live path stamps rows with now(), the transaction's timestamp, which is also the journal
 * row's created_at, so the event's created_at is the projected timestamp.
 */

/** Journal event types the message projections are built from; every other type leaves them alone. */
const MESSAGE_EVENTS = ['message.appended', 'message.part_corrected', 'message.retracted', 'session.removed'];

interface ReplayEvent {
  sessionId: string;
  seq: number;
  type: string;
  version: number;
  payload: any;
  /** created_at as Postgres text. */
  at: string;
}

interface MessageState {
  id: string;
  session_id: string;
  execution_id: string | null;
  position: number;
  role: string;
  origin: string;
  revision: number;
  retracted_at: string | null;
  retraction_reason: string | null;
  created_at: string;
  external_id: string | null;
}

interface PartState {
  id: string;
  message_id: string;
  session_id: string;
  index: number;
  type: string;
  text: string | null;
  revision: number;
  corrected_at: string | null;
  tool: string | null;
  input: unknown;
  output: string | null;
  status: string | null;
  path: string | null;
  mime: string | null;
  external_id: string | null;
  title: string | null;
  metadata: unknown;
  started_at: string | null;
  ended_at: string | null;
}

export class ReplayError extends Error {}

/** The projection of one session, folded from its events in seq order. */
export class SessionProjection {
  readonly messages = new Map<string, MessageState>();
  readonly parts = new Map<string, PartState[]>();
  private lastSeq = 0;

  constructor(readonly sessionID: string) {}

  apply(e: ReplayEvent): void {
    if (e.seq !== this.lastSeq + 1) {
      throw new ReplayError(`journal of ${this.sessionID} has a gap: seq ${e.seq} after ${this.lastSeq}`);
    }
    this.lastSeq = e.seq;
    if (!MESSAGE_EVENTS.includes(e.type)) return;
    if (e.version !== 1) throw new ReplayError(`${e.type} version ${e.version} (seq ${e.seq} of ${this.sessionID}) is not known to this replay`);
    const p = e.payload;
    switch (e.type) {
      case 'message.appended': {
        this.messages.set(p.messageID, {
          id: p.messageID, session_id: this.sessionID, execution_id: p.executionID ?? null, position: e.seq,
          role: p.role, origin: p.origin, revision: 1, retracted_at: null, retraction_reason: null, created_at: e.at,
          external_id: p.externalID ?? null,
        });
        this.parts.set(p.messageID, (p.parts as any[]).map((x) => ({
          id: x.id, message_id: p.messageID, session_id: this.sessionID, index: x.index, type: x.type,
          text: x.text ?? null, revision: 1, corrected_at: null, tool: x.tool ?? null,
          input: x.input === undefined || x.input === null ? null : x.input,
          output: x.output ?? null, status: x.status ?? null, path: x.path ?? null, mime: x.mime ?? null,
          external_id: x.externalId ?? null, title: x.title ?? null, metadata: x.metadata ?? null,
          started_at: x.startedAt ?? null, ended_at: x.endedAt ?? null,
        })));
        return;
      }
      case 'message.part_corrected': {
        const m = this.message(p.messageID, e);
        const part = this.parts.get(m.id)!.find((x) => x.id === p.partID);
        if (!part) throw new ReplayError(`seq ${e.seq} of ${this.sessionID} corrects unknown part ${p.partID}`);
        part.text = p.text;
        part.revision += 1;
        part.corrected_at = e.at;
        m.revision += 1;
        return;
      }
      case 'message.retracted': {
        const m = this.message(p.messageID, e);
        m.retracted_at = e.at;
        m.retraction_reason = p.reason ?? null;
        m.revision += 1;
        for (const x of this.parts.get(m.id)!) {
          x.text = x.tool = x.output = x.status = x.path = x.mime = x.title = null;
          x.input = x.metadata = null;
        }
        return;
      }
      case 'session.removed':
        this.messages.clear();
        this.parts.clear();
        return;
    }
  }

  private message(id: string, e: ReplayEvent): MessageState {
    const m = this.messages.get(id);
    if (!m) throw new ReplayError(`seq ${e.seq} of ${this.sessionID} (${e.type}) names unknown message ${id}`);
    return m;
  }
}

export interface ReplayTarget {
  /** Table names (optionally schema-qualified). */
  messages: string;
  parts: string;
}

export interface ReplayStats {
  sessions: number;
  events: number;
  messages: number;
  parts: number;
}

async function flush(db: Db, target: ReplayTarget, proj: SessionProjection, stats: ReplayStats): Promise<void> {
  const messages = [...proj.messages.values()];
  const parts = messages.flatMap((m) => proj.parts.get(m.id)!);
  // jsonb_populate_recordset reads every column from JSON text with the column's own type, so
  // timestamps keep their microseconds (postgres.js would turn a timestamptz parameter into a Date).
  for (let i = 0; i < messages.length; i += 1000) {
    await db`INSERT INTO ${db(target.messages)}
      SELECT * FROM jsonb_populate_recordset(NULL::${db(target.messages)}, ${db.json(messages.slice(i, i + 1000) as any)})`;
  }
  for (let i = 0; i < parts.length; i += 1000) {
    await db`INSERT INTO ${db(target.parts)}
      SELECT * FROM jsonb_populate_recordset(NULL::${db(target.parts)}, ${db.json(parts.slice(i, i + 1000) as any)})`;
  }
  stats.messages += messages.length;
  stats.parts += parts.length;
}

/** Folds the whole journal, session by session, into the (empty) target tables. */
async function replayInto(tx: Tx, target: ReplayTarget): Promise<ReplayStats> {
  const stats: ReplayStats = { sessions: 0, events: 0, messages: 0, parts: 0 };
  const sessions = await tx<{ sessionId: string }[]>`SELECT DISTINCT session_id FROM journal ORDER BY session_id`;
  for (const { sessionId } of sessions) {
    const proj = new SessionProjection(sessionId);
    for (let after = 0; ;) {
      const rows = await tx<ReplayEvent[]>`
        SELECT session_id, seq, type, version, payload, created_at::text AS at FROM journal
        WHERE session_id = ${sessionId} AND seq > ${after} ORDER BY seq LIMIT 5000`;
      for (const r of rows) proj.apply({ ...r, seq: Number(r.seq) });
      stats.events += rows.length;
      if (rows.length < 5000) break;
      after = Number(rows[rows.length - 1].seq);
    }
    await flush(tx, target, proj, stats);
    stats.sessions++;
  }
  return stats;
}

const COLUMNS = {
  messages: ['session_id', 'execution_id', 'position', 'role', 'origin', 'revision', 'retracted_at', 'retraction_reason', 'created_at', 'external_id'],
  parts: ['message_id', 'session_id', 'index', 'type', 'text', 'revision', 'corrected_at', 'tool', 'input', 'output', 'status', 'path', 'mime',
    'external_id', 'title', 'metadata', 'started_at', 'ended_at'],
} as const;

export interface RebuildStats extends ReplayStats {
  /** Rows of the live tables the rebuild had to change (all zero when they already matched the journal). */
  changed: { deleted: number; updated: number; inserted: number };
}

/**
 * Rebuilds the live `messages` and `parts` tables from the journal, in one transaction: the journal is
 * replayed into empty temporary tables, and the live tables are made equal to them row by row (rows
 * the journal does not produce are deleted, differing rows are overwritten, missing rows inserted).
 * Rows that match are left alone, so rows of other tables that reference them (compactions) survive.
 *
 * Writers of the projections wait (EXCLUSIVE lock; readers keep reading the old rows until commit).
 * A writer that appended its event but had not yet written the projection when the lock was taken is
 * blocked until we commit: its event is not visible to us and it writes its own row afterwards, so
 * nothing is lost or doubled.
 */
export async function rebuildProjections(sql: Sql): Promise<RebuildStats> {
  return sql.begin(async (tx) => {
    await tx`LOCK TABLE messages, parts IN EXCLUSIVE MODE`;
    await tx`CREATE TEMP TABLE replay_messages (LIKE messages INCLUDING DEFAULTS) ON COMMIT DROP`;
    await tx`CREATE TEMP TABLE replay_parts (LIKE parts INCLUDING DEFAULTS) ON COMMIT DROP`;
    const stats = await replayInto(tx, { messages: 'replay_messages', parts: 'replay_parts' });
    const changed = { deleted: 0, updated: 0, inserted: 0 };
    const count = (r: { count: number }) => Number(r.count);
    // Children first for deletions, parents first for insertions.
    changed.deleted += count(await tx`DELETE FROM parts l WHERE NOT EXISTS (SELECT 1 FROM replay_parts r WHERE r.id = l.id)`);
    changed.deleted += count(await tx`DELETE FROM messages l WHERE NOT EXISTS (SELECT 1 FROM replay_messages r WHERE r.id = l.id)`);
    for (const table of ['messages', 'parts'] as const) {
      const cols = COLUMNS[table];
      const replayed = 'replay_' + table;
      const set = cols.map((c) => `"${c}" = r."${c}"`).join(', ');
      changed.updated += count(await tx.unsafe(`
        UPDATE ${table} l SET ${set} FROM ${replayed} r
        WHERE r.id = l.id AND to_jsonb(l) IS DISTINCT FROM to_jsonb(r)`));
      const list = ['id', ...cols].map((c) => `"${c}"`).join(', ');
      changed.inserted += count(await tx.unsafe(`
        INSERT INTO ${table} (${list}) SELECT ${list} FROM ${replayed} r
        WHERE NOT EXISTS (SELECT 1 FROM ${table} l WHERE l.id = r.id)`));
    }
    return { ...stats, changed };
  });
}

/**
 * Replays the journal into freshly created, empty tables `<schema>.messages` and `<schema>.parts`
 * (same columns as the live ones, no foreign keys), leaving the live tables untouched.
 */
export async function replayIntoSchema(sql: Sql, schema: string): Promise<ReplayStats> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema) || schema === 'public') throw new Error(`not a usable schema name: ${schema}`);
  return sql.begin(async (tx) => {
    await tx`CREATE SCHEMA IF NOT EXISTS ${tx(schema)}`;
    await tx`DROP TABLE IF EXISTS ${tx(schema + '.parts')}, ${tx(schema + '.messages')}`;
    await tx`CREATE TABLE ${tx(schema + '.messages')} (LIKE messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`;
    await tx`CREATE TABLE ${tx(schema + '.parts')} (LIKE parts INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`;
    return replayInto(tx, { messages: schema + '.messages', parts: schema + '.parts' });
  });
}

export interface ProjectionDiff {
  table: 'messages' | 'parts';
  id: string;
  live: unknown;
  replayed: unknown;
}

/** Row-by-row differences between the live projections and those in `<schema>` (every column, exact). */
export async function compareProjections(db: Db, schema: string, limit = 20): Promise<ProjectionDiff[]> {
  const diffs: ProjectionDiff[] = [];
  for (const table of ['messages', 'parts'] as const) {
    const rows = await db<{ id: string; live: unknown; replayed: unknown }[]>`
      SELECT coalesce(l.id, r.id) AS id, to_jsonb(l) AS live, to_jsonb(r) AS replayed
      FROM ${db(table)} l FULL JOIN ${db(schema + '.' + table)} r ON r.id = l.id
      WHERE to_jsonb(l) IS DISTINCT FROM to_jsonb(r)
      ORDER BY 1 LIMIT ${limit}`;
    for (const r of rows) diffs.push({ table, ...r });
  }
  return diffs;
}
