import { builder, allow } from './builder.js';
import { MessageOriginEnum, MessageRoleEnum, PartTypeEnum } from './enums.js';
import { InvalidRequestError, SessionNotFoundError, SessionSealedError } from './errors.js';
import { ExecutionRef, MessageRef, NodeRef, PartRef, SessionRef } from './refs.js';
import { appendMessage } from '../domain/messages.js';
import { visibleParts } from '../domain/corrections.js';
import type { MessageRow, PartRow } from '../domain/rows.js';
import { partsOfMessage } from '../resolvers/loaders.js';

PartRef.implement({
  description: 'One part of a message.',
  resolveType: (p) => (p.type === 'TEXT' ? 'TextPart' : p.type === 'TOOL' ? 'ToolPart' : p.type === 'REASONING' ? 'ReasoningPart' : 'FilePart'),
  fields: (t) => ({
    id: t.exposeID('id'),
    index: t.exposeInt('index'),
    externalID: t.exposeString('externalId', { nullable: true, description: 'The host\'s own ID of the part (OpenCode: prt_…), when it sent one.' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true, description: 'When the host started producing the part (e.g. a tool call started), when it said.' }),
    endedAt: t.expose('endedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.objectRef<PartRow>('ReasoningPart').implement({
  description: 'The model\'s reasoning as the host recorded it. Not part of Session.context (a model request does not see it).',
  interfaces: [PartRef],
  fields: (t) => ({
    text: t.string({ resolve: (p) => p.text ?? '' }),
  }),
});

export const TextPartRef = builder.objectRef<PartRow>('TextPart').implement({
  interfaces: [PartRef],
  fields: (t) => ({
    text: t.string({ resolve: (p) => p.text ?? '' }),
    revision: t.exposeInt('revision', { description: 'Starts at 1 and increases with every correction.' }),
    correctedAt: t.expose('correctedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.objectRef<PartRow>('ToolPart').implement({
  interfaces: [PartRef],
  fields: (t) => ({
    tool: t.string({ resolve: (p) => p.tool ?? '' }),
    input: t.expose('input', { type: 'JSON', nullable: true }),
    output: t.exposeString('output', { nullable: true }),
    status: t.exposeString('status', { nullable: true }),
    title: t.exposeString('title', { nullable: true, description: 'The host\'s title of the call (OpenCode: the tool state\'s title).' }),
    metadata: t.field({ type: 'JSON', nullable: true, description: 'The host\'s metadata of the call (OpenCode: e.g. a shell\'s exit code and output).', resolve: (p) => p.metadata ?? null }),
  }),
});

builder.objectRef<PartRow>('FilePart').implement({
  interfaces: [PartRef],
  fields: (t) => ({
    path: t.string({ resolve: (p) => p.path ?? '' }),
    mime: t.exposeString('mime', { nullable: true }),
  }),
});

const RetractionRef = builder.objectRef<MessageRow>('Retraction').implement({
  description: 'Why and when a message was retracted. The message now reads as a gateway-owned placeholder.',
  fields: (t) => ({
    reason: t.exposeString('retractionReason', { nullable: true }),
    retractedAt: t.field({ type: 'DateTime', resolve: (m) => m.retractedAt! }),
  }),
});

MessageRef.implement({
  description: 'A stored message of a session. Its ID and its parts\' IDs never change.',
  interfaces: [NodeRef],
  isTypeOf: (v: any) => typeof v?.id === 'string' && v.id.startsWith('msg_'),
  fields: (t) => ({
    id: t.exposeID('id'),
    session: t.field({ type: SessionRef, resolve: (m) => m.sessionId }),
    execution: t.field({
      type: ExecutionRef,
      nullable: true,
      resolve: (m) => m.executionId,
    }),
    role: t.expose('role', { type: MessageRoleEnum }),
    origin: t.expose('origin', { type: MessageOriginEnum }),
    parts: t.field({
      type: [PartRef],
      description: 'A retracted message has one TextPart with the gateway\'s fixed placeholder text.',
      resolve: async (m, _a, ctx) => visibleParts(m, await partsOfMessage(ctx).load(m.id)),
    }),
    retraction: t.field({ type: RetractionRef, nullable: true, resolve: (m) => (m.retractedAt ? m : null) }),
    revision: t.exposeInt('revision', { description: 'Starts at 1 and increases with every correction or retraction.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    externalID: t.exposeString('externalId', { nullable: true, description: 'The host\'s own ID of the message (OpenCode: msg_…), when it sent one.' }),
  }),
});

builder.queryField('message', (t) =>
  t.field({
    type: MessageRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }) => id,
  }),
);

const PartInput = builder.inputType('PartInput', {
  description: 'A part: TEXT and REASONING take `text`; TOOL takes `tool`, `input`, `output`, `status`; FILE takes `path`, `mime`. Any part may carry the host\'s `externalID`, a `title`, `metadata` and its timing.',
  fields: (t) => ({
    type: t.field({ type: PartTypeEnum, required: true }),
    text: t.string({ required: false }),
    tool: t.string({ required: false }),
    input: t.field({ type: 'JSON', required: false }),
    output: t.string({ required: false }),
    status: t.string({ required: false }),
    path: t.string({ required: false }),
    mime: t.string({ required: false }),
    externalID: t.string({ required: false, description: 'The host\'s own ID of the part (at most 200 characters).' }),
    title: t.string({ required: false }),
    metadata: t.field({ type: 'JSON', required: false }),
    startedAt: t.field({ type: 'DateTime', required: false }),
    endedAt: t.field({ type: 'DateTime', required: false }),
  }),
});

const AppendMessageInput = builder.inputType('AppendMessageInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    executionID: t.id({ required: false }),
    role: t.field({ type: MessageRoleEnum, required: true }),
    origin: t.field({ type: MessageOriginEnum, required: true }),
    parts: t.field({ type: [PartInput], required: true }),
    externalID: t.string({ required: false, description: 'The host\'s own ID of the message (at most 200 characters).' }),
    idempotencyKey: t.string({ required: false, description: 'Optional. A call repeated with the same key (after a crash or a lost answer) returns what the first call created instead of creating it again; the same key with a different request is an InvalidRequestError. Unique per operation within the session.' }),
  }),
});

builder.mutationField('appendMessage', (t) =>
  t.field({
    type: MessageRef,
    extensions: allow('host'),
    errors: { types: [SessionSealedError, SessionNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: AppendMessageInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      appendMessage(ctx.sql, ctx.actor, input),
  }),
);
