import type { Sql, Tx } from '../db/connection.js';
import type { Actor } from './access.js';
import { issueCommand, requestJobCancel } from './commands.js';
import { InvalidRequestError, SealTimeoutError, SealUnsupportedError, SessionNotFoundError } from './errors.js';
import { commitEvent } from './events/commit.js';
import type { Notice, Topic } from './notices.js';
import type { SessionRow } from './rows.js';
import { lockSession } from './session-lock.js';
import { requestAdmissionClose } from './admission.js';
import { refuseWaitingPrompts } from './review-comments.js';
import { requireId } from './validate.js';
import { Wake, type WakeBus } from './wake.js';

/**
 * Seal (CONTRACT 4). The first call's transaction sets `seal_requested_at` under the session row lock:
 * every admission (beginExecution, PROMPT/SYNTHETIC messages, startJob, backgroundJob) checks it under
 * that same lock, so from that commit on nothing new is admitted, including requests already in
 * flight. The same kind of transaction then asks the owning hosts (durable commands) to cancel every
 * unfinished job of the session and interrupt its running execution, and is repeated each time the
 * session's journal moves (job finished, execution settled, job lost or restored), woken by the
 * notification bus, never by a timer. When nothing of the session is left running, the transaction
 * that sees it sets `sealed_at`: SEALED. Child sessions are not touched.
 */

export const DEFAULT_SEAL_TIMEOUT_MS = 30_000;
export const DEFAULT_SEAL_MAX_TIMEOUT_MS = 120_000;

export interface SealedSession {
  session: SessionRow;
  sealedAt: Date;
  cancelledJobIDs: string[];
  interruptedExecutionID: string | null;
}

/** What the seal needs of the instance's notification bus (subscriptions/bus.ts PgBus). */
export type SealBus = WakeBus;

export interface SealOptions {
  bus: SealBus;
  maxTimeoutMs?: number;
  /** Aborted when the instance stops: the wait ends as a timeout (the seal itself stays persisted). */
  signal?: AbortSignal;
}

type Step =
  | { kind: 'sealed'; sealed: SealedSession }
  | { kind: 'pending'; jobIDs: string[]; executionID: string | null }
  | { kind: 'unsupported'; reason: 'HOST_CANNOT_CANCEL' | 'JOB_LOST' | 'ADMISSION_NOT_EXCLUSIVE'; jobIDs: string[]; executionID: string | null; host?: string | null };

export function checkSealInput(input: { sessionID: unknown; timeoutMs?: number | null }, maxTimeoutMs = DEFAULT_SEAL_MAX_TIMEOUT_MS) {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  const t = input.timeoutMs ?? Math.min(DEFAULT_SEAL_TIMEOUT_MS, maxTimeoutMs);
  if (!Number.isInteger(t) || t < 0) throw new InvalidRequestError('timeoutMs', 'timeoutMs must be an integer of 0 or more.');
  return { sessionID, timeoutMs: Math.min(t, maxTimeoutMs) };
}

/**
 * One authoritative step, in one transaction under the session lock: close admissions (first time),
 * issue the commands still missing, and either finish the seal or say what is left.
 */
async function sealStep(sql: Sql, actor: Actor, sessionID: string): Promise<{ step: Step; seq: number }> {
  return sql.begin(async (tx) => {
    const step = await decide(tx, actor, sessionID);
    // Every journal event up to here was committed before this step or by it: the step has seen
    // them, so their notifications need not wake the wait again.
    const [r] = await tx<{ lastSeq: string }[]>`SELECT last_seq FROM sessions WHERE id = ${sessionID}`;
    return { step, seq: Number(r?.lastSeq ?? 0) };
  });
}

