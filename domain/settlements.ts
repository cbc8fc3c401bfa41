import { literalLimit, type Db, type Sql, type Tx } from '../db/connection.js';
import { scopeCondition, type Actor } from './access.js';
import { noticeSql, type PositionedJson } from './notices.js';
import { isDistributed } from '../db/cluster.js';

/**
 * The global settlement log, whose cursor (`pos`) follows commit order.
 *
 * A settling transaction stages its row (pos NULL); it takes no lock for it while it runs, so
 * settlements run in parallel and only their commits meet at the clock. At its COMMIT a deferred
 * trigger (migrations 056-058) takes the clock, waiting for it at most
 * `gateway.settlement_clock_wait_ms` (20 ms by default), and the transaction's commit runs a sequencer
 * pass itself (its own row and every other staged row it can see get the next positions, and the head
 * notice with the rows goes out with the commit: no further hop before delivery). Settlements
 * committing at the same moment thus take the clock one after another; the bound keeps a queue of them
 * (or a long pass) from holding a commit up longer. When the wait runs out, the row stays staged and a
 * "staged" notice goes out; the sequencer (`sequenceSettlements`, run by every gateway instance on
 * staged notices, passes serialised by the clock row lock) gives every staged row it can see the next
 * positions and commits. Because positions are only handed out by passes
 * that run one after another, each starting after the previous one committed, a position becomes
 * visible only when every smaller one is visible: a reader that has seen position p can never later
 * find a new row below p. A slow settling transaction that commits after faster ones is simply
 * positioned later, so it gets a larger position: positions follow the order in which settlements
 * became visible (commit order; rows that became visible between the same two passes are ordered by
 * their staging id). Readers only see sequenced rows. On a Citus cluster there is no trigger (a
 * settling transaction stays on its session's shard) and the sequencer positions every row.
 */
export async function recordSettlement(
  tx: Tx,
  s: { sessionId: string; executionId: string; status: string; directory: string; settledAt: Date },
): Promise<void> {
  // The staged notice is the trigger's to send when it is there (only when it could not position the
  // row); without it (a distributed log), the sequencer needs it for every row.
  await tx`
    WITH i AS (
      INSERT INTO settlements (session_id, execution_id, status, directory, settled_at)
      VALUES (${s.sessionId}, ${s.executionId}, ${s.status}, ${s.directory}, ${s.settledAt})
      RETURNING id
    )
    SELECT ${noticeSql(tx, { k: 'q' })} FROM i
    WHERE NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'settlements'::regclass AND tgname = 'settlement_positioned_at_commit')`;
}

const SEQUENCE_BATCH = 5000;

/**
 * One sequencer pass: positions for every committed staged row, in one transaction, then a
 * settlement notice carrying the new head (and the positioned rows, when they fit: migration 055).
 * With `wait: false` it gives up at once (busy) when another pass holds the clock; with `wait: true`
 * it waits, so every settlement committed before the call is sequenced when it returns (unless it
 * answers busy: on a cluster, a previous pass that a worker has not committed for about 5 s). `more`
 * says a full batch was sequenced (run again). `rows`: the rows it positioned (committed), in
 * position order, exactly positions top - count + 1 … top.
 */
export async function sequenceSettlements(sql: Sql, opts: { wait?: boolean } = {}): Promise<{ busy: boolean; count: number; top: number; more: boolean; rows: SettlementRow[] }> {
  // One statement in its own implicit transaction (postgres.js answers after its commit): see
  // sequence_settlements() in migrations 005, 052, 055 and 060.
  const wait = opts.wait ?? false;
  for (let attempt = 0; ; attempt++) {
    try {
      const [r] = await sql`SELECT busy, n, top, positioned FROM sequence_settlements(${wait}, ${SEQUENCE_BATCH})`;
      return { busy: r.busy, count: r.n, top: Number(r.top), more: r.n >= SEQUENCE_BATCH, rows: positionedRows(r.positioned) };
    } catch (e) {
      // On a cluster, a pass that read rows the previous pass had positioned on a worker whose commit had not
      // landed yet rolls back (migration 060). Without `wait` that is a busy clock, tried again once that
      // pass is visible; with `wait` the caller was promised every committed settlement sequenced, so the
      // pass is tried again here as soon as the previous one's last worker has committed (milliseconds). A
      // worker that has not committed after PASS_RETRIES tries leaves the clock busy, as without `wait`.
      if ((e as { code?: string }).code !== '55P03') throw e;
      if (!wait || attempt >= PASS_RETRIES) return { busy: true, count: 0, top: 0, more: false, rows: [] };
      await new Promise((r) => setTimeout(r, Math.min(2 ** attempt, 50)));
    }
  }
}

/** How often a waiting pass is tried again behind a previous pass still committing on a worker (about 5 s). */
const PASS_RETRIES = 100;

/**
 * The rows a head notice carries, as a feed is offered them (every row after `after` up to `p`), or
 * undefined when it carries none or they are not exactly positions after … p, each with its fields
 * (the listener then reads the log, as for a notice without rows).
 */
