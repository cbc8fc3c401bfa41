import type { Tx } from '../db/connection.js';
import { SessionBusyError } from './errors.js';

/**
 * The busy rule (CONTRACT 5): while an execution of the session is RUNNING, what would change its
 * history under it (a correction, a retraction, a compaction, a second execution, the session's
 * removal) is refused with SessionBusyError and commits nothing. Read and checked under the session
 * row lock, which beginExecution holds too: the execution either started before (busy) or starts
 * after the commit.
 */
export function runningExecution(tx: Tx, sessionID: string): Promise<{ id: string } | null> {
  return tx<{ id: string }[]>`SELECT id FROM executions WHERE session_id = ${sessionID} AND status = 'RUNNING'`.then((r) => r[0] ?? null);
}

/** The busy rule as a check: SessionBusyError when `running` (the session's running execution, read under its lock) exists. */
export function requireIdle(sessionID: string, running: { id: string } | null | undefined): void {
  if (running) throw new SessionBusyError(sessionID, running.id);
}
