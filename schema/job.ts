import { builder, allow } from './builder.js';
import { JobKindEnum, JobStatusEnum } from './enums.js';
import { HostNotFoundError, InvalidRequestError, JobNotFoundError, SessionNotFoundError, SessionSealedError } from './errors.js';
import { ExecutionRef, JobRef, NodeRef, SessionRef } from './refs.js';
import { backgroundJob, finishJob, restoreJob, startJob } from '../domain/jobs.js';

JobRef.implement({
  description: 'A shell, subagent or other job a host runs for a session.',
  interfaces: [NodeRef],
  isTypeOf: (v: any) => typeof v?.id === 'string' && v.id.startsWith('job_'),
  fields: (t) => ({
    id: t.exposeID('id'),
    session: t.field({ type: SessionRef, resolve: (j) => j.sessionId }),
    execution: t.field({
      type: ExecutionRef,
      nullable: true,
      description: 'The execution that started it, if any.',
      resolve: (j) => j.executionId,
    }),
    kind: t.expose('kind', { type: JobKindEnum }),
    title: t.exposeString('title'),
    command: t.exposeString('command', { nullable: true }),
    status: t.expose('status', { type: JobStatusEnum }),
    background: t.exposeBoolean('background'),
    restored: t.exposeBoolean('restored'),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
    exitCode: t.exposeInt('exitCode', { nullable: true }),
    hostID: t.exposeID('hostId'),
  }),
});

builder.queryField('job', (t) =>
  t.field({
    type: JobRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }) => id,
  }),
);

const StartJobInput = builder.inputType('StartJobInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    executionID: t.id({ required: false }),
    hostID: t.id({ required: true }),
    kind: t.field({ type: JobKindEnum, required: true }),
    title: t.string({ required: false }),
    command: t.string({ required: false }),
    background: t.boolean({ required: false }),
    idempotencyKey: t.string({ required: false, description: 'Optional. A call repeated with the same key (after a crash or a lost answer) returns what the first call created instead of creating it again; the same key with a different request is an InvalidRequestError. Unique per operation within the session.' }),
  }),
});
const BackgroundJobInput = builder.inputType('BackgroundJobInput', { fields: (t) => ({ jobID: t.id({ required: true }) }) });
const FinishJobInput = builder.inputType('FinishJobInput', {
  fields: (t) => ({
    jobID: t.id({ required: true }),
    status: t.field({ type: JobStatusEnum, required: true, description: 'COMPLETED, ERROR or CANCELLED; or LOST when the host can no longer see the job (e.g. its runtime restarted while the job ran): never a claimed end, and the real end may still be reported later.' }),
    exitCode: t.int({ required: false }),
  }),
});
const RestoreJobInput = builder.inputType('RestoreJobInput', {
  fields: (t) => ({ jobID: t.id({ required: true }), hostID: t.id({ required: true }) }),
});

builder.mutationFields((t) => ({
  startJob: t.field({
    type: JobRef,
    extensions: allow('host'),
    errors: { types: [SessionSealedError, SessionNotFoundError, HostNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: StartJobInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      startJob(ctx.sql, ctx.actor, input),
  }),
  backgroundJob: t.field({
    type: JobRef,
    extensions: allow('host'),
    errors: { types: [SessionSealedError, JobNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: BackgroundJobInput, required: true }) },
    resolve: (_r, { input }, ctx) => backgroundJob(ctx.sql, ctx.actor, input),
  }),
  finishJob: t.field({
    type: JobRef,
    extensions: allow('host'),
    errors: { types: [JobNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: FinishJobInput, required: true }) },
    resolve: (_r, { input }, ctx) => finishJob(ctx.sql, ctx.actor, input),
  }),
  restoreJob: t.field({
    type: JobRef,
    extensions: allow('host'),
    errors: { types: [JobNotFoundError, HostNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: RestoreJobInput, required: true }) },
    resolve: (_r, { input }, ctx) => restoreJob(ctx.sql, ctx.actor, input),
  }),
}));
