import type { Db, Tx } from '../db/connection.js';
import { ownsHost, scopeCondition, type Actor } from './access.js';
import { commitEvent } from './events/commit.js';
import { noticeSql } from './notices.js';
import { HostNotFoundError, InvalidRequestError } from './errors.js';
import { newId } from './ids.js';
import { rowKey } from './shard.js';
import type { SessionLock } from './session-lock.js';

/**
 * Durable host commands (CONTRACT 1a/7): the gateway asks a host to cancel a job or interrupt an
 * execution. A command is a row, written in the transaction that decides it (under the session
 * lock) and pending until the host acknowledges it; the host's `hostCommands` subscription delivers
 * every pending command on (re)connect, then new ones live. Delivery is at-least-once: the host
 * treats a command it has already obeyed as a no-op.
 */
export type CommandKind = 'CANCEL_JOB' | 'INTERRUPT_EXECUTION' | 'COMPACT_SESSION' | 'GENERATE' // requests with a reply (domain/host-requests.ts)
  | 'CREATE_SESSION' | 'RENAME_SESSION' | 'REMOVE_SESSION' // session mutations in the host's runtime (domain/sessions.ts)
  | 'CLOSE_ADMISSIONS' // a seal quiescing a host's front (domain/admission.ts)
  | 'PROMPT'; // review comments sent to the agent (domain/review-comments.ts): a request answered by beginExecution

export interface HostCommandRow {
  id: string;
  hostId: string;
  sessionId: string;
  kind: CommandKind;
  jobId: string | null;
  executionId: string | null;
  reason: 'SEAL' | 'PLUGIN';
  createdAt: Date;
  acknowledgedAt: Date | null;
}

/** The notice a command's commit sends: `{ k: 'c', h: hostID }`, on this bus topic. */
export { COMMAND_TOPIC } from './notices.js';

export async function issueCommand(
  tx: Tx,
  c: { hostId: string; sessionId: string; kind: CommandKind; jobId?: string | null; executionId?: string | null; reason?: 'SEAL' | 'PLUGIN'; payload?: unknown },
): Promise<HostCommandRow> {
  const [{ notified: _, ...row }] = await tx<(HostCommandRow & { notified: unknown })[]>`
    WITH i AS (
      INSERT INTO host_commands (id, host_id, session_id, kind, job_id, execution_id, reason, payload)
      VALUES (${newId('command', c.sessionId)}, ${c.hostId}, ${c.sessionId}, ${c.kind}, ${c.jobId ?? null}, ${c.executionId ?? null},
        ${c.reason ?? 'SEAL'}, ${c.payload === undefined ? null : tx.json(c.payload as any)})
      RETURNING *
    )
    SELECT i.*, ${noticeSql(tx, { k: 'c', h: c.hostId })} AS notified FROM i`;
  return row;
}

/**
 * Asks the job's host to cancel it: the job reads CANCELLING and a CANCEL_JOB command is issued.
 * Call under the session lock. Only a RUNNING job is affected (a CANCELLING one already has its command).
 */
export async function requestJobCancel(lock: SessionLock, job: { id: string; hostId: string; status: string }) {
  if (job.status !== 'RUNNING') return null;
  const cmd = await issueCommand(lock.tx, { hostId: job.hostId, sessionId: lock.id, kind: 'CANCEL_JOB', jobId: job.id });
  await commitEvent(lock, 'job.cancelling', { jobID: job.id, hostID: job.hostId, commandID: cmd.id, reason: 'SEAL' });
  return cmd;
}

/** The host, checked to belong to the caller (an unscoped admin: any host). Unknown and foreign hosts look alike. */
export async function requireOwnHost(db: Db, actor: Actor, hostID: string): Promise<void> {
  const [h] = await db<{ tokenId: string | null }[]>`SELECT token_id FROM hosts WHERE id = ${hostID}`;
  if (!h || !ownsHost(actor, h)) throw new HostNotFoundError(hostID);
}

/**
 * A command as the caller may know it: its host is the caller's (domain/access.ts ownsHost) and its
 * session is within the caller's directory scope. Anything else (unknown, another host's, another
 * directory's) is null, so every caller answers all three alike.
 */
