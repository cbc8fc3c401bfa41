import type { Db, Sql } from '../db/connection.js';
import { rowKey } from './shard.js';
import { scopeCondition, type Actor } from './access.js';
import { ExecutionNotFoundError, InvalidRequestError, outcome } from './errors.js';
import { requireAdmissionsOpen } from './admission-rule.js';
import { requireIdle, runningExecution } from './busy-rule.js';
import { checkHost, hostFacts, hostOf, hostStanding, type HostFacts } from './hosts.js';
import { newId } from './ids.js';
import { commitEvent } from './events/commit.js';
import type { ExecutionRow, ExecutionStatus, InterruptReason, Trigger } from './rows.js';
import { lockSessionHolding, lockSessionWith } from './session-lock.js';
import { recordSettlement } from './settlements.js';
import { checkText, LIMITS, requireId } from './validate.js';
import { requireBoundarySnapshot } from './snapshots.js';
import { freezeChangeset } from './changesets.js';
import { idempotencyKey, previousResult, rememberResult } from './idempotency.js';
import { answerPrompt, promptCommand } from './review-comments.js';

export interface BeginExecutionInput {
  sessionID: string;
  hostID: string;
  trigger: Trigger;
  /** The snapshot the host captured at admission; without it the boundary reads START_NOT_CAPTURED. */
  startSnapshot?: string | null;
  /** Why the host could not capture the start snapshot (then the boundary's detail says so). */
  startCaptureError?: string | null;
  /** Retrying with the same key answers the execution the first call admitted (domain/idempotency.ts). */
  idempotencyKey?: string | null;
  /** The host's own ID of the step (OpenCode: its assistant message msg_…), model, agent, mode. */
  externalID?: string | null;
  model?: { providerID: string; modelID: string } | null;
  agent?: string | null;
  mode?: string | null;
  /**
   * The PROMPT command (sendReviewComments) this execution carries out: checked under the session lock to be an
   * open PROMPT of this session sent to this host, marked replied STARTED and its comments answered by this
   * execution, all in this transaction.
   */
  commandID?: string | null;
}

/**
 * What a host recorded about one step: each optional, validated, as columns of `executions`. One meaning on
 * every agent (docs/CONTRACT.md section 1a, the OpenTelemetry GenAI conventions): `inputTokens` counts every
 * input token of the step's model calls, the cached ones included; `cacheReadTokens` and `cacheWriteTokens`
 * are the parts of them read from and written to the provider's prompt cache, and `cacheWrite5mTokens` /
 * `cacheWrite1hTokens` the writes of each cache lifetime where the agent says (their sum at most
 * `cacheWriteTokens`); `outputTokens` include `reasoningTokens`; `cost` is what the agent itself reported.
 */
export interface StepUsage {
  inputTokens?: number | null;
  outputTokens?: number | null;
  reasoningTokens?: number | null;
  cacheReadTokens?: number | null;
  cacheWriteTokens?: number | null;
  cacheWrite5mTokens?: number | null;
  cacheWrite1hTokens?: number | null;
  cost?: number | null;
}

function count(v: unknown, field: string): number | null {
  if (v == null) return null;
  if (!Number.isSafeInteger(v) || (v as number) < 0) throw new InvalidRequestError(field, `${field} must be a non-negative integer.`);
  return v as number;
}

function label(v: unknown, field: string): string | null {
  if (v == null) return null;
  if (typeof v !== 'string') throw new InvalidRequestError(field, `${field} must be a string.`);
  return checkText(v, field, 200, { nonEmpty: true });
}

/** The optional step facts of beginExecution / settleExecution, as column values (null: not given). */
function stepFacts(input: { model?: { providerID: string; modelID: string } | null; agent?: string | null; mode?: string | null }) {
  const m = input.model;
  if (m != null && (typeof m !== 'object' || m.providerID == null || m.modelID == null)) {
    throw new InvalidRequestError('model', 'model needs providerID and modelID.');
  }
  return {
    providerId: m ? label(m.providerID, 'model.providerID') : null,
    modelId: m ? label(m.modelID, 'model.modelID') : null,
    agent: label(input.agent, 'agent'),
    mode: label(input.mode, 'mode'),
  };
}