async function decide(tx: Tx, actor: Actor, sessionID: string): Promise<Step> {
  {
    const lock = await lockSession(tx, actor, sessionID);
    let s = lock.session;
    if (s.sealedAt) return s.sealUnproven ? await unprovenResult(tx, s) : { kind: 'sealed', sealed: await sealedResult(tx, s) };
    if (!s.sealRequestedAt) {
      s = (await commitEvent(lock, 'session.sealing', {})).result;
      await refuseWaitingPrompts(tx, sessionID);
    }
    const jobs = await tx<{ id: string; hostId: string; status: string; canCancel: boolean }[]>`
      SELECT j.id, j.host_id, j.status, h.can_cancel FROM jobs j JOIN hosts h ON h.id = j.host_id
      WHERE j.session_id = ${sessionID} AND j.status IN ('RUNNING', 'CANCELLING', 'LOST') ORDER BY j.id`;
    const [exec] = await tx<{ id: string; hostId: string; canCancel: boolean; asked: boolean }[]>`
      SELECT e.id, e.host_id, h.can_cancel,
        EXISTS (SELECT 1 FROM host_commands c WHERE c.session_id = ${sessionID} AND c.execution_id = e.id AND c.kind = 'INTERRUPT_EXECUTION') AS asked
      FROM executions e JOIN hosts h ON h.id = e.host_id
      WHERE e.session_id = ${sessionID} AND e.status = 'RUNNING'`;
    for (const j of jobs) {
      if (j.status === 'RUNNING' && j.canCancel) await requestJobCancel(lock, j);
    }
    if (exec && exec.canCancel && !exec.asked) {
      const cmd = await issueCommand(tx, { hostId: exec.hostId, sessionId: sessionID, kind: 'INTERRUPT_EXECUTION', executionId: exec.id });
      await commitEvent(lock, 'execution.interrupting', { executionID: exec.id, hostID: exec.hostId, commandID: cmd.id, reason: 'SEAL' });
    }
    // Hosts that front their runtime (admitWork) quiesce the session before the seal can be proven.
    const quiescing = await requestAdmissionClose(tx, sessionID);
    const lost = jobs.filter((j) => j.status === 'LOST').map((j) => j.id);
    if (lost.length) return { kind: 'unsupported', reason: 'JOB_LOST', jobIDs: lost, executionID: null };
    const cannot = jobs.filter((j) => !j.canCancel && j.status === 'RUNNING').map((j) => j.id);
    if (cannot.length || (exec && !exec.canCancel)) {
      return { kind: 'unsupported', reason: 'HOST_CANNOT_CANCEL', jobIDs: cannot, executionID: exec && !exec.canCancel ? exec.id : null };
    }
    if (jobs.length === 0 && !exec && quiescing.length === 0) {
      // Everything known has ended. Only a host that starts work solely through the gateway lets
      // that prove nothing more can run. Otherwise the session is still SEALED (admissions closed,
      // nothing known runs), but every seal call answers why it is not proven.
      const unproven = (await openHost(tx, sessionID, s.hostId)) !== null ? 'ADMISSION_NOT_EXCLUSIVE' : null;
      const { result: u } = await commitEvent(lock, 'session.sealed', { unproven });
      return unproven ? await unprovenResult(tx, u) : { kind: 'sealed', sealed: await sealedResult(tx, u) };
    }
    return { kind: 'pending', jobIDs: jobs.map((j) => j.id), executionID: exec?.id ?? null };
  }
}

/** What the seal cancelled and interrupted (read back from its commands: the same answer every time). */
async function sealedResult(tx: Tx, s: SessionRow): Promise<SealedSession> {
  const cmds = await tx<{ kind: string; jobId: string | null; executionId: string | null }[]>`
    SELECT DISTINCT kind, job_id, execution_id FROM host_commands
    WHERE session_id = ${s.id} AND reason = 'SEAL' AND kind IN ('CANCEL_JOB', 'INTERRUPT_EXECUTION')`;
  const jobIDs = [...new Set(cmds.filter((c) => c.kind === 'CANCEL_JOB').map((c) => c.jobId!))].sort();
  const exec = cmds.find((c) => c.kind === 'INTERRUPT_EXECUTION')?.executionId ?? null;
  return { session: { ...s, lastSeq: Number(s.lastSeq) }, sealedAt: s.sealedAt!, cancelledJobIDs: jobIDs, interruptedExecutionID: exec };
}

/**
 * The registered name of a host of the session that can start work behind the gateway (not exclusiveAdmission):
 * its own host, or one that ran an execution or a job of it. Null when every one of them fronts its runtime.
 */
