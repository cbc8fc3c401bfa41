import type { Db } from '../db/connection.js';

/**
 * Reading the per-session journal. Events are written only by `commitEvent`
 * (domain/events/commit.ts); their types, versions and payloads are declared in the event catalogue
 * (domain/events/catalogue.ts).
 */
export type { EventType } from './events/catalogue.js';

export interface JournalEvent {
  sessionID: string;
  seq: number;
  /** An EventType (a journal written by a newer gateway may hold others). */
  type: string;
  version: number;
  /** As stored (read it with readPayload of the catalogue to get the current version's type). */
  payload: any;
  createdAt: Date;
}

export function toEvent(r: any): JournalEvent {
  return { sessionID: r.sessionId, seq: Number(r.seq), type: r.type, version: r.version, payload: r.payload, createdAt: r.createdAt };
}

export async function readJournal(db: Db, sessionID: string, afterSeq: number, limit = 1000): Promise<JournalEvent[]> {
  const rows = await db`
    SELECT * FROM journal WHERE session_id = ${sessionID} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`;
  return rows.map(toEvent);
}
