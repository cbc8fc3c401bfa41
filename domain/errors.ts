/**
 * The typed failures of CONTRACT section 6. Domain operations throw them; the GraphQL layer turns
 * each into a member of the field's result union (data, not GraphQL `errors`). Anything else thrown
 * is unexpected and masked.
 */
export abstract class GatewayError extends Error {
  abstract readonly code: number;
}

export class SessionNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly sessionID: string) { super(`Session ${sessionID} was not found.`); }
}
export class MessageNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly messageID: string, readonly sessionID: string | null = null) {
    super(`Message ${messageID} was not found.`);
  }
}
export class PartNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly messageID: string, readonly partID: string) {
    super(`Part ${partID} of message ${messageID} was not found.`);
  }
}
export class ExecutionNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly executionID: string) { super(`Execution ${executionID} was not found.`); }
}
export class JobNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly jobID: string) { super(`Job ${jobID} was not found.`); }
}
export class HostNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly hostID: string) { super(`Host ${hostID} was not found.`); }
}
export class SessionBusyError extends GatewayError {
  readonly code = 409;
  constructor(readonly sessionID: string, readonly executionID: string) {
    super(`Session ${sessionID} is busy: execution ${executionID} is running.`);
  }
}
export class SessionSealedError extends GatewayError {
  readonly code = 409;
  constructor(readonly sessionID: string) { super(`Session ${sessionID} is sealed: it admits no new work.`); }
}
export class InvalidRequestError extends GatewayError {
  readonly code = 400;
  constructor(readonly field: string, message: string) { super(message); }
}
export class SealTimeoutError extends GatewayError {
  readonly code = 504;
  constructor(readonly sessionID: string, readonly pendingJobIDs: string[], readonly pendingExecutionID: string | null, readonly timeoutMs: number) {
    super(`Session ${sessionID} is sealing: its work did not end within ${timeoutMs} ms. Admissions stay closed; call again to keep waiting.`);
  }
}
export type SealUnsupportedReason = 'HOST_CANNOT_CANCEL' | 'JOB_LOST' | 'ADMISSION_NOT_EXCLUSIVE';

/**
 * ADMISSION_NOT_EXCLUSIVE, by the agent of the host that can start work behind the gateway (the first word of its
 * registered name, as `usage` groups by AGENT): who can, why, and what its user does for a seal that is proven.
 */
const UNFRONTED: Record<string, { who: string; why: string; advice: string }> = {
  opencode: { who: 'OpenCode', why: 'a server the bridge attaches to, not fronted by the admission proxy',
    advice: 'For a seal that is proven, run OpenCode behind the admission proxy (`gateway bridge opencode --serve`), its clients reaching it only there.' },
  codex: { who: 'Codex', why: 'the thread ran with the host\'s hooks in Codex\'s own configuration, not through `gateway codex`, and a plain `codex` can run it without them',
    advice: 'For a seal that is proven, start Codex threads with `gateway codex` (the hooks in force, failing closed).' },
  'claude-code': { who: 'Claude Code', why: 'the session ran with the host\'s hooks in Claude Code\'s own settings, not through `gateway claude-code`, and a plain `claude` can run it without them',
    advice: 'For a seal that is proven, start Claude Code sessions with `gateway claude-code` (the hooks in force, failing closed).' },
  gemini: { who: 'Gemini CLI', why: 'the session ran with the host\'s hooks in Gemini CLI\'s own settings, not through `gateway gemini`, and a plain `gemini` can run it without them',
    advice: 'For a seal that is proven, start Gemini CLI sessions with `gateway gemini` (the hooks in force, failing closed).' },
};

function unfronted(host: string | null): string {
  const u = host ? UNFRONTED[host.split(' ')[0]] : undefined;
  if (u) return `${u.who} can start work in it without the gateway (${u.why}), so that nothing new runs cannot be proven. ${u.advice}`;
  return `its host${host ? ` (${host})` : ''} can start work without the gateway (it registered with capabilities.exclusiveAdmission false), so that nothing new runs cannot be proven.`;
}

