import type { Db, Sql, Tx } from '../db/connection.js';
import { inScope, scopeCondition, type Actor } from './access.js';
import { InvalidRequestError, SessionBusyError, SessionNotFoundError } from './errors.js';
import { newId } from './ids.js';
import { appendEvent } from './journal.js';
import { GLOBAL_SCOPE, idempotencyKey, keyReused, lockKey, previousResult, rememberResult } from './idempotency.js';
import type { SessionRow } from './rows.js';
import { checkDirectory, checkMetadata, checkText, LIMITS, optionalId, requireId } from './validate.js';

/**
 * Takes the session's row lock for the rest of `tx`. Every state change of a session goes through
 * here first: admissions (executions, prompts, jobs), corrections, seal and removal are serialized
 * on this one lock, so there is no window between a check and a write. A session outside the
 * actor's directory scope is reported exactly like a missing one.
 */
export async function lockSession(tx: Tx, actor: Actor, sessionID: string, mode: 'update' | 'share' = 'update'): Promise<SessionRow> {
  const rows = mode === 'update'
    ? await tx<SessionRow[]>`SELECT * FROM sessions WHERE id = ${sessionID} FOR UPDATE`
    : await tx<SessionRow[]>`SELECT * FROM sessions WHERE id = ${sessionID} FOR SHARE`;
  const s = rows[0];
  if (!s || !inScope(actor, s.directory)) throw new SessionNotFoundError(sessionID);
  return s;
}

export async function getSession(db: Db, actor: Actor, sessionID: string): Promise<SessionRow | null> {
  const [s] = await db<SessionRow[]>`SELECT * FROM sessions WHERE id = ${sessionID} AND ${scopeCondition(db, actor, 'directory')}`;
  return s ?? null;
}

export interface CreateSessionInput {
  parentID?: string | null;
  title?: string | null;
  directory?: string | null;
  metadata?: unknown;
  /** Retrying with the same key answers the session the first call created (domain/idempotency.ts). */
  idempotencyKey?: string | null;
  /**
   * The host that serves the session from the start (its runtime may start the session's work), as
   * beginExecution would record it: a seal of a session that never ran then still asks that host, and
   * answers SealUnsupportedError(ADMISSION_NOT_EXCLUSIVE) if the host can start work behind the gateway.
   */
  hostID?: string | null;
}

export async function createSession(sql: Sql, actor: Actor, input: CreateSessionInput): Promise<SessionRow> {
  const parentID = optionalId('session', input.parentID, 'parentID');
  const title = checkText(input.title ?? '', 'title', LIMITS.title);
  const metadata = input.metadata === undefined || input.metadata === null ? {} : checkMetadata(input.metadata);
  let directory = input.directory == null ? null : checkDirectory(input.directory);
  const hostID = optionalId('host', input.hostID, 'hostID');
  const key = idempotencyKey('createSession', GLOBAL_SCOPE, input.idempotencyKey, { parentID, title, directory, metadata, hostID });
  return sql.begin(async (tx) => {
    if (key) {
      await lockKey(tx, key);
      const previous = await previousResult(tx, key);
      if (previous) {
        const [s] = await tx<SessionRow[]>`SELECT * FROM sessions WHERE id = ${previous}`;
        if (!s) throw new SessionNotFoundError(previous); // created with this key, removed since
        if (!inScope(actor, s.directory)) throw keyReused(key);
        return s;
      }
    }
    if (parentID) {
      // FOR SHARE: a concurrent removal of the parent waits for us, or we see it gone.
      const parent = await lockSession(tx, actor, parentID, 'share');
      directory ??= parent.directory;
    }
    if (directory === null) throw new InvalidRequestError('directory', 'directory is required for a session without a parent.');
    if (!inScope(actor, directory)) throw new InvalidRequestError('directory', 'directory is outside the directory scope of this token.');
    if (hostID) {
      // Any registered host may be named (a plugin creates the session its host will serve); FOR SHARE
      // keeps it from being removed under us.
      const [h] = await tx`SELECT id FROM hosts WHERE id = ${hostID} FOR SHARE`;
      if (!h) throw new InvalidRequestError('hostID', `No host ${hostID} is registered.`);
    }
    const id = newId('session');
    const [s] = await tx<SessionRow[]>`
      INSERT INTO sessions (id, parent_id, title, directory, metadata, host_id)
      VALUES (${id}, ${parentID}, ${title}, ${directory}, ${tx.json(metadata as any)}, ${hostID})
      RETURNING *`;
    await appendEvent(tx, id, 'session.created', { parentID, title, directory, metadata, ...(hostID ? { hostID } : {}) });
    await rememberResult(tx, key, id, null);
    return { ...s, lastSeq: 1 };
  });
}

