import { GraphQLError } from 'graphql';
import { builder } from './builder.js';
import { ExecutionRef, JobRef, MessageRef, SessionRef } from './refs.js';
import { readJournal, type JournalEvent } from '../domain/journal.js';
import { getSession } from '../domain/sessions.js';
import { getExecution } from '../domain/executions.js';
import { getJob } from '../domain/jobs.js';
import { getMessage } from '../domain/messages.js';
import { resumable } from '../subscriptions/feed.js';
import { revocationOf } from '../subscriptions/signal.js';
import { isId } from '../domain/ids.js';
import { createLoaders } from '../resolvers/loaders.js';

export function encodeJournalCursor(seq: number) { return Buffer.from(`journal:${seq}`).toString('base64url'); }
export function decodeJournalCursor(c: string): number | null {
  const m = /^journal:(\d{1,15})$/.exec(Buffer.from(c, 'base64url').toString());
  return m ? Number(m[1]) : null;
}

/**
 * One event of a session's journal. It names what changed; the objects are read as they are now
 * (so a retracted message reads as its placeholder, never its original content).
 */
export const SessionEventRef = builder.objectRef<JournalEvent>('SessionEvent').implement({
  fields: (t) => ({
    cursor: t.string({ resolve: (e) => encodeJournalCursor(e.seq) }),
    sequence: t.int({ description: 'Gap-free, per session.', resolve: (e) => e.seq }),
    sessionID: t.exposeID('sessionID'),
    type: t.exposeString('type', { description: 'e.g. message.appended, message.part_corrected, message.retracted, execution.settled, job.finished, session.sealed.' }),
    createdAt: t.field({ type: 'DateTime', resolve: (e) => e.createdAt }),
    messageID: t.id({ nullable: true, resolve: (e) => e.payload?.messageID ?? null }),
    partID: t.id({ nullable: true, resolve: (e) => e.payload?.partID ?? null }),
    executionID: t.id({ nullable: true, resolve: (e) => e.payload?.executionID ?? null }),
    jobID: t.id({ nullable: true, resolve: (e) => e.payload?.jobID ?? null }),
    message: t.field({
      type: MessageRef,
      nullable: true,
      resolve: (e, _a, ctx) => (e.payload?.messageID ? getMessage(ctx.sql, ctx.actor, e.payload.messageID) : null),
    }),
    execution: t.field({
      type: ExecutionRef,
      nullable: true,
      resolve: (e, _a, ctx) => (e.payload?.executionID ? getExecution(ctx.sql, ctx.actor, e.payload.executionID) : null),
    }),
    job: t.field({
      type: JobRef,
      nullable: true,
      resolve: (e, _a, ctx) => (e.payload?.jobID ? getJob(ctx.sql, ctx.actor, e.payload.jobID) : null),
    }),
  }),
});

builder.subscriptionField('sessionEvents', (t) =>
  t.field({
    type: SessionEventRef,
    description: 'The session\'s journal: events after `after` (replayed first), then live, without gap or duplicate.',
    args: { sessionID: t.arg.id({ required: true }), after: t.arg.string({ required: false }) },
    subscribe: async (_r, args, ctx) => {
      const sessionID = String(args.sessionID);
      let after: number | null = null;
      if (args.after != null) {
        after = decodeJournalCursor(args.after);
        if (after === null) throw new GraphQLError('after is not a session event cursor.', { extensions: { code: 'BAD_USER_INPUT' } });
      }
      if (!isId('session', sessionID) || !(await getSession(ctx.sql, ctx.actor, sessionID))) {
        throw new GraphQLError(`Session ${sessionID} was not found.`, { extensions: { code: 'NOT_FOUND' } });
      }
      return resumable<JournalEvent>({
        feed: ctx.gateway.journal(sessionID),
        after,
        cursorOf: (e) => e.seq,
        replay: (a, limit) => readJournal(ctx.sql, sessionID, a, limit),
        accept: () => true,
        abortOn: revocationOf(ctx.gateway.revocations, ctx.actor.tokenID),
      });
    },
    // A subscription keeps one context for all its events: fresh loaders per event, or a message
    // corrected after an earlier event would be read from that event's cached parts.
    resolve: (e, _a, ctx) => {
      ctx.loaders = createLoaders(ctx.sql, ctx.actor);
      return e;
    },
  }),
);

builder.objectFields(SessionRef, (t) => ({
  eventsCursor: t.string({
    description: 'The cursor of the session\'s last journal event, read with the rest of the session: subscribe to sessionEvents with it as `after` to see every change after what this read shows.',
    resolve: (s) => encodeJournalCursor(Number(s.lastSeq)),
  }),
}));
