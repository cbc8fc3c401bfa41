import type { Db, Sql, Tx } from '../db/connection.js';
import { rowKey } from './shard.js';
import { scopeCondition, type Actor } from './access.js';
import { InvalidRequestError, JobNotFoundError, outcome } from './errors.js';
import { admissionsClosed, requireAdmissionsOpen } from './admission-rule.js';
import { checkHost, hostFacts, hostOf, hostStanding, requireHost, type HostFacts } from './hosts.js';
import { newId } from './ids.js';
import { commitEvent } from './events/commit.js';
import { cancelRestoredJob } from './commands.js';
import type { JobKind, JobRow, JobStatus } from './rows.js';
import { lockSessionHolding, lockSessionWith } from './session-lock.js';
import { idempotencyKey, previousResult, rememberResult } from './idempotency.js';
import { checkText, LIMITS, optionalId, requireId } from './validate.js';

export interface StartJobInput {
  sessionID: string;
  executionID?: string | null;
  hostID: string;
  kind: JobKind;
  title?: string | null;
  command?: string | null;
  background?: boolean | null;
  /** Retrying with the same key answers the job the first call started (domain/idempotency.ts). */
  idempotencyKey?: string | null;
}

/** Admits a job: refused once the session is sealed, in the same lock order as every admission. */
export async function startJob(sql: Sql, actor: Actor, input: StartJobInput): Promise<JobRow> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  const executionID = optionalId('execution', input.executionID, 'executionID');
  const hostID = requireId('host', input.hostID, 'hostID');
  const title = checkText(input.title ?? '', 'title', LIMITS.title);
  const command = input.command == null ? null : checkText(input.command, 'command', LIMITS.command);
  const key = idempotencyKey('startJob', sessionID, input.idempotencyKey,
    { executionID, hostID, kind: input.kind, title, command, background: input.background ?? false });
  return sql.begin(async (tx) => {
    // Every read of the checks sent with the lock, then checked in order: a retried request, the seal, the host, the execution.
    const [lock, [previous, host, execution]] = await lockSessionWith(tx, actor, sessionID, () => Promise.all([
      outcome(previousResult(tx, key)),
      hostStanding(tx, hostID),
      executionID ? tx<{ sessionId: string }[]>`SELECT session_id FROM executions WHERE ${rowKey(tx, executionID)}`.then((r) => r[0] ?? null) : null,
    ]));
    const s = lock.session;
    if ('error' in previous) throw previous.error;
    if (previous.value) {
      checkHost(actor, hostID, host, { live: false });
      const [j] = await tx<JobRow[]>`SELECT * FROM jobs WHERE ${rowKey(tx, previous.value)}`;
      return j;
    }
    requireAdmissionsOpen(s);
    checkHost(actor, hostID, host, { live: true });
    if (executionID && (!execution || execution.sessionId !== sessionID)) {
      throw new InvalidRequestError('executionID', `Execution ${executionID} is not an execution of session ${sessionID}.`);
    }
    const jobID = newId('job', sessionID);
    const [{ result: j }] = await Promise.all([
      commitEvent(lock, 'job.started', { jobID, executionID, hostID, kind: input.kind, title, command, background: input.background ?? false }),
      rememberResult(tx, key, jobID, sessionID),
    ]);
    return j;
  });
}

/** Locks the job's session, then returns the job (checked to belong to the caller's host token). */
async function lockJob(tx: Tx, actor: Actor, jobID: string) {
  // The job with what requireHost checks of its host, in one statement, sent with the lock.
  const locked = await lockSessionHolding(tx, actor, 'jobs', jobID, () => tx<(JobRow & HostFacts)[]>`
    SELECT j.*, ${hostFacts(tx, 'h')} FROM jobs j LEFT JOIN hosts h ON h.id = j.host_id WHERE ${rowKey(tx, jobID, { alias: 'j' })}`);
  if (!locked) throw new JobNotFoundError(jobID);
  const [lock, [read]] = locked;
  if (!read) throw new JobNotFoundError(jobID);
  const { host, row } = hostOf(read);
  const j = row as JobRow;
  try { checkHost(actor, j.hostId, host, { live: false }); } catch { throw new JobNotFoundError(jobID); }
  return { lock, s: lock.session, j };
}

