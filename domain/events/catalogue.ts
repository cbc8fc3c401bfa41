import type { SessionLock } from '../session-lock.js';
import * as P from './payloads.js';
import * as project from './projectors.js';
import type { Applied } from './projectors.js';
import type { Infer, Shape } from './shape.js';

/**
 * The event catalogue: every event type of the per-session journal, with the version written now,
 * its payload (type and runtime check, domain/events/payloads.ts), how older versions are read, what
 * it does to the session row, and its projector (domain/events/projectors.ts). Events are committed
 * only through `commitEvent` (domain/events/commit.ts) and rebuilt by replay (domain/replay.ts) through
 * the same projectors.
 */
export interface EventDef<S extends Shape<any>, R> {
  /** The version commitEvent writes. */
  readonly version: number;
  readonly payload: S;
  /** Older versions, read as the current one (the result is checked by `payload`). */
  readonly upcast?: Readonly<Record<number, Upcast>>;
  /** The event changes what a reader of the session sees: its `updatedAt` moves to the event's time. */
  readonly touches: boolean;
  /** The session's first event: no session row exists before its projector inserts it. */
  readonly opens?: boolean;
  readonly project: (lock: SessionLock, e: Applied<Infer<S>>) => Promise<R>;
}

/** The tables the journal owns: replay rebuilds exactly these (parents before children). */
export const JOURNAL_TABLES = ['sessions', 'session_children', 'executions', 'model_calls', 'jobs', 'messages', 'parts', 'compactions', 'review_comments', 'tombstones'] as const;
export type JournalTable = (typeof JOURNAL_TABLES)[number];

export interface Upcast {
  read: (raw: Record<string, unknown>, ctx: UpcastContext) => unknown;
  /**
   * Tables whose rows this old version cannot rebuild exactly (what it did not record: the live path
   * of its time wrote it from elsewhere). Replay still folds it; the rebuild leaves those rows of its
   * session alone and the verification says so instead of reporting a difference.
   */
  inexact: readonly JournalTable[];
}

/** What replay knows beside an event's payload, for the upcasts that need it (replay's fold of the session so far). */
export interface UpcastContext {
  /** The agent kind of the host that ran this execution of the session (the first word of the host's registered name), null when not known. */
  hostKindOf(executionID: string): string | null;
}

const NO_CONTEXT: UpcastContext = { hostKindOf: () => null };

/**
 * How the hosts of each agent counted tokens until execution.settled v3, where it differs from v3's one meaning
 * (input tokens with the cached ones, output tokens with the reasoning ones; domain/executions.ts StepUsage):
 * Claude Code's host reported Anthropic's `input_tokens` (without the cache reads and writes); OpenCode's bridge
 * OpenCode's step-finish `tokens` (1.18: the input without the cache reads and writes, the output without the
 * reasoning). Codex and the reference host counted as v3 does. Migration 066 brought their rows the same way.
 */
export const COUNTED_APART_BEFORE_V3: Readonly<Record<string, { reasoningInOutput: boolean }>> = {
  'claude-code': { reasoningInOutput: true },
  opencode: { reasoningInOutput: false },
};

const n = (v: unknown) => (typeof v === 'number' ? v : 0);

/** A v1 or v2 usage of a host of agent `kind` in v3's meaning (the lifetimes of the cache writes unknown). */
function usageV3(u: unknown, kind: string | null) {
  if (!u || typeof u !== 'object' || Array.isArray(u)) return u;
  const x = u as Record<string, unknown>;
  const apart = kind !== null && Object.prototype.hasOwnProperty.call(COUNTED_APART_BEFORE_V3, kind) ? COUNTED_APART_BEFORE_V3[kind] : null;
  const input = apart && typeof x.inputTokens === 'number' && (x.cacheReadTokens != null || x.cacheWriteTokens != null)
    ? x.inputTokens + n(x.cacheReadTokens) + n(x.cacheWriteTokens) : x.inputTokens;
  const output = apart && !apart.reasoningInOutput && typeof x.outputTokens === 'number' && typeof x.reasoningTokens === 'number'
    ? x.outputTokens + x.reasoningTokens : x.outputTokens;
  return { cacheWrite5mTokens: null, cacheWrite1hTokens: null, ...x, inputTokens: input, outputTokens: output };
}

const def = <S extends Shape<any>, R>(d: EventDef<S, R>) => d;

/** The step facts of executions, absent from version 1 payloads. */
const noStepFacts = { externalID: null, providerID: null, modelID: null, agent: null, mode: null };

