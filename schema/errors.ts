import { builder } from './builder.js';
import {
  ExecutionNotFoundError, GatewayError, HostNotFoundError, InvalidRequestError, JobNotFoundError, MessageNotFoundError,
  PartNotFoundError, SessionBusyError, SessionNotFoundError, SessionSealedError,
} from '../domain/errors.js';

/** `interface Error { message, code }`: every expected failure, with an HTTP-like code. */
export const ErrorInterface = builder.interfaceRef<GatewayError>('Error').implement({
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.exposeInt('code'),
  }),
});

function errorType<T extends GatewayError>(cls: abstract new (...args: any[]) => T, name: string, fields: (t: any) => Record<string, any>) {
  builder.objectType(cls as any, {
    name,
    interfaces: [ErrorInterface],
    isTypeOf: (v: unknown) => v instanceof cls,
    fields,
  });
}

// Same-named fields of error types share one type (`sessionID: ID` everywhere), so a client can select
// them side by side in one result union without a field-merge conflict.
errorType(SessionNotFoundError, 'SessionNotFoundError', (t) => ({ sessionID: t.exposeID('sessionID', { nullable: true }) }));
errorType(MessageNotFoundError, 'MessageNotFoundError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  messageID: t.exposeID('messageID'),
}));
errorType(PartNotFoundError, 'PartNotFoundError', (t) => ({ messageID: t.exposeID('messageID'), partID: t.exposeID('partID') }));
errorType(ExecutionNotFoundError, 'ExecutionNotFoundError', (t) => ({ executionID: t.exposeID('executionID') }));
errorType(JobNotFoundError, 'JobNotFoundError', (t) => ({ jobID: t.exposeID('jobID') }));
errorType(HostNotFoundError, 'HostNotFoundError', (t) => ({ hostID: t.exposeID('hostID') }));
errorType(SessionBusyError, 'SessionBusyError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  executionID: t.exposeID('executionID'),
}));
errorType(SessionSealedError, 'SessionSealedError', (t) => ({ sessionID: t.exposeID('sessionID', { nullable: true }) }));
errorType(InvalidRequestError, 'InvalidRequestError', (t) => ({ field: t.exposeString('field') }));

export {
  ExecutionNotFoundError, HostNotFoundError, InvalidRequestError, JobNotFoundError, MessageNotFoundError,
  PartNotFoundError, SessionBusyError, SessionNotFoundError, SessionSealedError,
};

// Changesets.
import { ContentMissingError } from '../domain/errors.js';
errorType(ContentMissingError, 'ContentMissingError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  hashes: t.exposeStringList('hashes', { description: 'Contents to upload before retrying (at most 1000 listed).' }),
}));
export { ContentMissingError };

// Seal.
import { SealTimeoutError, SealUnsupportedError } from '../domain/errors.js';
import { ExecutionRef, existingJobs, JobRef } from './refs.js';
import type { Context } from '../resolvers/context.js';
export const SealUnsupportedReasonEnum = builder.enumType('SealUnsupportedReason', {
  values: {
    HOST_CANNOT_CANCEL: { description: 'The host owning unfinished work did not declare capabilities.cancel.' },
    JOB_LOST: { description: 'The lease of the host owning a job lapsed (the job is LOST): its end cannot be proven.' },
    ADMISSION_NOT_EXCLUSIVE: {
      description: 'Everything known of the session was terminated, but its host can start work behind the gateway (capabilities.exclusiveAdmission false, e.g. a bridged OpenCode server): that nothing new starts cannot be proven. Admissions through the gateway stay closed.',
    },
  } as const,
});
errorType(SealTimeoutError, 'SealTimeoutError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  pendingJobs: t.field({
    type: [JobRef],
    description: 'Jobs of the session that had not ended when the wait ran out.',
    resolve: (e: SealTimeoutError, _a: unknown, ctx: Context) => existingJobs(ctx, e.pendingJobIDs),
  }),
  pendingExecution: t.field({
    type: ExecutionRef,
    nullable: true,
    resolve: (e: SealTimeoutError) => e.pendingExecutionID,
  }),
  timeoutMs: t.exposeInt('timeoutMs', { description: 'The wait applied (the requested one, capped by configuration).' }),
}));
errorType(SealUnsupportedError, 'SealUnsupportedError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  reason: t.expose('reason', { type: SealUnsupportedReasonEnum }),
  jobs: t.field({
    type: [JobRef],
    description: 'HOST_CANNOT_CANCEL and JOB_LOST: the jobs whose termination cannot be proven. ADMISSION_NOT_EXCLUSIVE: the jobs the seal cancelled.',
    resolve: (e: SealUnsupportedError, _a: unknown, ctx: Context) => existingJobs(ctx, e.jobIDs),
  }),
  execution: t.field({
    type: ExecutionRef,
    nullable: true,
    description: 'HOST_CANNOT_CANCEL: the running execution whose host cannot interrupt it. ADMISSION_NOT_EXCLUSIVE: the execution the seal interrupted, if any.',
    resolve: (e: SealUnsupportedError) => e.executionID,
  }),
}));
export { SealTimeoutError, SealUnsupportedError };

