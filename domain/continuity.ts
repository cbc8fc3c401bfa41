import type { Db } from '../db/connection.js';
import type { Actor } from './access.js';
import { getExecution } from './executions.js';
import type { ExecutionRow } from './rows.js';
import { tombstone } from './sessions.js';

export type Continuity =
  | { kind: 'continuous'; execution: ExecutionRow }
  | {
      kind: 'broken';
      reason: 'LATER_EXECUTION' | 'INTERRUPTED' | 'FAILED' | 'SESSION_SEALED' | 'SESSION_REMOVED';
      execution: ExecutionRow | null;
      cause: ExecutionRow | null;
    }
  | { kind: 'unknown'; reason: 'UNKNOWN_EXECUTION' | 'NOT_SETTLED' | 'SETTLEMENT_UNCERTAIN' | 'HISTORY_EXPIRED'; detail: string };

/**
 * Does a plugin checkpoint taken at this execution still hold? Answered from durable state only:
 * executions, the session's seal, and tombstones of removed sessions.
 */
export async function continuity(db: Db, actor: Actor, executionID: string): Promise<Continuity> {
  const e = await getExecution(db, actor, executionID);
  if (!e) {
    const t = await tombstone(db, actor, executionID);
    if (t && t.kind === 'execution') return { kind: 'broken', reason: 'SESSION_REMOVED', execution: null, cause: null };
    return { kind: 'unknown', reason: 'UNKNOWN_EXECUTION', detail: `No execution ${executionID} is known to this gateway.` };
  }
  switch (e.status) {
    case 'RUNNING':
      return { kind: 'unknown', reason: 'NOT_SETTLED', detail: 'The execution is still running.' };
    case 'ABANDONED':
      return {
        kind: 'unknown',
        reason: 'SETTLEMENT_UNCERTAIN',
        detail: 'The host lost its lease before the execution settled; whether it finished is not known.',
      };
    case 'FAILED':
      return { kind: 'broken', reason: 'FAILED', execution: e, cause: null };
    case 'INTERRUPTED':
      return { kind: 'broken', reason: 'INTERRUPTED', execution: e, cause: null };
  }
  const [later] = await db<ExecutionRow[]>`
    SELECT * FROM executions WHERE session_id = ${e.sessionId} AND sequence > ${e.sequence} ORDER BY sequence LIMIT 1`;
  if (later) return { kind: 'broken', reason: 'LATER_EXECUTION', execution: e, cause: later };
  const [s] = await db`SELECT seal_requested_at FROM sessions WHERE id = ${e.sessionId}`;
  if (s?.sealRequestedAt) return { kind: 'broken', reason: 'SESSION_SEALED', execution: e, cause: null };
  return { kind: 'continuous', execution: e };
}
