import { builder, allow } from './builder.js';
import { connectionOf, pageArgs } from './connection.js';
import { SessionStatusEnum } from './enums.js';
import { CommandTimeoutError, HostUnavailableError, InvalidRequestError, SessionBusyError, SessionNotFoundError } from './errors.js';
import { hostRequestOptions } from './compaction.js';
import { ExecutionRef, JobRef, MessageRef, NodeRef, SessionRef } from './refs.js';
import { createSession, removeSession, sessionStatus, updateSession, visibleMetadata, type RemovedSessions } from '../domain/sessions.js';
import { listSessions } from '../resolvers/sessions.js';
import { planExecutionPage } from '../resolvers/plans.js';
import { childrenOfSession, executionsOfSession, jobsOfSession, lastSettledExecution, messagesOfSession, runningExecution } from '../resolvers/loaders.js';

export const ExecutionConnection = connectionOf('Execution', ExecutionRef);
export const MessageConnection = connectionOf('Message', MessageRef);
export const JobConnection = connectionOf('Job', JobRef);
export const SessionConnection = connectionOf('Session', SessionRef);

SessionRef.implement({
  description: 'A conversation of a coding agent in one directory, with its executions, messages and jobs.',
  interfaces: [NodeRef],
  isTypeOf: (v: any) => typeof v?.id === 'string' && v.id.startsWith('ses_'),
  fields: (t) => ({
    id: t.exposeID('id'),
    parentID: t.exposeID('parentId', { nullable: true }),
    parent: t.field({
      type: SessionRef,
      nullable: true,
      resolve: (s) => s.parentId,
    }),
    children: t.field({
      type: SessionConnection,
      args: pageArgs,
      resolve: (s, args, ctx) => childrenOfSession(ctx, s.id, args),
    }),
    title: t.exposeString('title'),
    directory: t.exposeString('directory'),
    metadata: t.field({ type: 'JSON', description: 'The plugin-owned object, with the keys owned by the session\'s host (e.g. `opencode`) over it; updateSession never changes those.', resolve: (s) => visibleMetadata(s) }),
    status: t.field({
      type: SessionStatusEnum,
      resolve: async (s, _a, ctx) => sessionStatus(s, !!(await runningExecution(ctx).load(s.id))),
    }),
    sealedAt: t.expose('sealedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    executions: t.field({
      type: ExecutionConnection,
      description: 'Newest first.',
      args: pageArgs,
      // Read as its plan asks (resolvers/plans.ts), or the page the session's list brought along.
      resolve: (s, args, ctx, info) => executionsOfSession(ctx, s.id, args, planExecutionPage(info), s.executionsRead),
    }),
    runningExecution: t.field({
      type: ExecutionRef,
      nullable: true,
      resolve: (s, _a, ctx) => runningExecution(ctx).load(s.id),
    }),
    lastSettledExecution: t.field({
      type: ExecutionRef,
      nullable: true,
      resolve: (s, _a, ctx) => lastSettledExecution(ctx).load(s.id),
    }),
    messages: t.field({
      type: MessageConnection,
      description: 'Oldest first.',
      args: pageArgs,
      resolve: (s, args, ctx) => messagesOfSession(ctx, s.id, args),
    }),
    jobs: t.field({
      type: JobConnection,
      description: 'In the order they started.',
      args: pageArgs,
      resolve: (s, args, ctx) => jobsOfSession(ctx, s.id, args),
    }),
  }),
});

builder.queryFields((t) => ({
  session: t.field({
    type: SessionRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }) => id,
  }),
  sessions: t.field({
    type: SessionConnection,
    description: 'Newest first. `parentID` lists the children of one session; `rootsOnly` lists sessions without a parent.',
    args: { ...pageArgs, parentID: t.arg.id({ required: false }), rootsOnly: t.arg.boolean({ required: false }) },
    resolve: (_r, args, ctx, info) => listSessions(ctx, { first: args.first, after: args.after, parentID: args.parentID ?? null, rootsOnly: args.rootsOnly ?? false }, info),
  }),
}));

const CreateSessionInput = builder.inputType('CreateSessionInput', {
  fields: (t) => ({
    parentID: t.id({ required: false }),
    title: t.string({ required: false }),
    directory: t.string({ required: false, description: 'Absolute path; defaults to the parent\'s directory.' }),
    metadata: t.field({ type: 'JSON', required: false, description: 'A JSON object (at most 64 KiB).' }),
    hostID: t.id({ required: false, description: 'The host that serves the session from the start (otherwise its first beginExecution sets it). A seal of a session that never ran asks this host too.' }),
    hostMetadata: t.field({ type: 'JSON', required: false, description: 'With hostID: keys owned by the host (e.g. the OpenCode bridge\'s `opencode`), shown in Session.metadata and kept by every updateSession.' }),
    timeoutMs: t.int({ required: false, description: 'Under a parent whose host manages sessions (e.g. an OpenCode session): how long to wait for the host to create it (default 30000).' }),
    idempotencyKey: t.string({ required: false, description: 'Optional. A call repeated with the same key (after a crash or a lost answer) returns the session the first call created instead of creating another; the same key with a different request is an InvalidRequestError. Unique across the gateway; a key whose session was removed answers SessionNotFoundError.' }),
  }),
});

const UpdateSessionInput = builder.inputType('UpdateSessionInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    title: t.string({ required: false }),
    metadata: t.field({ type: 'JSON', required: false, description: 'Replaces the plugin-owned metadata object; the host-owned keys stay (given unchanged they are ignored, changed they are an InvalidRequestError).' }),
  }),
});

const RemoveSessionInput = builder.inputType('RemoveSessionInput', {
  fields: (t) => ({ sessionID: t.id({ required: true }) }),
});

const SessionRemoved = builder.objectRef<RemovedSessions>('SessionRemoved').implement({
  description: 'The session and all its descendants were removed; their IDs now answer as removed.',
  fields: (t) => ({
    // Always set; typed `ID` like the error members' sessionID so both can be selected together.
    sessionID: t.exposeID('sessionID', { nullable: true }),
    removedSessionIDs: t.exposeIDList('removedSessionIDs'),
  }),
});

builder.mutationFields((t) => ({
  createSession: t.field({
    type: SessionRef,
    extensions: allow('plugin'),
    errors: { types: [SessionNotFoundError, InvalidRequestError, HostUnavailableError, CommandTimeoutError] },
    args: { input: t.arg({ type: CreateSessionInput, required: true }) },
    resolve: (_r, { input }, ctx) => createSession(ctx.sql, ctx.actor,
      input, hostRequestOptions(ctx)),
  }),
  updateSession: t.field({
    type: SessionRef,
    extensions: allow('plugin'),
    errors: { types: [SessionNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: UpdateSessionInput, required: true }) },
    resolve: (_r, { input }, ctx) => updateSession(ctx.sql, ctx.actor, input),
  }),
  removeSession: t.field({
    type: SessionRemoved,
    extensions: allow('plugin'),
    errors: { types: [SessionNotFoundError, SessionBusyError, InvalidRequestError] },
    args: { input: t.arg({ type: RemoveSessionInput, required: true }) },
    resolve: (_r, { input }, ctx) => removeSession(ctx.sql, ctx.actor, input),
  }),
}));