export const CATALOGUE = {
  'session.created': def({ version: 1, payload: P.SessionCreated, touches: true, opens: true, project: project.sessionCreated }),
  'session.updated': def({ version: 1, payload: P.SessionUpdated, touches: true, project: project.sessionUpdated }),
  'session.removed': def({ version: 1, payload: P.SessionRemoved, touches: false, project: project.sessionRemoved }),
  'session.sealing': def({
    version: 2, payload: P.SessionSealing, touches: true, project: project.sessionSealing,
    // v1 carried the time in its payload at millisecond precision; the row had the clock's microseconds.
    upcast: { 1: { read: () => ({}), inexact: ['sessions'] } },
  }),
  'session.sealed': def({
    version: 2, payload: P.SessionSealed, touches: true, project: project.sessionSealed,
    upcast: { 1: { read: (v) => ({ unproven: v.unproven ?? null }), inexact: ['sessions'] } },
  }),
  /** The host quiesced the session for a seal (domain/admission.ts); wakes the seal's wait. */
  'session.admissions_closed': def({ version: 1, payload: P.SessionAdmissionsClosed, touches: false, project: project.informational }),
  'session.compacted': def({ version: 1, payload: P.SessionCompacted, touches: true, project: project.sessionCompacted }),
  'execution.started': def({
    version: 2, payload: P.ExecutionStarted, touches: true, project: project.executionStarted,
    upcast: { 1: { read: (v) => ({ startCaptureError: null, ...noStepFacts, ...v }), inexact: ['executions'] } },
  }),
  'execution.settled': def({
    version: 3, payload: P.ExecutionSettled, touches: true, project: project.executionSettled,
    upcast: {
      1: {
        read: (v) => ({
          endCaptureError: null, ...noStepFacts, finishReason: null, errorName: null,
          usage: { inputTokens: null, outputTokens: null, reasoningTokens: null, cacheReadTokens: null, cacheWriteTokens: null, cacheWrite5mTokens: null, cacheWrite1hTokens: null, cost: null },
          ...v,
        }),
        inexact: ['executions'],
      },
      // v2: tokens as the host's agent counted them (COUNTED_APART_BEFORE_V3), read in v3's meaning.
      2: {
        read: (v, ctx) => ({ ...v, usage: usageV3(v.usage, typeof v.executionID === 'string' ? ctx.hostKindOf(v.executionID) : null) }),
        inexact: [],
      },
    },
  }),
  /** The agent's cost of a settled execution, reported after its settlement (domain/executions.ts reportExecutionCost). */
  'execution.cost_reported': def({ version: 1, payload: P.ExecutionCostReported, touches: true, project: project.executionCostReported }),
  'execution.abandoned': def({ version: 1, payload: P.ExecutionAbandoned, touches: false, project: project.executionAbandoned }),
  'execution.interrupting': def({ version: 1, payload: P.ExecutionInterrupting, touches: false, project: project.informational }),
  'message.appended': def({ version: 1, payload: P.MessageAppended, touches: true, project: project.messageAppended }),
  'message.part_corrected': def({ version: 1, payload: P.MessagePartCorrected, touches: true, project: project.messagePartCorrected }),
  'message.retracted': def({ version: 1, payload: P.MessageRetracted, touches: true, project: project.messageRetracted }),
  'job.started': def({ version: 1, payload: P.JobStarted, touches: false, project: project.jobStarted }),
  'job.backgrounded': def({ version: 1, payload: P.JobBackgrounded, touches: false, project: project.jobBackgrounded }),
  'job.cancelling': def({ version: 1, payload: P.JobCancelling, touches: false, project: project.jobCancelling }),
  'job.finished': def({ version: 1, payload: P.JobFinished, touches: false, project: project.jobFinished }),
  'job.lost': def({ version: 1, payload: P.JobLost, touches: false, project: project.jobLost }),
  'job.restored': def({ version: 1, payload: P.JobRestored, touches: false, project: project.jobRestored }),
  /** Retention pruned an execution's changeset (domain/changesets.ts); changesets live outside the journal. */
  'changeset.pruned': def({ version: 1, payload: P.ChangesetPruned, touches: false, project: project.informational }),
  // Review comments (domain/review-comments.ts): they do not change the session's history (touches: false).
  'review_comment.added': def({ version: 1, payload: P.ReviewCommentAdded, touches: false, project: project.reviewCommentAdded }),
  'review_comment.resolved': def({ version: 1, payload: P.ReviewCommentResolved, touches: false, project: project.reviewCommentResolved }),
  'review_comment.reopened': def({ version: 1, payload: P.ReviewCommentReopened, touches: false, project: project.reviewCommentReopened }),
  'review_comments.sent': def({ version: 1, payload: P.ReviewCommentsSent, touches: false, project: project.reviewCommentsSent }),
  'review_comments.answered': def({ version: 1, payload: P.ReviewCommentsAnswered, touches: false, project: project.reviewCommentsAnswered }),
} as const;

export type EventType = keyof typeof CATALOGUE;
type DefOf<T extends EventType> = (typeof CATALOGUE)[T];
export type PayloadOf<T extends EventType> = DefOf<T> extends EventDef<infer S, any> ? Infer<S> : never;
export type ResultOf<T extends EventType> = DefOf<T> extends EventDef<any, infer R> ? R : never;

export const EVENT_TYPES = Object.keys(CATALOGUE) as EventType[];

export class UnknownEventError extends Error {}

export function isEventType(t: string): t is EventType {
  return Object.prototype.hasOwnProperty.call(CATALOGUE, t);
}

export interface ReadEvent<T extends EventType = EventType> {
  type: T;
  payload: PayloadOf<T>;
  /** Tables this (older) version cannot rebuild exactly; empty for the current version. */
  inexact: readonly JournalTable[];
}

/**
 * A stored event's payload read as the current version: checked, and upcast first when older. Throws
 * UnknownEventError for a type or version this gateway does not know (a newer gateway wrote it), and
 * PayloadError for a payload that does not match its declaration.
 */
export function readEvent(type: string, version: number, raw: unknown, ctx: UpcastContext = NO_CONTEXT): ReadEvent {
  if (!isEventType(type)) throw new UnknownEventError(`unknown event type ${type}`);
  const d: EventDef<Shape<unknown>, unknown> = CATALOGUE[type];
  if (version === d.version) return { type, payload: d.payload.check(raw, type) as never, inexact: [] };
  const up = d.upcast?.[version];
  if (!up || version > d.version) throw new UnknownEventError(`${type} version ${version} is not known to this gateway`);
  const o = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? up.read(raw as Record<string, unknown>, ctx) : raw;
  return { type, payload: d.payload.check(o, `${type}@v${version}`) as never, inexact: up.inexact };
}