function usageFacts(u: StepUsage | null | undefined, at = 'usage') {
  if (u == null) return { inputTokens: null, outputTokens: null, reasoningTokens: null, cacheReadTokens: null, cacheWriteTokens: null, cacheWrite5mTokens: null, cacheWrite1hTokens: null, cost: null };
  if (typeof u !== 'object') throw new InvalidRequestError(at, `${at} must be an object.`);
  const cost = u.cost == null ? null : u.cost;
  if (cost !== null && (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0)) {
    throw new InvalidRequestError(`${at}.cost`, `${at}.cost must be a non-negative number.`);
  }
  const f = {
    inputTokens: count(u.inputTokens, `${at}.inputTokens`),
    outputTokens: count(u.outputTokens, `${at}.outputTokens`),
    reasoningTokens: count(u.reasoningTokens, `${at}.reasoningTokens`),
    cacheReadTokens: count(u.cacheReadTokens, `${at}.cacheReadTokens`),
    cacheWriteTokens: count(u.cacheWriteTokens, `${at}.cacheWriteTokens`),
    cacheWrite5mTokens: count(u.cacheWrite5mTokens, `${at}.cacheWrite5mTokens`),
    cacheWrite1hTokens: count(u.cacheWrite1hTokens, `${at}.cacheWrite1hTokens`),
    cost,
  };
  // The one meaning, checked where the counts say enough: the cached tokens are part of the input (a host
  // reporting Anthropic's input_tokens as they come, without them, is told so), the writes by lifetime part of the writes.
  const cached = (f.cacheReadTokens ?? 0) + (f.cacheWriteTokens ?? 0);
  if (f.inputTokens !== null && f.inputTokens < cached) {
    throw new InvalidRequestError(`${at}.inputTokens`, `${at}.inputTokens counts every input token, cached ones included: ${f.inputTokens} is less than the cache reads and writes (${cached}).`);
  }
  const byLifetime = (f.cacheWrite5mTokens ?? 0) + (f.cacheWrite1hTokens ?? 0);
  if ((f.cacheWrite5mTokens !== null || f.cacheWrite1hTokens !== null) && (f.cacheWriteTokens === null || f.cacheWriteTokens < byLifetime)) {
    throw new InvalidRequestError(`${at}.cacheWriteTokens`, `${at}.cacheWriteTokens counts every cache write: with cacheWrite5mTokens or cacheWrite1hTokens it is given and at least their sum.`);
  }
  return f;
}

/**
 * Admits a new execution: at most one runs per session. The session row lock orders this against
 * every other admission, seal and correction; the partial unique index on executions is the backstop.
 */
