import { GraphQLError } from 'graphql';
import { builder, allow } from './builder.js';
import { InvalidRequestError } from './errors.js';
import { ExecutionRef, JobRef } from './refs.js';
import { acknowledgeCommand } from '../domain/acknowledgement.js';
import { COMMAND_TOPIC, pendingCommands, requireOwnHost, type HostCommandRow } from '../domain/commands.js';
import { isId } from '../domain/ids.js';
import { Wake } from '../domain/wake.js';
import type { Context } from '../resolvers/context.js';
import { whenAvailable } from '../db/connection.js';

export const HostCommandKindEnum = builder.enumType('HostCommandKind', {
  values: {
    CANCEL_JOB: { description: 'Terminate the job (its whole process group: SIGTERM, SIGKILL after a grace period) and report its end with finishJob.' },
    INTERRUPT_EXECUTION: { description: 'Stop the execution and settle it INTERRUPTED with the command\'s reason.' },
    // Requests with a payload that the host answers with replyHostCommand (schema/compaction.ts).
    COMPACT_SESSION: { description: 'Summarize payload.context with the host\'s model and reply { summary }.' },
    GENERATE: { description: 'Run a hidden completion of payload.prompt after payload.context with payload.model and reply { text, inputTokens, outputTokens }.' },
    // Session mutations of a host that manages sessions (capabilities.sessions).
    CREATE_SESSION: { description: 'Create a child of session payload.parentID in the host\'s runtime with payload.title, mirror it (createSession with hostID, metadata payload.metadata) and reply { sessionID }.' },
    RENAME_SESSION: { description: 'Set the session\'s title in the host\'s runtime to payload.title, then acknowledge.' },
    REMOVE_SESSION: { description: 'The session (already removed on the gateway) is removed: remove it in the host\'s runtime, stop following it, then acknowledge.' },
    // A seal of a session the host admitted work in through admitWork (domain/admission.ts).
    CLOSE_ADMISSIONS: { description: 'Stop forwarding work for the session, wait for what was forwarded, stop everything it runs, and acknowledge once the runtime reports the session idle: the acknowledgement closes the host\'s admissions of the session.' },
    // Review comments sent to the agent (schema/review-comments.ts sendReviewComments).
    PROMPT: { description: 'Run payload.text as the next prompt of the session\'s agent (a normal turn): begin its execution with beginExecution(commandID: this command\'s ID), which answers the command. If it cannot start (the admission refused it, the agent failed), replyHostCommand with error.' },
  } as const,
});
export const HostCommandReasonEnum = builder.enumType('HostCommandReason', { values: ['SEAL', 'PLUGIN'] as const }); // PLUGIN: asked for by a plugin (compaction, generation, session mutations)

export const HostCommandRef = builder.objectRef<HostCommandRow>('HostCommand').implement({
  description: 'An order from the gateway to one host. Pending until the host acknowledges it; a reconnecting host receives it again.',
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.expose('kind', { type: HostCommandKindEnum }),
    reason: t.expose('reason', { type: HostCommandReasonEnum }),
    hostID: t.exposeID('hostId'),
    sessionID: t.exposeID('sessionId'),
    jobID: t.exposeID('jobId', { nullable: true }),
    executionID: t.exposeID('executionId', { nullable: true }),
    job: t.field({ type: JobRef, nullable: true, resolve: (c) => c.jobId }),
    execution: t.field({
      type: ExecutionRef,
      nullable: true,
      resolve: (c) => c.executionId,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    acknowledgedAt: t.expose('acknowledgedAt', { type: 'DateTime', nullable: true }),
  }),
});

/**
 * The command stream of one host: every pending command first, then each new one as its commit is
 * notified (re-read from the table, so a lost notification or a LISTEN reconnect loses nothing: the
 * bus's resync re-reads too). Each command is delivered once per stream; a new stream (reconnect)
 * gets every command still unacknowledged.
 */
function commandStream(ctx: Context, hostID: string): AsyncIterableIterator<HostCommandRow> {
  // Set from the start: the first pass reads every pending command.
  const wake = new Wake({ bus: ctx.gateway.bus, topic: COMMAND_TOPIC, accept: (n) => n.k === 'c' && n.h === hostID, set: true });
  const offRevoked = ctx.gateway.revocations.watch(ctx.actor.tokenID, () => wake.close(), { checkNow: true });
  const close = () => { wake.close(); offRevoked(); };
  const delivered = new Set<string>();
  const gen = (async function* () {
    try {
      while ((await wake.wait()) === 'woken') {
        wake.take();
        // The database away (on a cluster, a worker of the shards this reads): the stream waits and reads again.
        const rows = await whenAvailable(() => pendingCommands(ctx.sql, ctx.actor, hostID), () => wake.closed);
        const live = new Set(rows.map((r) => r.id));
        for (const id of delivered) if (!live.has(id)) delivered.delete(id);
        for (const r of rows) {
          if (wake.closed) return;
          if (delivered.has(r.id)) continue;
          delivered.add(r.id);
          yield r;
        }
      }
    } finally {
      close();
    }
  })();
  return {
    next: () => gen.next(),
    return: (v?: any) => { close(); return gen.return(v); },
    throw: (e?: any) => { close(); return gen.throw(e); },
    [Symbol.asyncIterator]() { return this; },
  };
}

builder.subscriptionField('hostCommands', (t) =>
  t.field({
    type: HostCommandRef,
    description: 'Cancel and interrupt commands for this host (host role): the pending ones first, then live. Acknowledge each with acknowledgeHostCommand once obeyed.',
    extensions: allow('host'),
    args: { hostID: t.arg.id({ required: true }) },
    subscribe: async (_r, args, ctx) => {
      const hostID = args.hostID;
      const ok = isId('host', hostID) && (await requireOwnHost(ctx.sql, ctx.actor, hostID).then(() => true, () => false));
      if (!ok) throw new GraphQLError(`Host ${hostID} was not found.`, { extensions: { code: 'NOT_FOUND' } });
      return commandStream(ctx, hostID);
    },
    resolve: (c) => c,
  }),
);

const AcknowledgeHostCommandInput = builder.inputType('AcknowledgeHostCommandInput', {
  fields: (t) => ({ commandID: t.id({ required: true }) }),
});

builder.mutationField('acknowledgeHostCommand', (t) =>
  t.field({
    type: HostCommandRef,
    extensions: allow('host'),
    errors: { types: [InvalidRequestError] },
    args: { input: t.arg({ type: AcknowledgeHostCommandInput, required: true }) },
    resolve: (_r, { input }, ctx) => acknowledgeCommand(ctx.sql, ctx.actor, input),
  }),
);
