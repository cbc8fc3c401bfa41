import { builder } from './builder.js';
import { ExecutionStatusEnum } from './enums.js';
import { InvalidRequestError, SessionNotFoundError } from './errors.js';
import { ModelRef } from './host.js';
import { SessionRef } from './refs.js';
import { usage, USAGE_DIMENSIONS, type UsageGroup, type UsagePage } from '../domain/usage.js';

const UsageDimensionEnum = builder.enumType('UsageDimension', {
  description: 'What usage groups settled executions by.',
  values: {
    MODEL: { description: 'The model the execution ran with (provider and model ID; null when the host did not say).' },
    PROVIDER: { description: 'The model\'s provider.' },
    AGENT: { description: 'The kind of agent host: the first word of the host\'s registered name (`opencode`, `claude-code`, `reference-host`, …).' },
    HOST: { description: 'The host that ran it.' },
    SESSION: { description: 'The session (the answer is then paged by session: `first`, `after`).' },
    STATUS: { description: 'How it settled.' },
    DAY: { description: 'The day of its settlement in `timeZone`.' },
    HOUR: { description: 'The hour of its settlement in `timeZone`.' },
  } as Record<(typeof USAGE_DIMENSIONS)[number], { description: string }>,
});

const UsageInput = builder.inputType('UsageInput', {
  fields: (t) => ({
    from: t.field({ type: 'DateTime', required: true, description: 'Executions settled at or after this instant…' }),
    to: t.field({ type: 'DateTime', required: true, description: '…and before this one.' }),
    groupBy: t.field({ type: [UsageDimensionEnum], required: true, description: 'Any of the dimensions, each once, DAY or HOUR (not both); the groups are ordered by them in this order. Empty: one group of everything.' }),
    timeZone: t.string({ required: false, description: 'An IANA time zone (e.g. `Europe/Paris`) whose days and hours DAY and HOUR are; default UTC.' }),
    sessionID: t.id({ required: false, description: 'Only this session\'s executions (SessionNotFoundError when it is missing or out of scope).' }),
    subtree: t.boolean({ required: false, description: 'With sessionID: the session and all its descendants (child sessions, theirs, …).' }),
    first: t.int({ required: false, description: 'Grouped by SESSION: sessions per page (default 50, at most 100).' }),
    after: t.string({ required: false, description: 'Grouped by SESSION: the `endCursor` of the previous page.' }),
  }),
});

type Key = UsageGroup['key'];

const UsageKeyRef = builder.objectRef<Key>('UsageKey').implement({
  description: 'What a group has in common: the fields of the dimensions it was grouped by (the others are null; so is a dimension the hosts did not record, e.g. a model).',
  fields: (t) => ({
    model: t.field({ type: ModelRef, nullable: true, resolve: (k) => (k.providerID != null && k.modelID != null ? { providerID: k.providerID, modelID: k.modelID } : null) }),
    providerID: t.string({ nullable: true, resolve: (k) => k.providerID }),
    modelID: t.string({ nullable: true, resolve: (k) => k.modelID }),
    agent: t.string({ nullable: true, description: 'The host kind (AGENT).', resolve: (k) => k.agent }),
    hostID: t.id({ nullable: true, resolve: (k) => k.hostID }),
    sessionID: t.id({ nullable: true, resolve: (k) => k.sessionID }),
    session: t.field({ type: SessionRef, nullable: true, resolve: (k) => k.sessionID }),
    status: t.field({ type: ExecutionStatusEnum, nullable: true, resolve: (k) => k.status as never }),
    period: t.string({ nullable: true, description: 'DAY: `2026-12-06`; HOUR: `2026-12-06T23:00`, on the wall clock of `timeZone`.', resolve: (k) => k.period }),
    periodStart: t.field({ type: 'DateTime', nullable: true, description: 'The instant the period starts.', resolve: (k) => k.periodStart }),
  }),
});

const UsageExecutionsRef = builder.objectRef<UsageGroup['executions']>('UsageExecutions').implement({
  description: 'Settled executions, by status.',
  fields: (t) => ({
    total: t.exposeInt('total'),
    succeeded: t.exposeInt('succeeded'),
    failed: t.exposeInt('failed'),
    interrupted: t.exposeInt('interrupted'),
    abandoned: t.exposeInt('abandoned'),
  }),
});

const UsageTokensRef = builder.objectRef<UsageGroup['tokens']>('UsageTokens').implement({
  description: 'Tokens the hosts reported, summed (Float: exact to 2^53; an execution without a count adds nothing), in the one meaning of ExecutionUsage on every agent: `input` counts the cached tokens too (`cacheRead` and `cacheWrite` are parts of it), `output` the reasoning ones, so groups of different agents add up.',
  fields: (t) => ({
    input: t.exposeFloat('input'),
    output: t.exposeFloat('output'),
    reasoning: t.exposeFloat('reasoning'),
    cacheRead: t.exposeFloat('cacheRead'),
    cacheWrite: t.exposeFloat('cacheWrite'),
  }),
});

