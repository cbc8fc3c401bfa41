import { GraphQLError } from 'graphql';
import { builder } from './builder.js';
import { ExecutionRef, JobRef, MessageRef, SessionRef } from './refs.js';
import { readJournal, type JournalEvent } from '../domain/journal.js';
import { getSession } from '../domain/sessions.js';
import { resumable } from '../subscriptions/feed.js';
import { revocationOf } from '../subscriptions/signal.js';
import { isId } from '../domain/ids.js';
import { decodeCursor, encodeCursor } from '../resolvers/cursors.js';


/**
 * One event of a session's journal. It names what changed; the objects are read as they are now
 * (so a retracted message reads as its placeholder, never its original content).
 */
export const SessionEventRef = builder.objectRef<JournalEvent>('SessionEvent').implement({
  fields: (t) => ({
    cursor: t.string({ resolve: (e) => encodeCursor('journal', e.seq) }),
    sequence: t.int({ description: 'Gap-free, per session.', resolve: (e) => e.seq }),
    sessionID: t.exposeID('sessionID'),
    type: t.exposeString('type', { description: 'e.g. message.appended, message.part_corrected, message.retracted, execution.settled, job.finished, session.sealed.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    messageID: t.id({ nullable: true, resolve: (e) => e.payload?.messageID ?? null }),
    partID: t.id({ nullable: true, resolve: (e) => e.payload?.partID ?? null }),
    executionID: t.id({ nullable: true, resolve: (e) => e.payload?.executionID ?? null }),
    jobID: t.id({ nullable: true, resolve: (e) => e.payload?.jobID ?? null }),
    message: t.field({
      type: MessageRef,
      nullable: true,
      resolve: (e) => e.payload?.messageID ?? null,
    }),
    execution: t.field({
      type: ExecutionRef,
      nullable: true,
      resolve: (e) => e.payload?.executionID ?? null,
    }),
    job: t.field({
      type: JobRef,
      nullable: true,
      resolve: (e) => e.payload?.jobID ?? null,
    }),
  }),
});

builder.subscriptionField('sessionEvents', (t) =>
  t.field({
    type: SessionEventRef,
    description: 'The session\'s journal: events after `after` (replayed first), then live, without gap or duplicate.',
    args: { sessionID: t.arg.id({ required: true }), after: t.arg.string({ required: false }) },
    subscribe: async (_r, args, ctx) => {
      const sessionID = args.sessionID;
      const after = decodeCursor('journal', args.after);
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
    // Each event runs with a context of its own (subscriptions/shared.ts), so its loaders read the
    // objects as they are now: a message corrected after an earlier event is not read from that event's cache.
    resolve: (e) => e,
  }),
);

builder.objectFields(SessionRef, (t) => ({
  eventsCursor: t.string({
    description: 'The cursor of the session\'s last journal event, read with the rest of the session: subscribe to sessionEvents with it as `after` to see every change after what this read shows.',
    resolve: (s) => encodeCursor('journal', Number(s.lastSeq)),
  }),
}));
