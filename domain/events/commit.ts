import type { Tx } from '../../db/connection.js';
import { distributedInProcess } from '../../db/cluster.js';
import type { SessionLock } from '../session-lock.js';
import { noticeSql } from '../notices.js';
import { CATALOGUE, type EventDef, type EventType, type PayloadOf, type ResultOf } from './catalogue.js';
import type { Shape } from './shape.js';

export interface Committed<T extends EventType> {
  seq: number;
  /** The event's time (journal created_at) as Postgres text. */
  at: string;
  /** What the projector answered (the row it wrote, for most events). */
  result: ResultOf<T>;
}

/**
 * The one way a session's state changes: inside the transaction that holds the session's row lock
 * (`lock`, from domain/session-lock.ts),
 *  1. check the payload against the catalogue,
 *  2. append the event to the journal (gap-free `seq`: the row lock orders appends in commit order),
 *     bump the session (`last_seq`; `updated_at` for events that touch it) and queue the journal notice
 *     (delivered at commit): one statement on one Postgres, two or three on Citus (`appendOnCluster`),
 *  3. apply the event's projector to the readable tables (usually one more statement).
 * The event's time is the database clock at the append; projectors stamp rows with it, so replay
 * rebuilds the same timestamps.
 */
export async function commitEvent<T extends EventType>(lock: SessionLock, type: T, payload: PayloadOf<T>): Promise<Committed<T>> {
  const { tx, id: sessionID } = lock;
  const d = CATALOGUE[type] as EventDef<Shape<PayloadOf<T>>, ResultOf<T>>;
  const checked = d.payload.check(payload, type);
  const notice = noticeSql(tx, { k: 'j', s: sessionID, q: tx`seq` });
  const value = tx.json(checked as never);
  const [row] = distributedInProcess() && !d.opens
    ? await appendOnCluster(tx, sessionID, type, d.version, value, d.touches, notice)
    : d.opens
    ? await tx<{ seq: string; at: string }[]>`
      WITH j AS (
        INSERT INTO journal (session_id, seq, type, version, payload, created_at)
        VALUES (${sessionID}, 1, ${type}, ${d.version}, ${value}, clock_timestamp())
        RETURNING seq, created_at
      )
      SELECT seq, created_at::text AS at, ${notice} FROM j`
    : await tx<{ seq: string; at: string }[]>`
      WITH c AS (SELECT clock_timestamp() AS at), s AS (
        UPDATE sessions SET last_seq = last_seq + 1${d.touches ? tx`, updated_at = c.at` : tx``}
        FROM c WHERE id = ${sessionID} RETURNING last_seq, c.at
      ), j AS (
        INSERT INTO journal (session_id, seq, type, version, payload, created_at)
        SELECT ${sessionID}, last_seq, ${type}, ${d.version}, ${value}, at FROM s
        RETURNING seq, created_at
      )
      SELECT seq, created_at::text AS at, ${notice} FROM j`;
  if (!row) throw new Error(`commitEvent: session ${sessionID} vanished inside its own transaction`);
  const seq = Number(row.seq);
  const result = await d.project(lock, { sessionID, seq, at: row.at, payload: checked });
  return { seq, at: row.at, result };
}

/**
 * The append of an event after the first on Citus, where the one-statement form's modifying CTEs (the
 * session's bump feeding the journal's insert) are planned as intermediate results shipped over a second
 * connection to the worker: a two-phase commit for every event. Here each statement is routed to the
 * session's shard over one connection (the notice is the coordinator's own), so a session's transaction
 * commits on its worker in one phase. Citus refuses volatile functions in an UPDATE, hence the event's time
 * taken by the journal's insert and then given to the session. Correct on one Postgres too, only dearer.
 */
async function appendOnCluster(tx: Tx, sessionID: string, type: string, version: number, value: unknown, touches: boolean,
  notice: ReturnType<typeof noticeSql>): Promise<{ seq: string; at: string }[]> {
  const [s] = await tx<{ lastSeq: string }[]>`UPDATE sessions SET last_seq = last_seq + 1 WHERE id = ${sessionID} RETURNING last_seq`;
  if (!s) return [];
  const rows = await tx<{ seq: string; at: string }[]>`
    WITH j AS (
      INSERT INTO journal (session_id, seq, type, version, payload, created_at)
      VALUES (${sessionID}, ${s.lastSeq}, ${type}, ${version}, ${value as never}, clock_timestamp())
      RETURNING seq, created_at
    )
    SELECT seq, created_at::text AS at, ${notice} FROM j`;
  // (Sent as text: a parameter typed timestamptz would go through a JavaScript Date, to the millisecond.)
  if (touches) await tx`UPDATE sessions SET updated_at = ${rows[0].at}::text::timestamptz WHERE id = ${sessionID}`;
  return rows;
}