async function openHost(tx: Tx, sessionID: string, hostId: string | null): Promise<string | null> {
  const [open] = await tx<{ name: string }[]>`
    SELECT h.name FROM hosts h WHERE NOT h.exclusive_admission AND (h.id = ${hostId}
      OR EXISTS (SELECT 1 FROM jobs j WHERE j.session_id = ${sessionID} AND j.host_id = h.id)
      OR EXISTS (SELECT 1 FROM executions e WHERE e.session_id = ${sessionID} AND e.host_id = h.id)) ORDER BY h.id LIMIT 1`;
  return open?.name ?? null;
}

/**
 * A seal that terminated everything known but could not be proven: the same answer every time, naming what it
 * cancelled and the host (its agent) that can start work behind the gateway.
 */
async function unprovenResult(tx: Tx, s: SessionRow): Promise<Step> {
  const r = await sealedResult(tx, s);
  return { kind: 'unsupported', reason: s.sealUnproven as 'ADMISSION_NOT_EXCLUSIVE', jobIDs: r.cancelledJobIDs, executionID: r.interruptedExecutionID,
    host: await openHost(tx, s.id, s.hostId) };
}

/**
 * Cheap read without the lock, for wake-ups: does the locked step have anything to decide? It is
 * only a filter; every decision is taken by sealStep under the lock.
 */
async function needsStep(sql: Sql, sessionID: string): Promise<boolean> {
  const [r] = await sql`
    SELECT s.sealed_at IS NOT NULL AS sealed,
      EXISTS (SELECT 1 FROM jobs j WHERE j.session_id = ${sessionID} AND j.status IN ('RUNNING', 'LOST')) AS act,
      EXISTS (SELECT 1 FROM jobs j WHERE j.session_id = ${sessionID} AND j.status = 'CANCELLING') AS cancelling,
      EXISTS (SELECT 1 FROM executions e WHERE e.session_id = ${sessionID} AND e.status = 'RUNNING'
        AND NOT EXISTS (SELECT 1 FROM host_commands c WHERE c.session_id = ${sessionID} AND c.execution_id = e.id AND c.kind = 'INTERRUPT_EXECUTION')) AS exec_unasked,
      EXISTS (SELECT 1 FROM executions e WHERE e.session_id = ${sessionID} AND e.status = 'RUNNING') AS exec_running
    FROM sessions s WHERE s.id = ${sessionID}`;
  if (!r) return true; // removed: let the step say so
  return r.sealed || r.act || r.execUnasked || (!r.cancelling && !r.execRunning);
}

/**
 * Seals a session and waits, at most `timeoutMs` (capped), until nothing of it can still run.
 * Idempotent; any instance may be asked, any number of times, concurrently: all calls agree.
 */
export async function sealSession(sql: Sql, actor: Actor, input: { sessionID: string; timeoutMs?: number | null }, opts: SealOptions): Promise<SealedSession> {
  const { sessionID, timeoutMs } = checkSealInput(input, opts.maxTimeoutMs);
  const deadline = Date.now() + timeoutMs;
  let seen = 0;
  // Listen before the first step: nothing that commits after it can be missed. A notice of an event
  // the last step has already seen (its own, or one committed before it) does not wake the wait.
  const wake = new Wake({
    bus: opts.bus, topic: `journal:${sessionID}`, signal: opts.signal,
    accept: (n: Notice) => n.k !== 'j' || n.q > seen,
  });
  try {
    const stepNow = async () => {
      const r = await sealStep(sql, actor, sessionID);
      seen = Math.max(seen, r.seq);
      return r.step;
    };
    let step = await stepNow();
    for (;;) {
      if (step.kind === 'sealed') return step.sealed;
      if (step.kind === 'unsupported') throw new SealUnsupportedError(sessionID, step.reason, step.jobIDs, step.executionID, step.host ?? null);
      const left = deadline - Date.now();
      if (left <= 0 || opts.signal?.aborted) throw new SealTimeoutError(sessionID, step.jobIDs, step.executionID, timeoutMs);
      await wake.wait(left);
      const timedOut = Date.now() >= deadline;
      if (!wake.take() && !timedOut && !opts.signal?.aborted) continue;
      // At the deadline the answer comes from one last authoritative step, never from a stale one.
      if (timedOut || (await needsStep(sql, sessionID))) step = await stepNow();
    }
  } finally {
    wake.close();
  }
}

export { SessionNotFoundError };