export async function beginExecution(sql: Sql, actor: Actor, input: BeginExecutionInput): Promise<ExecutionRow> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  const hostID = requireId('host', input.hostID, 'hostID');
  const commandID = input.commandID == null ? null : requireId('command', input.commandID, 'commandID');
  const key = idempotencyKey('beginExecution', sessionID, input.idempotencyKey, { hostID, trigger: input.trigger, commandID: commandID ?? undefined });
  const startCaptureError = captureError(input.startSnapshot, input.startCaptureError, 'startCaptureError');
  const facts = stepFacts(input);
  const externalId = label(input.externalID, 'externalID');
  return sql.begin(async (tx) => {
    // Every read of the checks sent with the lock (one wait for the server instead of five), then checked
    // in this order: a retried request, the seal, busy, the host, the start snapshot.
    const [lock, [previous, running, host, snapshot, prompt]] = await lockSessionWith(tx, actor, sessionID, () => Promise.all([
      outcome(previousResult(tx, key)),
      runningExecution(tx, sessionID),
      hostStanding(tx, hostID),
      input.startSnapshot == null ? null : outcome(requireBoundarySnapshot(tx, input.startSnapshot, sessionID, 'startSnapshot')),
      commandID === null ? null : outcome(promptCommand(tx, sessionID, hostID, commandID)),
    ]));
    const s = lock.session;
    if ('error' in previous) throw previous.error;
    if (previous.value) {
      checkHost(actor, hostID, host, { live: false });
      const [e] = await tx<ExecutionRow[]>`SELECT * FROM executions WHERE ${rowKey(tx, previous.value)}`;
      return e;
    }
    requireAdmissionsOpen(s);
    requireIdle(sessionID, running);
    checkHost(actor, hostID, host, { live: true });
    if (snapshot && 'error' in snapshot) throw snapshot.error;
    if (prompt && 'error' in prompt) throw prompt.error;
    const executionID = newId('execution', sessionID);
    // The key is remembered with the ID the event will carry: both writes sent together.
    const [{ result: e }] = await Promise.all([
      commitEvent(lock, 'execution.started', {
        executionID, sequence: s.executionCount + 1, hostID, trigger: input.trigger, startSnapshotID: snapshot?.value ?? null, startCaptureError,
        externalID: externalId, providerID: facts.providerId, modelID: facts.modelId, agent: facts.agent, mode: facts.mode,
      }),
      rememberResult(tx, key, executionID, sessionID),
    ]);
    // A PROMPT command's execution answers it (a command closed meanwhile, its caller gone, rolls all this back).
    if (prompt) await answerPrompt(lock, prompt.value, executionID);
    return e;
  });
}

export interface SettleExecutionInput {
  executionID: string;
  status: ExecutionStatus;
  interruptReason?: InterruptReason | null;
  error?: string | null;
  /** The snapshot the host captured at settlement: the changeset is frozen from it. */
  endSnapshot?: string | null;
  /** Why the host could not capture the end snapshot (then the boundary's detail says so). */
  endCaptureError?: string | null;
  /** Optional: the step's usage, model, agent, mode, finish reason and error name. */
  usage?: StepUsage | null;
  model?: { providerID: string; modelID: string } | null;
  agent?: string | null;
  mode?: string | null;
  finishReason?: string | null;
  errorName?: string | null;
  /** The step's model calls, in order (at most MAX_MODEL_CALLS): what its usage sums. */
  modelCalls?: ModelCallInput[] | null;
}

/** One request the agent made to a model within the execution (domain/events/payloads.ts ModelCall). */
export interface ModelCallInput {
  externalID?: string | null;
  model?: { providerID: string; modelID: string } | null;
  startedAt?: Date | string | null;
  endedAt?: Date | string | null;
  /** AGENT: the times are the agent's own record; HOST: its host observed them. */
  timesFrom: 'AGENT' | 'HOST';
  finishReason?: string | null;
  usage?: StepUsage | null;
}

export const MAX_MODEL_CALLS = 1_000;

function instant(v: Date | string | null | undefined, field: string): string | null {
  if (v == null) return null;
  const d = v instanceof Date ? v : typeof v === 'string' ? new Date(v) : null;
  if (!d || Number.isNaN(d.getTime())) throw new InvalidRequestError(field, `${field} must be an instant.`);
  return d.toISOString();
}