export async function findCommand<T extends HostCommandRow = HostCommandRow>(db: Db, actor: Actor, commandID: string): Promise<T | null> {
  const [c] = await db<(T & { hostTokenId: string | null; sessionDirectory: string })[]>`
    SELECT c.*, h.token_id AS host_token_id FROM (${withSessionDirectory(db)}) c
      JOIN hosts h ON h.id = c.host_id
    WHERE ${rowKey(db, commandID, { alias: 'c' })} AND c.session_directory IS NOT NULL AND ${scopeCondition(db, actor, 'c.session_directory')}`;
  if (!c || !ownsHost(actor, { tokenId: c.hostTokenId })) return null;
  const { hostTokenId: _, sessionDirectory: __, ...row } = c;
  return row as unknown as T;
}

/**
 * Commands with the directory of their session (`session_directory`): the session's, or its tombstone's
 * once it is removed (a REMOVE_SESSION command outlives its session). Joined on session_id, so on a
 * cluster each shard answers for its own sessions.
 */
function withSessionDirectory(db: Db) {
  return db`
    SELECT c.*, coalesce(s.directory, t.directory) AS session_directory FROM host_commands c
      LEFT JOIN sessions s ON s.id = c.session_id
      LEFT JOIN tombstones t ON t.session_id = c.session_id AND t.id = c.session_id AND t.kind = 'session'`;
}

/**
 * Commands of a host that still need doing: not acknowledged, and their target not over yet (a
 * cancel of a job that has already ended, or an interrupt of a settled execution, is moot). Only
 * commands of sessions within the actor's directory scope: a host scoped to /a never receives (or
 * learns of) a command for a session under /b, even when that session names it as its host.
 */
export async function pendingCommands(db: Db, actor: Actor, hostID: string, limit = 1000): Promise<HostCommandRow[]> {
  const rows = await db<(HostCommandRow & { sessionDirectory?: string })[]>`
    SELECT c.* FROM (${withSessionDirectory(db)}) c
      LEFT JOIN jobs j ON j.session_id = c.session_id AND j.id = c.job_id
      LEFT JOIN executions e ON e.session_id = c.session_id AND e.id = c.execution_id
    WHERE c.host_id = ${hostID} AND c.acknowledged_at IS NULL
      AND c.session_directory IS NOT NULL AND ${scopeCondition(db, actor, 'c.session_directory')}
      AND (j.status IN ('RUNNING', 'CANCELLING') OR e.status = 'RUNNING'
        -- Session mutations applied in the host's runtime, pending until acknowledged
        OR c.kind IN ('RENAME_SESSION', 'REMOVE_SESSION')
        -- A seal waits for the host to quiesce the session (domain/admission.ts)
        OR c.kind = 'CLOSE_ADMISSIONS'
        -- A request (compaction, generation) is pending until replied, timed out or expired
        OR (c.expires_at IS NOT NULL AND c.replied_at IS NULL AND c.timed_out_at IS NULL AND c.expires_at > now()))
    -- In the order they were issued (IDs sort by time only within one session).
    ORDER BY c.created_at, c.id LIMIT ${limit}`;
  for (const r of rows) delete r.sessionDirectory;
  return rows;
}

/**
 * Marks the command acknowledged now, unless it already is; answers the row (null when it is gone).
 * (Two statements rather than `coalesce(acknowledged_at, now())`: Citus refuses a non-immutable
 * function inside COALESCE in a distributed write.)
 */
export async function acknowledge(db: Db, commandID: string): Promise<HostCommandRow | null> {
  const [u] = await db<HostCommandRow[]>`
    UPDATE host_commands SET acknowledged_at = now() WHERE ${rowKey(db, commandID)} AND acknowledged_at IS NULL RETURNING *`;
  if (u) return u;
  const [c] = await db<HostCommandRow[]>`SELECT * FROM host_commands WHERE ${rowKey(db, commandID)}`;
  return c ?? null;
}

/** The one answer for a command the caller may not know of, whatever the reason. */
export function unknownCommand(commandID: string): InvalidRequestError {
  return new InvalidRequestError('commandID', `No command ${commandID} is known.`);
}

/**
 * A job taken back by its host after a restart while its session is sealing: the host process that
 * took it back may never have seen the earlier cancel, so it gets a fresh one. Call under the session lock.
 */
export async function cancelRestoredJob(lock: SessionLock, job: { id: string; hostId: string; status: string }) {
  if (job.status === 'RUNNING') return requestJobCancel(lock, job);
  if (job.status !== 'CANCELLING') return null;
  const cmd = await issueCommand(lock.tx, { hostId: job.hostId, sessionId: lock.id, kind: 'CANCEL_JOB', jobId: job.id });
  await commitEvent(lock, 'job.cancelling', { jobID: job.id, hostID: job.hostId, commandID: cmd.id, reason: 'SEAL' });
  return cmd;
}
