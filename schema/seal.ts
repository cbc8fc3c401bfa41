import { builder, allow } from './builder.js';
import { InvalidRequestError, SealTimeoutError, SealUnsupportedError, SessionNotFoundError } from './errors.js';
import { ExecutionRef, existingJobs, JobRef, SessionRef } from './refs.js';
import { DEFAULT_SEAL_MAX_TIMEOUT_MS, sealSession, type SealedSession } from '../domain/seal.js';

/** The cap of timeoutMs: GatewayConfig.sealMaxTimeoutMs, else SEAL_MAX_TIMEOUT_MS from the environment, else 120000. */
const ENV_MAX_TIMEOUT_MS = Number(process.env.SEAL_MAX_TIMEOUT_MS) > 0 ? Number(process.env.SEAL_MAX_TIMEOUT_MS) : DEFAULT_SEAL_MAX_TIMEOUT_MS;

const SessionSealedRef = builder.objectRef<SealedSession>('SessionSealed').implement({
  description: 'The session admits nothing any more and nothing it owned can still run: its execution was settled and every job it owned has ended.',
  fields: (t) => ({
    // Always set; typed `ID` like the error members' sessionID so both can be selected together.
    sessionID: t.id({ nullable: true, resolve: (r) => r.session.id }),
    session: t.field({ type: SessionRef, resolve: (r) => r.session }),
    sealedAt: t.expose('sealedAt', { type: 'DateTime' }),
    cancelledJobs: t.field({
      type: [JobRef],
      description: 'The jobs the seal asked their host to cancel, with their final status.',
      resolve: (r, _a, ctx) => existingJobs(ctx, r.cancelledJobIDs),
    }),
    interruptedExecution: t.field({
      type: ExecutionRef,
      nullable: true,
      description: 'The execution that was running when the seal began, if any (interrupted with reason SEAL unless it settled first).',
      resolve: (r) => r.interruptedExecutionID,
    }),
  }),
});

const SealSessionInput = builder.inputType('SealSessionInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    timeoutMs: t.int({
      required: false,
      description: 'How long to wait for the session\'s work to end (default 30000, capped by the gateway\'s configuration). 0 checks once.',
    }),
  }),
});

builder.mutationField('sealSession', (t) =>
  t.field({
    type: SessionSealedRef,
    description: 'Closes the session\'s admissions for good, cancels its running execution and every unfinished job it owns, and waits until they have ended. Idempotent.',
    extensions: allow('plugin'),
    errors: { types: [SessionNotFoundError, SealTimeoutError, SealUnsupportedError, InvalidRequestError] },
    args: { input: t.arg({ type: SealSessionInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      ctx.gateway.timedSeal(() => sealSession(ctx.sql, ctx.actor, input, {
        bus: ctx.gateway.bus,
        maxTimeoutMs: ctx.gateway.config.sealMaxTimeoutMs ?? ENV_MAX_TIMEOUT_MS,
        signal: ctx.gateway.stopping.signal,
      })),
  }),
);
