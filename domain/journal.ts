import type { Db, Tx } from '../db/connection.js';

/** The one channel every instance LISTENs on. Payloads carry IDs and cursors only, never content. */
export const CHANNEL = 'gateway_events';

export type Notice =
  | { k: 'j'; s: string; q: number } // journal event of session s at seq q
  | { k: 's'; p: number } // settlement log position p
  | { k: 't'; id: string }; // token revoked

/**
 * Journal event types, versioned by the `version` column. The payload of each is what a replay needs
 * to rebuild the projections it touches.
 */
export type EventType =
  | 'session.created'
  | 'session.updated'
  | 'session.removed'
  | 'session.sealing'
  | 'session.sealed'
  | 'session.admissions_closed' // issue 12 (domain/admission.ts): the host quiesced the session for a seal
  | 'session.compacted' // issue 8 (domain/compaction.ts)
  | 'execution.started'
  | 'execution.settled'
  | 'execution.abandoned'
  | 'execution.interrupting'
  | 'message.appended'
  | 'message.part_corrected'
  | 'message.retracted'
  | 'job.started'
  | 'job.backgrounded'
  | 'job.cancelling'
  | 'job.finished'
  | 'job.lost'
  | 'job.restored';

export interface JournalEvent {
  sessionID: string;
  seq: number;
  type: EventType;
  version: number;
  payload: any;
  createdAt: Date;
}

/**
 * Appends one event to a session's journal inside `tx`, which must hold the session's row lock
 * (taken by lockSession): that lock is what makes `seq` gap-free and in commit order per session.
 * The notification is part of the transaction, so Postgres delivers it only after commit.
 * One round trip.
 */
export async function appendEvent(tx: Tx, sessionID: string, type: EventType, payload: unknown, version = 1): Promise<number> {
  const [row] = await tx`
    WITH s AS (
      UPDATE sessions SET last_seq = last_seq + 1 WHERE id = ${sessionID} RETURNING last_seq
    ), j AS (
      INSERT INTO journal (session_id, seq, type, version, payload)
      SELECT ${sessionID}, last_seq, ${type}, ${version}, ${tx.json(payload as any)} FROM s
      RETURNING seq
    )
    SELECT seq, pg_notify(${CHANNEL}, json_build_object('k', 'j', 's', ${sessionID}::text, 'q', seq)::text) FROM j`;
  if (!row) throw new Error(`appendEvent: session ${sessionID} vanished inside its own transaction`);
  return Number(row.seq);
}

export function toEvent(r: any): JournalEvent {
  return { sessionID: r.sessionId, seq: Number(r.seq), type: r.type, version: r.version, payload: r.payload, createdAt: r.createdAt };
}

export async function readJournal(db: Db, sessionID: string, afterSeq: number, limit = 1000): Promise<JournalEvent[]> {
  const rows = await db`
    SELECT * FROM journal WHERE session_id = ${sessionID} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`;
  return rows.map(toEvent);
}