export class SealUnsupportedError extends GatewayError {
  readonly code = 501;
  /** `host`: for ADMISSION_NOT_EXCLUSIVE, the registered name of the host that can start work behind the gateway. */
  constructor(readonly sessionID: string, readonly reason: SealUnsupportedReason, readonly jobIDs: string[], readonly executionID: string | null = null, host: string | null = null) {
    super(reason === 'JOB_LOST'
      ? `Session ${sessionID} cannot be sealed: the lease of the host owning ${jobIDs.length} of its jobs lapsed, so their termination cannot be proven.`
      : reason === 'ADMISSION_NOT_EXCLUSIVE'
        ? `Session ${sessionID} admits nothing through the gateway any more and its host terminated everything known of it (${jobIDs.length} job(s) cancelled${executionID ? ', its execution interrupted' : ''}), but ${unfronted(host)}`
        : `Session ${sessionID} cannot be sealed: the host owning its unfinished work cannot cancel it.`);
  }
}
/** A snapshot manifest references contents the gateway does not hold (upload them, then retry). */
export class ContentMissingError extends GatewayError {
  readonly code = 422;
  constructor(readonly hashes: string[], readonly sessionID: string | null = null) {
    super(`${hashes.length} content(s) referenced by the manifest were never uploaded (or have expired).`);
  }
}

// Plugin-requested compaction and generation, run by the session's host.
export type HostUnavailableReason = 'NO_HOST' | 'LEASE_EXPIRED' | 'HOST_FAILED';
/** 503: no live host owns the session (none ever ran it, or its lease lapsed), or the host reported a failure. */
export class HostUnavailableError extends GatewayError {
  readonly code = 503;
  constructor(readonly sessionID: string, readonly hostID: string | null, readonly reason: HostUnavailableReason, detail?: string) {
    super(reason === 'NO_HOST'
      ? `No host owns session ${sessionID}: it has never run an execution.`
      : reason === 'LEASE_EXPIRED'
        ? `The lease of host ${hostID}, which owns session ${sessionID}, has lapsed.`
        : `Host ${hostID} could not do it${detail ? `: ${detail}` : '.'}`);
  }
}
export type HostCapability = 'COMPACT' | 'GENERATE' | 'PROMPT';
/** 501: the session's host did not declare the capability the request needs. */
export class UnsupportedError extends GatewayError {
  readonly code = 501;
  constructor(readonly sessionID: string, readonly hostID: string | null, readonly capability: HostCapability) {
    super(`Host ${hostID} of session ${sessionID} does not support ${capability.toLowerCase()}.`);
  }
}
/** 504: the host did not reply within the wait; its command is closed and a late reply is discarded. */
export class CommandTimeoutError extends GatewayError {
  readonly code = 504;
  constructor(readonly sessionID: string, readonly commandID: string | null, readonly timeoutMs: number) {
    super(`The host of session ${sessionID} did not answer within ${timeoutMs} ms; nothing was changed.`);
  }
}
/** 404: the session's host does not offer this model (never a fall-back to another model). */
export class ModelNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly sessionID: string | null, readonly providerID: string, readonly modelID: string, readonly hostID: string | null = null) {
    super(`Model ${providerID}/${modelID} is not offered by the host of session ${sessionID}.`);
  }
}

// Review comments (domain/review-comments.ts).
/** 404: no review comment of this ID within the caller's scope (unknown and another directory's read alike). */
export class CommentNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly commentID: string) { super(`Review comment ${commentID} was not found.`); }
}
export type CommentAnchorReason = 'UNKNOWN_PATH' | 'LINE_OUTSIDE_PATCH' | 'NO_PATCH';
/** 422: the anchor of a new comment is not in its changeset (a path it does not hold, a line its patch does not show). */
export class CommentAnchorError extends GatewayError {
  readonly code = 422;
  constructor(readonly reason: CommentAnchorReason, readonly path: string | null, readonly line: number | null, message: string) { super(message); }
}

/**
 * A check sent along with others (its statements pipelined with theirs) whose typed error is to be
 * thrown in its turn, after the checks before it: the value it answered, or the error it threw.
 */
export function outcome<T>(p: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  return p.then((value) => ({ value }), (error: unknown) => ({ error }));
}
