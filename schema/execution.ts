import { builder, allow } from './builder.js';
import { ExecutionStatusEnum, InterruptReasonEnum, TriggerEnum } from './enums.js';
import { ExecutionNotFoundError, HostNotFoundError, InvalidRequestError, SessionBusyError, SessionNotFoundError, SessionSealedError } from './errors.js';
import { ExecutionRef, NodeRef, SessionRef } from './refs.js';
import { JobConnection, MessageConnection } from './session.js';
import { pageArgs } from './connection.js';
import { beginExecution, settleExecution } from '../domain/executions.js';

ExecutionRef.implement({
  description: 'One run of the agent loop in a session, admitted by the gateway and settled by its host.',
  interfaces: [NodeRef],
  isTypeOf: (v: any) => typeof v?.id === 'string' && v.id.startsWith('exe_'),
  fields: (t) => ({
    id: t.exposeID('id'),
    session: t.field({ type: SessionRef, resolve: async (e, _a, ctx) => (await ctx.loaders.session.load(e.sessionId))! }),
    sequence: t.exposeInt('sequence', { description: '1, 2, 3… per session.' }),
    status: t.field({ type: ExecutionStatusEnum, resolve: (e) => e.status }),
    interruptReason: t.field({ type: InterruptReasonEnum, nullable: true, resolve: (e) => e.interruptReason }),
    trigger: t.field({ type: TriggerEnum, resolve: (e) => e.trigger }),
    startedAt: t.field({ type: 'DateTime', resolve: (e) => e.startedAt }),
    settledAt: t.field({ type: 'DateTime', nullable: true, resolve: (e) => e.settledAt }),
    error: t.exposeString('error', { nullable: true }),
    hostID: t.exposeID('hostId'),
    messages: t.field({ type: MessageConnection, args: pageArgs, resolve: (e, args, ctx) => ctx.loaders.messagesOfExecution(e.id, args) }),
    jobs: t.field({ type: JobConnection, args: pageArgs, resolve: (e, args, ctx) => ctx.loaders.jobsOfExecution(e.id, args) }),
  }),
});

builder.queryField('execution', (t) =>
  t.field({
    type: ExecutionRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => ctx.loaders.execution.load(String(id)),
  }),
);

const BeginExecutionInput = builder.inputType('BeginExecutionInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    hostID: t.id({ required: true }),
    trigger: t.field({ type: TriggerEnum, required: true }),
    startSnapshot: t.id({ required: false, description: 'The Snapshot captured at admission; without it the boundary reads START_NOT_CAPTURED.' }),
    startCaptureError: t.string({ required: false, description: 'Why the host could not capture the start snapshot (e.g. which object is missing where); the boundary then reads START_NOT_CAPTURED with this in its detail. Not with startSnapshot.' }),
    idempotencyKey: t.string({ required: false, description: 'Optional. A call repeated with the same key (after a crash or a lost answer) returns what the first call created instead of creating it again; the same key with a different request is an InvalidRequestError. Unique per operation within the session.' }),
  }),
});

const SettleExecutionInput = builder.inputType('SettleExecutionInput', {
  fields: (t) => ({
    executionID: t.id({ required: true }),
    status: t.field({ type: ExecutionStatusEnum, required: true, description: 'SUCCEEDED, FAILED or INTERRUPTED.' }),
    interruptReason: t.field({ type: InterruptReasonEnum, required: false, description: 'Required with INTERRUPTED.' }),
    error: t.string({ required: false }),
    endSnapshot: t.id({ required: false, description: 'The Snapshot captured at settlement; the changeset is frozen from it.' }),
    endCaptureError: t.string({ required: false, description: 'Why the host could not capture the end snapshot; the boundary then reads END_NOT_CAPTURED with this in its detail. Not with endSnapshot.' }),
  }),
});

builder.mutationFields((t) => ({
  beginExecution: t.field({
    type: ExecutionRef,
    extensions: allow('host'),
    errors: { types: [SessionBusyError, SessionSealedError, SessionNotFoundError, HostNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: BeginExecutionInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      beginExecution(ctx.sql, ctx.actor, { sessionID: String(input.sessionID), hostID: String(input.hostID), trigger: input.trigger,
        startSnapshot: input.startSnapshot == null ? null : String(input.startSnapshot), startCaptureError: input.startCaptureError,
        idempotencyKey: input.idempotencyKey }),
  }),
  settleExecution: t.field({
    type: ExecutionRef,
    extensions: allow('host'),
    errors: { types: [ExecutionNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: SettleExecutionInput, required: true }) },
    resolve: (_r, { input }, ctx) => settleExecution(ctx.sql, ctx.actor, {
      ...input, executionID: String(input.executionID), endSnapshot: input.endSnapshot == null ? null : String(input.endSnapshot) }),
  }),
}));
