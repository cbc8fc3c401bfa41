import { builder, allow } from './builder.js';
import { ExecutionStatusEnum, InterruptReasonEnum, TriggerEnum } from './enums.js';
import { ExecutionNotFoundError, HostNotFoundError, InvalidRequestError, SessionBusyError, SessionNotFoundError, SessionSealedError } from './errors.js';
import { ExecutionRef, NodeRef, SessionRef } from './refs.js';
import { JobConnection, MessageConnection } from './session.js';
import { pageArgs } from './connection.js';
import { beginExecution, reportExecutionCost, settleExecution } from '../domain/executions.js';
import { ModelInput, ModelRef } from './host.js';
import type { ExecutionRow, ModelCallRow, UsageColumns } from '../domain/rows.js';
import { executionReads, jobsOfExecution, messagesOfExecution, modelCallsOfExecution } from '../resolvers/loaders.js';
import { planExecution } from '../resolvers/plans.js';

const num = (v: string | number | null) => (v == null ? null : Number(v));

/** The one meaning of every count, on every agent (docs/CONTRACT.md section 1a); the same words on the input. */
const USAGE_DOCS = {
  inputTokens: 'Every input token of the step\'s model calls, the cached ones included (cache reads and cache writes are part of it, and also given apart): the OpenTelemetry GenAI meaning of gen_ai.usage.input_tokens, on every agent (OpenAI\'s input tokens; Anthropic\'s input_tokens + cache_read_input_tokens + cache_creation_input_tokens).',
  outputTokens: 'Every output token, reasoning tokens included.',
  reasoningTokens: 'The output tokens the model spent reasoning, where the agent says.',
  cacheReadTokens: 'The input tokens read from the provider\'s prompt cache (part of inputTokens).',
  cacheWriteTokens: 'The input tokens written to the provider\'s prompt cache (part of inputTokens), of every cache lifetime.',
  cacheWrite5mTokens: 'The cache writes of the 5-minute cache (part of cacheWriteTokens), where the agent says which; null otherwise.',
  cacheWrite1hTokens: 'The cache writes of the 1-hour cache (part of cacheWriteTokens), where the agent says which; null otherwise.',
} as const;

const UsageRef = builder.objectRef<UsageColumns>('ExecutionUsage').implement({
  description: 'What the step used and cost, as its host recorded it from the agent (OpenCode: the step-finish part; Claude Code: the transcript; Codex: the rollout), in one meaning on every agent. A count the host did not report is null.',
  fields: (t) => ({
    inputTokens: t.int({ nullable: true, description: USAGE_DOCS.inputTokens, resolve: (e) => num(e.inputTokens) }),
    outputTokens: t.int({ nullable: true, description: USAGE_DOCS.outputTokens, resolve: (e) => num(e.outputTokens) }),
    reasoningTokens: t.int({ nullable: true, description: USAGE_DOCS.reasoningTokens, resolve: (e) => num(e.reasoningTokens) }),
    cacheReadTokens: t.int({ nullable: true, description: USAGE_DOCS.cacheReadTokens, resolve: (e) => num(e.cacheReadTokens) }),
    cacheWriteTokens: t.int({ nullable: true, description: USAGE_DOCS.cacheWriteTokens, resolve: (e) => num(e.cacheWriteTokens) }),
    cacheWrite5mTokens: t.int({ nullable: true, description: USAGE_DOCS.cacheWrite5mTokens, resolve: (e) => num(e.cacheWrite5mTokens) }),
    cacheWrite1hTokens: t.int({ nullable: true, description: USAGE_DOCS.cacheWrite1hTokens, resolve: (e) => num(e.cacheWrite1hTokens) }),
    cost: t.exposeFloat('cost', { nullable: true, description: 'What the agent itself reported the step cost, in US dollars (OpenCode: the step-finish part; Claude Code: its own cost accounting); null when the agent reports none (Codex). Never estimated.' }),
  }),
});

const ModelCallTimesEnum = builder.enumType('ModelCallTimes', {
  description: 'Whose record a model call\'s start and end are.',
  values: {
    AGENT: { description: 'The agent\'s own (Claude Code: its api-request line and the response\'s lines in the transcript; Codex: its rollout lines\' timestamps; OpenCode: its message\'s times).' },
    HOST: { description: 'The host observed them (the agent recorded none).' },
  },
});

