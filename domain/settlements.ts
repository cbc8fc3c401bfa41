import type { Db, Tx } from '../db/connection.js';
import { scopeCondition, type Actor } from './access.js';
import { CHANNEL } from './journal.js';

/**
 * The global settlement log. Its cursor (`pos`) follows commit order: the position is taken from a
 * single clock row whose lock is held until commit, so a transaction that commits later always gets
 * a larger position, and by the time a position is visible every smaller one is visible too. A
 * reader that has seen position p can therefore never later find a new row below p.
 *
 * recordSettlement must be the last statement of its transaction (keep the clock lock short).
 */
export async function recordSettlement(
  tx: Tx,
  s: { sessionId: string; executionId: string; status: string; directory: string; settledAt: Date },
): Promise<number> {
  const [row] = await tx`
    WITH c AS (UPDATE clocks SET value = value + 1 WHERE name = 'settlement' RETURNING value),
    i AS (
      INSERT INTO settlements (pos, session_id, execution_id, status, directory, settled_at)
      SELECT value, ${s.sessionId}, ${s.executionId}, ${s.status}, ${s.directory}, ${s.settledAt} FROM c
      RETURNING pos
    )
    SELECT pos, pg_notify(${CHANNEL}, json_build_object('k', 's', 'p', pos)::text) FROM i`;
  return Number(row.pos);
}

export interface SettlementRow {
  pos: number;
  sessionId: string;
  executionId: string;
  status: string;
  directory: string;
  settledAt: Date;
}

export async function readSettlements(
  db: Db,
  actor: Actor,
  opts: { after: number; limit: number; sessionID?: string | null },
): Promise<SettlementRow[]> {
  return db<SettlementRow[]>`
    SELECT * FROM settlements
    WHERE pos > ${opts.after}
      ${opts.sessionID ? db`AND session_id = ${opts.sessionID}` : db``}
      AND ${scopeCondition(db, actor, 'directory')}
    ORDER BY pos LIMIT ${opts.limit}`;
}

export function encodeSettlementCursor(pos: number): string {
  return Buffer.from(`settlement:${pos}`).toString('base64url');
}

export function decodeSettlementCursor(cursor: string): number | null {
  const m = /^settlement:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  return m ? Number(m[1]) : null;
}