export interface UpdateSessionInput {
  sessionID: string;
  title?: string | null;
  metadata?: unknown;
}

/** Title and metadata are replaced when given (metadata as a whole object), left alone when omitted. */
export async function updateSession(sql: Sql, actor: Actor, input: UpdateSessionInput): Promise<SessionRow> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  const title = input.title == null ? null : checkText(input.title, 'title', LIMITS.title);
  const metadata = input.metadata == null ? null : checkMetadata(input.metadata);
  return sql.begin(async (tx) => {
    await lockSession(tx, actor, sessionID);
    const [s] = await tx<SessionRow[]>`
      UPDATE sessions SET
        title = coalesce(${title}, title),
        metadata = coalesce(${metadata === null ? null : tx.json(metadata as any)}::jsonb, metadata),
        updated_at = now()
      WHERE id = ${sessionID} RETURNING *`;
    const seq = await appendEvent(tx, sessionID, 'session.updated', { title, metadata });
    return { ...s, lastSeq: seq };
  });
}

export interface RemovedSessions {
  sessionID: string;
  removedSessionIDs: string[];
}

/**
 * Removes a session and all its descendants in one transaction. Busy if any of them has a running
 * execution. Leaves tombstones for the sessions and their executions so later questions about those
 * IDs are answered as removed. The journal keeps every event, ending with session.removed.
 */
export async function removeSession(sql: Sql, actor: Actor, input: { sessionID: string }): Promise<RemovedSessions> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  return sql.begin(async (tx) => {
    const root = await lockSession(tx, actor, sessionID);
    // Lock the whole subtree. Children created concurrently hold FOR SHARE on their parent; once a
    // parent is locked here no new child can appear under it, so repeat until the set is stable.
    let locked = new Map<string, SessionRow>([[root.id, root]]);
    for (;;) {
      const ids = [...locked.keys()];
      const found = await tx<SessionRow[]>`
        WITH RECURSIVE tree AS (
          SELECT id FROM sessions WHERE parent_id = ANY(${ids})
          UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id
        )
        SELECT s.* FROM sessions s JOIN tree USING (id) WHERE NOT (s.id = ANY(${ids})) ORDER BY s.id FOR UPDATE OF s`;
      if (found.length === 0) break;
      for (const s of found) locked.set(s.id, s);
    }
    const ids = [...locked.keys()];
    const [running] = await tx`
      SELECT id, session_id FROM executions WHERE session_id = ANY(${ids}) AND status = 'RUNNING' ORDER BY session_id LIMIT 1`;
    if (running) throw new SessionBusyError(running.sessionId, running.id);
    for (const id of ids) await appendEvent(tx, id, 'session.removed', { rootSessionID: sessionID });
    await tx`
      INSERT INTO tombstones (id, kind, session_id, directory)
      SELECT id, 'session', id, directory FROM sessions WHERE id = ANY(${ids})
      UNION ALL
      SELECT e.id, 'execution', e.session_id, s.directory FROM executions e JOIN sessions s ON s.id = e.session_id
      WHERE e.session_id = ANY(${ids})
      ON CONFLICT (id) DO NOTHING`;
    await tx`DELETE FROM sessions WHERE id = ANY(${ids})`;
    return { sessionID, removedSessionIDs: ids };
  });
}

export type SessionStatus = 'IDLE' | 'BUSY' | 'SEALING' | 'SEALED';

export function sessionStatus(s: SessionRow, hasRunningExecution: boolean): SessionStatus {
  if (s.sealedAt) return 'SEALED';
  if (s.sealRequestedAt) return 'SEALING';
  return hasRunningExecution ? 'BUSY' : 'IDLE';
}

export async function tombstone(db: Db, actor: Actor, id: string): Promise<{ id: string; kind: string; sessionId: string; removedAt: Date } | null> {
  const [t] = await db`SELECT * FROM tombstones WHERE id = ${id} AND ${scopeCondition(db, actor, 'directory')}`;
  return (t as any) ?? null;
}