const UsageCostRef = builder.objectRef<UsageGroup['cost']>('UsageCost').implement({
  description: 'What the agents reported the executions cost, in US dollars (OpenCode and Claude Code report it; Codex does not). Never estimated.',
  fields: (t) => ({
    total: t.exposeFloat('total', { nullable: true, description: 'Null when no execution of the group reported a cost.' }),
    reportedExecutions: t.exposeInt('reportedExecutions', { description: 'Executions whose host reported a cost (the others are not in `total`).' }),
  }),
});

const ToolUsageRef = builder.objectRef<UsageGroup['toolCalls']['byTool'][number]>('ToolUsage').implement({
  fields: (t) => ({
    tool: t.exposeString('tool'),
    calls: t.exposeInt('calls'),
    failed: t.exposeInt('failed', { description: 'Calls whose part status is `error` (or `failed`).' }),
  }),
});

const UsageToolCallsRef = builder.objectRef<UsageGroup['toolCalls']>('UsageToolCalls').implement({
  description: 'Tool calls (TOOL parts) of the executions\' messages.',
  fields: (t) => ({
    total: t.exposeInt('total'),
    failed: t.exposeInt('failed'),
    byTool: t.field({ type: [ToolUsageRef], description: 'Most called first.', resolve: (c) => c.byTool }),
  }),
});

const UsageJobsRef = builder.objectRef<UsageGroup['jobs']>('UsageJobs').implement({
  description: 'Jobs the executions started, by end state.',
  fields: (t) => ({
    total: t.exposeInt('total'),
    completed: t.exposeInt('completed'),
    error: t.exposeInt('error'),
    cancelled: t.exposeInt('cancelled'),
    lost: t.exposeInt('lost'),
    unfinished: t.exposeInt('unfinished', { description: 'Still RUNNING or CANCELLING (background jobs outlive their execution).' }),
  }),
});

const UsageDurationRef = builder.objectRef<UsageGroup['duration']>('UsageDuration').implement({
  description: 'From start to settlement (continuous percentiles); null for a group without executions.',
  fields: (t) => ({
    p50Ms: t.exposeFloat('p50Ms', { nullable: true }),
    p95Ms: t.exposeFloat('p95Ms', { nullable: true }),
  }),
});

const UsageGroupRef = builder.objectRef<UsageGroup>('UsageGroup').implement({
  fields: (t) => ({
    key: t.field({ type: UsageKeyRef, resolve: (g) => g.key }),
    executions: t.field({ type: UsageExecutionsRef, resolve: (g) => g.executions }),
    tokens: t.field({ type: UsageTokensRef, resolve: (g) => g.tokens }),
    cost: t.field({ type: UsageCostRef, resolve: (g) => g.cost }),
    toolCalls: t.field({ type: UsageToolCallsRef, resolve: (g) => g.toolCalls }),
    jobs: t.field({ type: UsageJobsRef, resolve: (g) => g.jobs }),
    duration: t.field({ type: UsageDurationRef, resolve: (g) => g.duration }),
  }),
});

const UsagePageInfoRef = builder.objectRef<UsagePage>('UsagePageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    endCursor: t.exposeString('endCursor', { nullable: true }),
  }),
});

const UsageReportRef = builder.objectRef<UsagePage>('UsageReport').implement({
  description: 'Usage of settled executions, grouped.',
  fields: (t) => ({
    groups: t.field({ type: [UsageGroupRef], resolve: (p) => p.groups }),
    pageInfo: t.field({ type: UsagePageInfoRef, description: 'Grouped by SESSION: whether more sessions follow, and the cursor to ask for them; otherwise every group is in this answer.', resolve: (p) => p }),
  }),
});

builder.queryField('usage', (t) =>
  t.field({
    type: UsageReportRef,
    description: 'Usage of the executions settled in a time range, grouped by any of model, provider, agent (host kind), host, session, status and the day or hour in a time zone: executions by status, tokens, reported cost, tool calls by tool, jobs by end state, duration percentiles. Computed by one SQL statement; scoped like every read. Grouped by DAY or HOUR alone, periods without executions are listed with zeros.',
    errors: { types: [InvalidRequestError, SessionNotFoundError], union: { name: 'UsageResult' } },
    args: { input: t.arg({ type: UsageInput, required: true }) },
    resolve: (_r, { input }, ctx) => usage(ctx.sql, ctx.actor, { ...input, groupBy: input.groupBy as never }),
  }),
);