/**
 * Moves a foreground job to the background. The job stays owned by its session. A handoff is an
 * admission: once the session is sealed it is refused, so it lands before the seal or not at all.
 */
export async function backgroundJob(sql: Sql, actor: Actor, input: { jobID: string }): Promise<JobRow> {
  const jobID = requireId('job', input.jobID, 'jobID');
  return sql.begin(async (tx) => {
    const { lock, s, j } = await lockJob(tx, actor, jobID);
    requireAdmissionsOpen(s);
    if (j.status !== 'RUNNING') throw new InvalidRequestError('jobID', `Job ${jobID} is not running (it is ${j.status}).`);
    if (j.background) return j;
    return (await commitEvent(lock, 'job.backgrounded', { jobID })).result;
  });
}

const FINISH_STATUSES: JobStatus[] = ['COMPLETED', 'ERROR', 'CANCELLED', 'LOST'];

/**
 * The host reports a job's end. Reporting twice is an error; a LOST job may still report its end.
 * LOST is the host's own "I can no longer see it" (e.g. OpenCode restarted while its shell ran,
 * and the shell may well still be running): never a claimed end. The job keeps no completedAt then, and
 * the host may report its real end later or restore it.
 */
export async function finishJob(sql: Sql, actor: Actor, input: { jobID: string; status: JobStatus; exitCode?: number | null }): Promise<JobRow> {
  const jobID = requireId('job', input.jobID, 'jobID');
  if (!FINISH_STATUSES.includes(input.status)) throw new InvalidRequestError('status', `status must be one of ${FINISH_STATUSES.join(', ')}.`);
  return sql.begin(async (tx) => {
    const { lock, j } = await lockJob(tx, actor, jobID);
    if (!['RUNNING', 'CANCELLING', 'LOST'].includes(j.status)) {
      throw new InvalidRequestError('jobID', `Job ${jobID} has already finished (${j.status}).`);
    }
    if (input.status === 'LOST') {
      if (j.status === 'LOST') return j; // already lost (the lease sweep, or an earlier report): nothing changes
      if (input.exitCode != null) throw new InvalidRequestError('exitCode', 'A LOST job has no exit code.');
      return (await commitEvent(lock, 'job.lost', { jobID, hostID: j.hostId, reportedBy: 'host' })).result;
    }
    const status = input.status as 'COMPLETED' | 'ERROR' | 'CANCELLED';
    return (await commitEvent(lock, 'job.finished', { jobID, status, exitCode: input.exitCode ?? null })).result;
  });
}

/** A host back from a restart takes a LOST job it still owns back; the job reads `restored: true`. */
export async function restoreJob(sql: Sql, actor: Actor, input: { jobID: string; hostID: string }): Promise<JobRow> {
  const jobID = requireId('job', input.jobID, 'jobID');
  const hostID = requireId('host', input.hostID, 'hostID');
  return sql.begin(async (tx) => {
    const { lock, s, j } = await lockJob(tx, actor, jobID);
    await requireHost(tx, actor, hostID, { live: true });
    if (j.hostId !== hostID) throw new InvalidRequestError('hostID', `Job ${jobID} belongs to another host.`);
    // Seal: a job taken back while its session is sealing is cancelled again.
    const resealed = async (r: JobRow) => {
      if (!admissionsClosed(s)) return r;
      await cancelRestoredJob(lock, r);
      return (await tx<JobRow[]>`SELECT * FROM jobs WHERE ${rowKey(tx, jobID)}`)[0];
    };
    if (j.status === 'RUNNING' || j.status === 'CANCELLING') return resealed(j);
    if (j.status !== 'LOST') throw new InvalidRequestError('jobID', `Job ${jobID} has finished (${j.status}); only a LOST job can be restored.`);
    const { result: u } = await commitEvent(lock, 'job.restored', { jobID, hostID });
    return resealed(u);
  });
}

export async function getJob(db: Db, actor: Actor, jobID: string): Promise<JobRow | null> {
  const [j] = await db<JobRow[]>`
    SELECT j.* FROM jobs j JOIN sessions s ON s.id = j.session_id
    WHERE ${rowKey(db, jobID, { alias: 'j' })} AND ${scopeCondition(db, actor, 's.directory')}`;
  return j ?? null;
}
