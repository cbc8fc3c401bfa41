import { builder } from './builder.js';
import { ExecutionRef } from './refs.js';
import { continuity, type Continuity } from '../domain/continuity.js';

/**
 * One enum for both members' `reason` (Broken uses the first five values, Unknown the last four), so
 * `... on ContinuityBroken { reason } ... on ContinuityUnknown { reason }` is a valid selection.
 */
const Reason = builder.enumType('ContinuityReason', {
  values: [
    'LATER_EXECUTION', 'INTERRUPTED', 'FAILED', 'SESSION_SEALED', 'SESSION_REMOVED',
    'UNKNOWN_EXECUTION', 'NOT_SETTLED', 'SETTLEMENT_UNCERTAIN', 'HISTORY_EXPIRED',
  ] as const,
});
const BrokenReason = Reason;
const UnknownReason = Reason;

type C<K> = Extract<Continuity, { kind: K }>;

const Continuous = builder.objectRef<C<'continuous'>>('ContinuityContinuous').implement({
  description: 'The execution succeeded and is still the session\'s last; nothing ran, was interrupted, sealed or removed since.',
  isTypeOf: (v: any) => v.kind === 'continuous',
  // Nullable like ContinuityBroken.execution, so both can be selected side by side.
  fields: (t) => ({ execution: t.field({ type: ExecutionRef, nullable: true, resolve: (c) => c.execution }) }),
});
const Broken = builder.objectRef<C<'broken'>>('ContinuityBroken').implement({
  isTypeOf: (v: any) => v.kind === 'broken',
  fields: (t) => ({
    reason: t.expose('reason', { type: BrokenReason }),
    execution: t.field({ type: ExecutionRef, nullable: true, description: 'Null when the session was removed.', resolve: (c) => c.execution }),
    cause: t.field({ type: ExecutionRef, nullable: true, description: 'With LATER_EXECUTION: the first later execution.', resolve: (c) => c.cause }),
  }),
});
const Unknown = builder.objectRef<C<'unknown'>>('ContinuityUnknown').implement({
  isTypeOf: (v: any) => v.kind === 'unknown',
  fields: (t) => ({
    reason: t.expose('reason', { type: UnknownReason }),
    detail: t.exposeString('detail'),
  }),
});

const ContinuityUnion = builder.unionType('Continuity', { types: [Continuous, Broken, Unknown] });

builder.queryField('continuity', (t) =>
  t.field({
    type: ContinuityUnion,
    description: 'Does a checkpoint taken at this execution still hold?',
    args: { executionID: t.arg.id({ required: true }) },
    resolve: (_r, { executionID }, ctx) => continuity(ctx.sql, ctx.actor, executionID) as any,
  }),
);