const ModelCallRef = builder.objectRef<ModelCallRow>('ModelCall').implement({
  description: 'One request the agent made to a model within the execution, in order: its model, usage (ExecutionUsage\'s meaning; the execution\'s usage is their sum where the host reported both), finish reason, and its start and end as the agent recorded them (or as its host observed them: timesFrom).',
  fields: (t) => ({
    index: t.exposeInt('index', { description: '0, 1, 2… within the execution.' }),
    externalID: t.exposeString('externalId', { nullable: true, description: 'The agent\'s own ID of the response (Claude Code: the message ID; OpenCode: the assistant message).' }),
    model: t.field({ type: ModelRef, nullable: true, resolve: (c) => (c.providerId && c.modelId ? { providerID: c.providerId, modelID: c.modelId } : null) }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true, description: 'When the request was sent; null when neither the agent nor the host knows.' }),
    endedAt: t.expose('endedAt', { type: 'DateTime', nullable: true, description: 'When the response ended.' }),
    durationMs: t.float({ nullable: true, resolve: (c) => (c.startedAt && c.endedAt ? c.endedAt.getTime() - c.startedAt.getTime() : null) }),
    timesFrom: t.expose('timesFrom', { type: ModelCallTimesEnum }),
    finishReason: t.exposeString('finishReason', { nullable: true, description: 'Why the model stopped, as the agent recorded it (e.g. "end_turn", "tool_use", "stop", "tool-calls").' }),
    usage: t.field({ type: UsageRef, nullable: true, description: 'Null when the agent recorded none for this call.', resolve: (c) => (hasUsage(c) ? c : null) }),
  }),
});

const ModelCallInput = builder.inputType('ModelCallInput', {
  fields: (t) => ({
    externalID: t.string({ required: false, description: 'The agent\'s own ID of the response (at most 200 characters).' }),
    model: t.field({ type: ModelInput, required: false }),
    startedAt: t.field({ type: 'DateTime', required: false }),
    endedAt: t.field({ type: 'DateTime', required: false, description: 'Not before startedAt.' }),
    timesFrom: t.field({ type: ModelCallTimesEnum, required: true, description: 'AGENT when the times are the agent\'s own record, HOST when the host observed them.' }),
    finishReason: t.string({ required: false }),
    usage: t.field({ type: UsageInputRef, required: false, description: 'This call\'s usage (and cost, where the agent reported it per call).' }),
  }),
});

const hasUsage = (e: UsageColumns) =>
  [e.inputTokens, e.outputTokens, e.reasoningTokens, e.cacheReadTokens, e.cacheWriteTokens, e.cacheWrite5mTokens, e.cacheWrite1hTokens, e.cost].some((v) => v != null);

const UsageInputRef = builder.inputType('ExecutionUsageInput', {
  description: 'Non-negative integers in the meaning of ExecutionUsage: inputTokens at least cacheReadTokens + cacheWriteTokens, cacheWriteTokens at least cacheWrite5mTokens + cacheWrite1hTokens (else InvalidRequestError).',
  fields: (t) => ({
    inputTokens: t.int({ required: false, description: USAGE_DOCS.inputTokens }),
    outputTokens: t.int({ required: false, description: USAGE_DOCS.outputTokens }),
    reasoningTokens: t.int({ required: false, description: USAGE_DOCS.reasoningTokens }),
    cacheReadTokens: t.int({ required: false, description: USAGE_DOCS.cacheReadTokens }),
    cacheWriteTokens: t.int({ required: false, description: USAGE_DOCS.cacheWriteTokens }),
    cacheWrite5mTokens: t.int({ required: false, description: USAGE_DOCS.cacheWrite5mTokens }),
    cacheWrite1hTokens: t.int({ required: false, description: USAGE_DOCS.cacheWrite1hTokens }),
    cost: t.float({ required: false, description: 'What the agent reported the step cost, in US dollars; omit it when the agent reports none (never an estimate).' }),
  }),
});