/** The settlement's model calls, validated, as the event carries them. */
function modelCallFacts(calls: ModelCallInput[] | null | undefined) {
  if (calls == null) return undefined;
  if (!Array.isArray(calls)) throw new InvalidRequestError('modelCalls', 'modelCalls must be a list.');
  if (calls.length > MAX_MODEL_CALLS) throw new InvalidRequestError('modelCalls', `An execution has at most ${MAX_MODEL_CALLS} model calls.`);
  return calls.map((c, i) => {
    const at = `modelCalls[${i}]`;
    if (c.timesFrom !== 'AGENT' && c.timesFrom !== 'HOST') throw new InvalidRequestError(`${at}.timesFrom`, `${at}.timesFrom must be AGENT or HOST.`);
    const m = c.model;
    if (m != null && (typeof m !== 'object' || m.providerID == null || m.modelID == null)) throw new InvalidRequestError(`${at}.model`, `${at}.model needs providerID and modelID.`);
    const startedAt = instant(c.startedAt, `${at}.startedAt`);
    const endedAt = instant(c.endedAt, `${at}.endedAt`);
    if (startedAt && endedAt && endedAt < startedAt) throw new InvalidRequestError(`${at}.endedAt`, `${at}.endedAt is before its startedAt.`);
    const u = usageFacts(c.usage, `${at}.usage`);
    return {
      externalID: label(c.externalID, `${at}.externalID`),
      providerID: m ? label(m.providerID, `${at}.model.providerID`) : null,
      modelID: m ? label(m.modelID, `${at}.model.modelID`) : null,
      startedAt, endedAt, timesFrom: c.timesFrom, finishReason: label(c.finishReason, `${at}.finishReason`), usage: u,
    };
  });
}

/** A capture error: a non-empty text, never together with the snapshot it explains. */
function captureError(snapshot: string | null | undefined, why: string | null | undefined, field: string): string | null {
  if (why == null) return null;
  if (snapshot != null) throw new InvalidRequestError(field, `${field} explains a missing snapshot: leave it out when the snapshot is given.`);
  if (typeof why !== 'string' || why.trim() === '') throw new InvalidRequestError(field, `${field} must say why the snapshot could not be captured (a non-empty string), or be left out.`);
  return checkText(why, field, 2_000);
}

const SETTLE_STATUSES: ExecutionStatus[] = ['SUCCEEDED', 'FAILED', 'INTERRUPTED'];

/**
 * Settles a running execution. The settlement is published (journal, settlement log, notification)
 * only by this transaction's commit.
 */
export async function settleExecution(sql: Sql, actor: Actor, input: SettleExecutionInput): Promise<ExecutionRow> {
  const executionID = requireId('execution', input.executionID, 'executionID');
  if (!SETTLE_STATUSES.includes(input.status)) {
    throw new InvalidRequestError('status', `status must be one of ${SETTLE_STATUSES.join(', ')}.`);
  }
  if (input.status === 'INTERRUPTED' && !input.interruptReason) {
    throw new InvalidRequestError('interruptReason', 'interruptReason is required when status is INTERRUPTED.');
  }
  if (input.status !== 'INTERRUPTED' && input.interruptReason) {
    throw new InvalidRequestError('interruptReason', 'interruptReason is only allowed when status is INTERRUPTED.');
  }
  const error = input.error == null ? null : checkText(input.error, 'error', LIMITS.error);
  const endCaptureError = captureError(input.endSnapshot, input.endCaptureError, 'endCaptureError');
  const facts = stepFacts(input);
  const usage = usageFacts(input.usage);
  const modelCalls = modelCallFacts(input.modelCalls);
  const finishReason = label(input.finishReason, 'finishReason');
  const errorName = label(input.errorName, 'errorName');
  return sql.begin(async (tx) => {
    // The execution with what requireHost checks of its host, in one statement, sent with the lock.
    const locked = await lockSessionHolding(tx, actor, 'executions', executionID, () => tx<(ExecutionRow & HostFacts)[]>`
      SELECT e.*, ${hostFacts(tx, 'h')} FROM executions e LEFT JOIN hosts h ON h.id = e.host_id
      WHERE ${rowKey(tx, executionID, { alias: 'e' })}`);
    if (!locked) throw new ExecutionNotFoundError(executionID);
    const [lock, [read]] = locked;
    const s = lock.session;
    if (!read) throw new ExecutionNotFoundError(executionID);
    const { host, row: e } = hostOf(read);
    try { checkHost(actor, e.hostId, host, { live: false }); } catch { throw new ExecutionNotFoundError(executionID); }
    if (e.status !== 'RUNNING') {
      // The same settle again answers the execution as it settled, and settles nothing twice: a settle whose
      // answer was lost (on Citus a commit whose worker did not answer is DATABASE_UNAVAILABLE, its outcome
      // unknown) is retried safely. Another outcome is refused.
      if (e.status === input.status && (e.interruptReason ?? null) === (input.interruptReason ?? null) && (e.error ?? null) === error) return e as ExecutionRow;
      throw new InvalidRequestError('executionID', `Execution ${executionID} is not running (it is ${e.status}).`);
    }
    const endSnapshot = input.endSnapshot == null ? null : await requireBoundarySnapshot(tx, input.endSnapshot, s.id, 'endSnapshot');
    const { result: settled } = await commitEvent(lock, 'execution.settled', {
      executionID, status: input.status as 'SUCCEEDED' | 'FAILED' | 'INTERRUPTED', interruptReason: input.interruptReason ?? null, error,
      endSnapshotID: endSnapshot, endCaptureError, providerID: facts.providerId, modelID: facts.modelId, agent: facts.agent, mode: facts.mode,
      finishReason, errorName, usage, ...(modelCalls ? { modelCalls } : {}),
    });
    // The frozen changeset and the staged settlement row are independent writes: sent together.
    await Promise.all([
      freezeChangeset(tx, { id: executionID, sessionId: s.id, startSnapshotId: (e as any).startSnapshotId ?? null, endSnapshotId: endSnapshot,
        startCaptureError: (e as any).startCaptureError ?? null, endCaptureError }),
      recordSettlement(tx, {
        sessionId: s.id, executionId: executionID, status: settled.status, directory: s.directory, settledAt: settled.settledAt!,
      }),
    ]);
    return settled;
  });
}

