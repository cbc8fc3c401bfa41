import { builder, allow } from './builder.js';
import {
  CommandTimeoutError, HostUnavailableError, InvalidRequestError, SessionBusyError, SessionNotFoundError, SessionSealedError,
  UnsupportedError,
} from './errors.js';
import { HostCommandRef } from './commands.js';
import { MessageRef, SessionRef } from './refs.js';
import { compactSession, replyCompaction, type SessionCompacted } from '../domain/compaction.js';
import { replyGeneration } from '../domain/generation.js';
import { replySessionCreated } from '../domain/sessions.js';
import { replyPrompt } from '../domain/review-comments.js';
import {
  checkReplyError, DEFAULT_HOST_REQUEST_MAX_TIMEOUT_MS, findRequest, getHostCommand, type HostRequestRow,
} from '../domain/host-requests.js';
import { isId } from '../domain/ids.js';
import type { Context } from '../resolvers/context.js';

/** The options of a request's wait, from the instance. */
export function hostRequestOptions(ctx: Context) {
  return {
    bus: ctx.gateway.bus,
    maxTimeoutMs: ctx.gateway.config.hostRequestMaxTimeoutMs ?? DEFAULT_HOST_REQUEST_MAX_TIMEOUT_MS,
    signal: ctx.gateway.stopping.signal,
  };
}

// ---- The request side of the host command channel (COMPACT_SESSION, GENERATE) ----------------------

builder.objectFields(HostCommandRef, (t) => ({
  payload: t.field({
    type: 'JSON',
    nullable: true,
    description: 'What a COMPACT_SESSION, GENERATE or PROMPT command asks: COMPACT_SESSION { context: [{ messageID, role, text }] }, GENERATE { prompt, model { providerID modelID }, context }, PROMPT { text, commentIDs }. Null for other kinds.',
    resolve: (c) => (c as HostRequestRow).payload ?? null,
  }),
  expiresAt: t.field({
    type: 'DateTime',
    nullable: true,
    description: 'A request is answered with replyHostCommand before this instant, or not at all (a later reply is discarded).',
    resolve: (c) => (c as HostRequestRow).expiresAt ?? null,
  }),
  repliedAt: t.field({ type: 'DateTime', nullable: true, resolve: (c) => (c as HostRequestRow).repliedAt ?? null }),
}));

builder.queryField('hostCommand', (t) =>
  t.field({
    type: HostCommandRef,
    nullable: true,
    description: 'One of the calling host\'s commands, with its payload (host role). Null when unknown or another host\'s.',
    extensions: allow('host'),
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => (isId('command', id) ? getHostCommand(ctx.sql, ctx.actor, id) : null),
  }),
);

const ReplyHostCommandInput = builder.inputType('ReplyHostCommandInput', {
  fields: (t) => ({
    commandID: t.id({ required: true }),
    result: t.field({
      type: 'JSON',
      required: false,
      description: 'COMPACT_SESSION: { summary }. GENERATE: { text, inputTokens, outputTokens, providerID?, modelID? }. PROMPT: none (its execution answers it: beginExecution with commandID); only error.',
    }),
    error: t.string({ required: false, description: 'The host could not do it (e.g. its model provider failed): the caller gets HostUnavailableError(HOST_FAILED) (for a PROMPT: SessionSealedError or SessionBusyError when the session is sealed or busy by then).' }),
  }),
});

builder.mutationField('replyHostCommand', (t) =>
  t.field({
    type: HostCommandRef,
    description: 'The host answers a COMPACT_SESSION or GENERATE command (host role). CommandTimeoutError when the caller already gave up: the reply is discarded and changes nothing. A compaction is recorded by this mutation\'s transaction.',
    extensions: allow('host'),
    errors: { types: [InvalidRequestError, CommandTimeoutError] },
    args: { input: t.arg({ type: ReplyHostCommandInput, required: true }) },
    resolve: async (_r, { input }, ctx) => {
      const c = await findRequest(ctx.sql, ctx.actor, input.commandID);
      const error = checkReplyError(input.error);
      if (error === null && (input.result === null || input.result === undefined)) {
        throw new InvalidRequestError('result', 'Give result or error.');
      }
      if (c.kind === 'CREATE_SESSION') return replySessionCreated(ctx.sql, c, input.result, error);
      if (c.kind === 'PROMPT') return replyPrompt(ctx.sql, c, input.result, error);
      return c.kind === 'COMPACT_SESSION'
        ? replyCompaction(ctx.sql, ctx.actor, c, input.result, error)
        : replyGeneration(ctx.sql, c, input.result, error);
    },
  }),
);

// ---- compactSession --------------------------------------------------------------------------------

const SessionCompactedRef = builder.objectRef<SessionCompacted>('SessionCompacted').implement({
  description: 'The session\'s host summarized its context; Session.context now starts from the summary.',
  fields: (t) => ({
    // Always set; typed `ID` like the error members' sessionID so both can be selected together.
    sessionID: t.id({ nullable: true, resolve: (r) => r.session.id }),
    session: t.field({ type: SessionRef, resolve: (r) => r.session }),
    summary: t.field({ type: MessageRef, description: 'The summary, stored as a message (role ASSISTANT, origin HOST).', resolve: (r) => r.summary }),
    compactedMessages: t.exposeInt('compactedMessages', { description: 'How many context messages the summary replaces.' }),
  }),
});

const CompactSessionInput = builder.inputType('CompactSessionInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    timeoutMs: t.int({ required: false, description: 'How long to wait for the host (default 30000, capped by the gateway\'s configuration).' }),
  }),
});

builder.mutationField('compactSession', (t) =>
  t.field({
    type: SessionCompactedRef,
    description: 'Asks the host that owns the session to summarize its context, and records the compaction in the session\'s journal. A compaction requested while another is in flight waits for it, then runs.',
    extensions: allow('plugin'),
    errors: {
      types: [SessionNotFoundError, SessionBusyError, SessionSealedError, HostUnavailableError, UnsupportedError, CommandTimeoutError, InvalidRequestError],
    },
    args: { input: t.arg({ type: CompactSessionInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      compactSession(ctx.sql, ctx.actor, input, hostRequestOptions(ctx)),
  }),
);