ExecutionRef.implement({
  description: 'One run of the agent loop in a session, admitted by the gateway and settled by its host.',
  interfaces: [NodeRef],
  isTypeOf: (v: any) => typeof v?.id === 'string' && v.id.startsWith('exe_'),
  fields: (t) => ({
    id: t.exposeID('id'),
    session: t.field({ type: SessionRef, resolve: (e) => e.sessionId }),
    sequence: t.exposeInt('sequence', { description: '1, 2, 3… per session.' }),
    status: t.expose('status', { type: ExecutionStatusEnum }),
    interruptReason: t.expose('interruptReason', { type: InterruptReasonEnum, nullable: true }),
    trigger: t.expose('trigger', { type: TriggerEnum }),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    settledAt: t.expose('settledAt', { type: 'DateTime', nullable: true }),
    durationMs: t.float({ nullable: true, description: 'From startedAt to settledAt, in milliseconds; null while it runs.',
      resolve: (e) => (e.settledAt ? e.settledAt.getTime() - e.startedAt.getTime() : null) }),
    error: t.exposeString('error', { nullable: true }),
    hostID: t.exposeID('hostId'),
    externalID: t.exposeString('externalId', { nullable: true, description: 'The host\'s own ID of the step (OpenCode: its assistant message msg_…).' }),
    model: t.field({ type: ModelRef, nullable: true, description: 'The model the step ran with, when the host said.',
      resolve: (e) => (e.providerId && e.modelId ? { providerID: e.providerId, modelID: e.modelId } : null) }),
    agent: t.exposeString('agent', { nullable: true }),
    mode: t.exposeString('mode', { nullable: true }),
    finishReason: t.exposeString('finishReason', { nullable: true, description: 'Why the model stopped (OpenCode: e.g. "stop", "tool-calls").' }),
    errorName: t.exposeString('errorName', { nullable: true, description: 'The host\'s name of the error the step ended with (OpenCode: e.g. "MessageAbortedError", "APIError").' }),
    usage: t.field({ type: UsageRef, nullable: true, description: 'Tokens and cost of the step; null when the host reported none.', resolve: (e) => (hasUsage(e) ? e : null) }),
    messages: t.field({ type: MessageConnection, args: pageArgs, resolve: (e, args, ctx) => messagesOfExecution(ctx, e.id, args) }),
    jobs: t.field({ type: JobConnection, args: pageArgs, resolve: (e, args, ctx) => jobsOfExecution(ctx, e.id, args) }),
    modelCalls: t.field({ type: [ModelCallRef], description: 'The requests the agent made to models within the execution, in order, as its host reported them at settlement (empty when it reported none).',
      resolve: (e, _a, ctx) => modelCallsOfExecution(ctx).load(e.id) }),
  }),
});

builder.queryField('execution', (t) =>
  t.field({
    type: ExecutionRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    // Read as its plan asks (resolvers/plans.ts): with its changeset selected, the execution comes with its
    // changeset row (and the list of its files) in one statement, its files with their patches in the same wave.
    resolve: (_r, { id }, ctx, info) => executionReads(ctx).load({ id: String(id), plan: planExecution(info) }),
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
    externalID: t.string({ required: false, description: 'The host\'s own ID of the step (at most 200 characters).' }),
    model: t.field({ type: ModelInput, required: false }),
    agent: t.string({ required: false }),
    mode: t.string({ required: false }),
    commandID: t.id({ required: false, description: 'The PROMPT host command (sendReviewComments) this execution carries out: it must be an open PROMPT of this session sent to this host (else InvalidRequestError on commandID, and nothing starts). The same transaction marks it answered (sendReviewComments returns this execution) and its comments answered by this execution; no replyHostCommand is needed.' }),
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
    usage: t.field({ type: UsageInputRef, required: false }),
    modelCalls: t.field({ type: [ModelCallInput], required: false, description: 'The execution\'s model calls, in order (at most 1,000): Execution.modelCalls.' }),
    model: t.field({ type: ModelInput, required: false, description: 'Replaces the model given at beginExecution, when given.' }),
    agent: t.string({ required: false }),
    mode: t.string({ required: false }),
    finishReason: t.string({ required: false }),
    errorName: t.string({ required: false }),
  }),
});

const ReportExecutionCostInput = builder.inputType('ReportExecutionCostInput', {
  fields: (t) => ({
    executionID: t.id({ required: true }),
    cost: t.float({ required: true, description: 'What the agent reported the settled execution cost, in US dollars (non-negative).' }),
  }),
});

builder.mutationFields((t) => ({
  beginExecution: t.field({
    type: ExecutionRef,
    extensions: allow('host'),
    errors: { types: [SessionBusyError, SessionSealedError, SessionNotFoundError, HostNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: BeginExecutionInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      beginExecution(ctx.sql, ctx.actor, input),
  }),
  settleExecution: t.field({
    type: ExecutionRef,
    extensions: allow('host'),
    errors: { types: [ExecutionNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: SettleExecutionInput, required: true }) },
    resolve: (_r, { input }, ctx) => settleExecution(ctx.sql, ctx.actor, input),
  }),
  reportExecutionCost: t.field({
    type: ExecutionRef,
    extensions: allow('host'),
    description: 'The cost the agent reported for a settled execution after it settled (Claude Code writes its own when its process exits), by the execution\'s host, once: the same cost again answers the execution, another is an InvalidRequestError, and so is a report for a running execution (settleExecution carries its usage then).',
    errors: { types: [ExecutionNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: ReportExecutionCostInput, required: true }) },
    resolve: (_r, { input }, ctx) => reportExecutionCost(ctx.sql, ctx.actor, input),
  }),
}));