/**
 * The cost the agent reported for a settled execution, when it reports it only after the execution settled
 * (Claude Code writes its cost when its process exits: bridge/claude-code/cost.ts). By the execution's host,
 * once: the same cost again answers the execution (a retried report), another is an InvalidRequestError, and so
 * is a report for an execution still running (settleExecution carries its usage then). A sealed session takes
 * it too: it records what settled work cost, it admits nothing.
 */
export async function reportExecutionCost(sql: Sql, actor: Actor, input: { executionID: string; cost: number }): Promise<ExecutionRow> {
  const executionID = requireId('execution', input.executionID, 'executionID');
  const cost = input.cost;
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) throw new InvalidRequestError('cost', 'cost must be a non-negative number (US dollars).');
  return sql.begin(async (tx) => {
    const locked = await lockSessionHolding(tx, actor, 'executions', executionID, () => tx<(ExecutionRow & HostFacts)[]>`
      SELECT e.*, ${hostFacts(tx, 'h')} FROM executions e LEFT JOIN hosts h ON h.id = e.host_id
      WHERE ${rowKey(tx, executionID, { alias: 'e' })}`);
    if (!locked) throw new ExecutionNotFoundError(executionID);
    const [lock, [read]] = locked;
    if (!read) throw new ExecutionNotFoundError(executionID);
    const { host, row: e } = hostOf(read);
    try { checkHost(actor, e.hostId, host, { live: false }); } catch { throw new ExecutionNotFoundError(executionID); }
    if (e.status === 'RUNNING') throw new InvalidRequestError('executionID', `Execution ${executionID} is still running: its settlement carries its usage and cost.`);
    if (e.cost !== null) {
      if (Number(e.cost) === cost) return e as ExecutionRow;
      throw new InvalidRequestError('cost', `Execution ${executionID} has its cost already (${e.cost}).`);
    }
    const { result } = await commitEvent(lock, 'execution.cost_reported', { executionID, hostID: e.hostId, cost });
    return result;
  });
}

export async function getExecution(db: Db, actor: Actor, executionID: string): Promise<ExecutionRow | null> {
  const [e] = await db<ExecutionRow[]>`
    SELECT e.* FROM executions e JOIN sessions s ON s.id = e.session_id
    WHERE ${rowKey(db, executionID, { alias: 'e' })} AND ${scopeCondition(db, actor, 's.directory')}`;
  return e ?? null;
}