export function noticedSettlements(n: { p: number; r: readonly PositionedJson[] | null }): { after: number; rows: SettlementRow[] } | undefined {
  if (!Array.isArray(n.r) || !n.r.length || !Number.isSafeInteger(n.p)) return undefined;
  const after = n.p - n.r.length;
  const ok = n.r.every((r, i) => r && Number(r.pos) === after + i + 1 && Number.isSafeInteger(Number(r.id))
    && typeof r.session_id === 'string' && typeof r.execution_id === 'string' && typeof r.status === 'string'
    && typeof r.directory === 'string' && typeof r.settled_at === 'string' && !Number.isNaN(Date.parse(r.settled_at)));
  return ok ? { after, rows: positionedRows(n.r) } : undefined;
}

/** The rows of a pass's JSON array (or of a head notice's `r`) as `readSettlements` reads them. */
export function positionedRows(json: readonly PositionedJson[] | null | undefined): SettlementRow[] {
  if (!json) return [];
  return json.map((r) => ({
    pos: Number(r.pos), sessionId: r.session_id, executionId: r.execution_id, status: r.status, directory: r.directory,
    settledAt: new Date(r.settled_at), id: Number(r.id),
  }));
}

/**
 * Whether some committed settlement (of one session, if given: then on its shard alone) still waits for its
 * position (cheap: a partial index).
 */
export async function hasUnsequenced(db: Db, sessionID?: string | null): Promise<boolean> {
  const [r] = await db`SELECT EXISTS (SELECT 1 FROM settlements WHERE pos IS NULL
    ${sessionID ? db`AND session_id = ${sessionID}` : db``}) AS x`;
  return r.x;
}

export interface SettlementRow {
  id: number;
  pos: number;
  sessionId: string;
  executionId: string;
  status: string;
  directory: string;
  settledAt: Date;
}

/**
 * Settlements after position `after`, in position order, never past a position not yet visible.
 *
 * On one Postgres a position is visible only once every smaller one is (see above), so the rows read
 * are always a gap-free run. On a cluster distributed by session the sequencer's pass commits on
 * several shards, and Citus gives no cluster-wide snapshot: for a moment a reader can see position p+1
 * on one shard and not p on another. A reader that handed out p+1 and moved its cursor past p would
 * lose p. So a read ends before the first position it cannot see yet: for the whole log that is read
 * off the rows themselves; a filtered read (one session, a directory scope) on a cluster counts the
 * positions between `after` and its last row, and looks for the hole only when they are not all there.
 * The positions after the hole are read again once it fills (the sequencer's head notice, or a poll).
 */
export async function readSettlements(
  db: Db,
  actor: Actor,
  opts: { after: number; limit: number; sessionID?: string | null },
): Promise<SettlementRow[]> {
  if (opts.sessionID && isDistributed(db)) {
    // One session's rows are on one shard, read in one snapshot of it. If none of them waits for its
    // position there (not staged and unpositioned, not positioned by a pass whose commit has not reached
    // this shard yet), every position of the session up to the last one seen is visible: no hole to look
    // for, and no other shard to ask. Otherwise (a settlement of this session is between its commit and
    // its position, a few milliseconds) the holes are looked for over the whole log, as below.
    const rows = await db<(SettlementRow & { pending?: boolean })[]>`
      SELECT s.*, EXISTS (SELECT 1 FROM settlements u WHERE u.session_id = ${opts.sessionID} AND u.pos IS NULL) AS pending
      FROM settlements s
      WHERE s.session_id = ${opts.sessionID} AND s.pos > ${opts.after} AND ${scopeCondition(db, actor, 's.directory')}
      ORDER BY s.pos LIMIT ${opts.limit}`;
    const pending = rows.length > 0 && rows[0].pending;
    for (const r of rows) delete r.pending;
    if (!pending) return rows;
  }
  const rows = await db<SettlementRow[]>`
    SELECT * FROM settlements
    WHERE pos > ${opts.after}
      ${opts.sessionID ? db`AND session_id = ${opts.sessionID}` : db``}
      AND ${scopeCondition(db, actor, 'directory')}
    ORDER BY pos LIMIT ${literalLimit(db, opts.limit)}`;
  if (!rows.length) return rows;
  if (!opts.sessionID && actor.directory === null) {
    const run = rows.findIndex((r, i) => r.pos !== opts.after + i + 1);
    return run < 0 ? rows : rows.slice(0, run);
  }
  if (!isDistributed(db)) return rows;
  const last = rows[rows.length - 1].pos;
  const [{ n }] = await db<{ n: number }[]>`SELECT count(*)::int AS n FROM settlements WHERE pos > ${opts.after} AND pos <= ${last}`;
  if (n === last - opts.after) return rows;
  const seen = await db<{ pos: number }[]>`SELECT pos FROM settlements WHERE pos > ${opts.after} AND pos <= ${last} ORDER BY pos`;
  const hole = seen.findIndex((r, i) => r.pos !== opts.after + i + 1);
  const visible = hole < 0 ? last : opts.after + hole;
  return rows.filter((r) => r.pos <= visible);
}

/** The position of the last settlement the actor can see (in one session if given); 0 when there is none. */
export async function latestSettlementPosition(db: Db, actor: Actor, opts: { sessionID?: string | null } = {}): Promise<number> {
  const [r] = await db<{ pos: string | null }[]>`
    SELECT max(pos) AS pos FROM settlements
    WHERE pos IS NOT NULL
      ${opts.sessionID ? db`AND session_id = ${opts.sessionID}` : db``}
      AND ${scopeCondition(db, actor, 'directory')}`;
  return r?.pos == null ? 0 : Number(r.pos);
}