// Compaction and generation.
import { CommandTimeoutError, HostUnavailableError, ModelNotFoundError, UnsupportedError } from '../domain/errors.js';
export const HostUnavailableReasonEnum = builder.enumType('HostUnavailableReason', {
  values: {
    NO_HOST: { description: 'No host owns the session: it has never run an execution.' },
    LEASE_EXPIRED: { description: 'The lease of the host that owns the session lapsed (before or during the request).' },
    HOST_FAILED: { description: 'The host answered with a failure (e.g. its model provider failed).' },
  } as const,
});
export const HostCapabilityEnum = builder.enumType('HostCapability', { values: ['COMPACT', 'GENERATE', 'PROMPT'] as const });
errorType(HostUnavailableError, 'HostUnavailableError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  hostID: t.exposeID('hostID', { nullable: true }),
  reason: t.expose('reason', { type: HostUnavailableReasonEnum }),
}));
errorType(UnsupportedError, 'UnsupportedError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  hostID: t.exposeID('hostID', { nullable: true }),
  capability: t.expose('capability', { type: HostCapabilityEnum }),
}));
errorType(CommandTimeoutError, 'CommandTimeoutError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  commandID: t.exposeID('commandID', { nullable: true }),
  timeoutMs: t.exposeInt('timeoutMs', { description: 'The wait applied (the requested one, capped by configuration).' }),
}));
errorType(ModelNotFoundError, 'ModelNotFoundError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  hostID: t.exposeID('hostID', { nullable: true }),
  providerID: t.exposeString('providerID'),
  modelID: t.exposeString('modelID'),
}));
export { CommandTimeoutError, HostUnavailableError, ModelNotFoundError, UnsupportedError };

// Review comments.
import { CommentAnchorError, CommentNotFoundError } from '../domain/errors.js';
export const CommentAnchorReasonEnum = builder.enumType('CommentAnchorReason', {
  values: {
    UNKNOWN_PATH: { description: 'The path is not a file of the changeset (or its files cannot be read: coverage unavailable, expired).' },
    LINE_OUTSIDE_PATCH: { description: 'The line is not shown in the file\'s patch on that side (in no hunk).' },
    NO_PATCH: { description: 'The file has no patch (binary, or left out: see the coverage omissions): only a comment on the whole file.' },
  } as const,
});
errorType(CommentNotFoundError, 'CommentNotFoundError', (t) => ({ commentID: t.exposeID('commentID') }));
errorType(CommentAnchorError, 'CommentAnchorError', (t) => ({
  // Not `reason`: same-named fields of a result union's members share one type (HostUnavailableError.reason).
  anchorReason: t.expose('reason', { type: CommentAnchorReasonEnum }),
  path: t.exposeString('path', { nullable: true }),
  line: t.exposeInt('line', { nullable: true, description: 'LINE_OUTSIDE_PATCH: the first line of the anchor not shown.' }),
}));
export { CommentAnchorError, CommentNotFoundError };
