import { builder } from './builder.js';
import { ExecutionStatusEnum } from './enums.js';
import { ExecutionRef } from './refs.js';
import { inScope } from '../domain/access.js';
import { hasUnsequenced, latestSettlementPosition, readSettlements, type SettlementRow } from '../domain/settlements.js';
import { isId } from '../domain/ids.js';
import { badInput, pageSize, toPage } from '../resolvers/pagination.js';
import { decodeCursor, encodeCursor } from '../resolvers/cursors.js';
import { connectionOf, pageArgs } from './connection.js';
import { resumable } from '../subscriptions/feed.js';
import { revocationOf } from '../subscriptions/signal.js';

export const SettlementEventRef = builder.objectRef<SettlementRow>('SettlementEvent').implement({
  description: 'An execution reached a terminal status. `cursor` follows commit order across the whole gateway.',
  fields: (t) => ({
    cursor: t.string({ resolve: (r) => encodeCursor('settlement', r.pos) }),
    executionID: t.exposeID('executionId'),
    sessionID: t.exposeID('sessionId'),
    status: t.field({ type: ExecutionStatusEnum, resolve: (r) => r.status as any }),
    settledAt: t.expose('settledAt', { type: 'DateTime' }),
    execution: t.field({
      type: ExecutionRef,
      nullable: true,
      description: 'Null when the session has since been removed.',
      resolve: (r) => r.executionId,
    }),
  }),
});

const SettlementConnection = connectionOf('Settlement', SettlementEventRef);


const cursorArg = (after: string | null | undefined) => decodeCursor('settlement', after);

/** A malformed session ID is bad input; a well-formed one that is missing or out of scope just matches nothing. */
function sessionArg(id: string | null | undefined): string | null {
  if (id == null) return null;
  if (!isId('session', id)) throw badInput('sessionID is not a session ID.');
  return id;
}

builder.queryField('settlements', (t) =>
  t.field({
    type: SettlementConnection,
    description: 'The settlement log in commit order, for backfills; resume with `after` = the last cursor.',
    args: { ...pageArgs, sessionID: t.arg.id({ required: false }) },
    resolve: async (_r, args, ctx) => {
      const limit = pageSize(args.first);
      const after = cursorArg(args.after) ?? 0;
      const sessionID = sessionArg(args.sessionID);
      // Read your writes: a settlement committed before this query is in its answer, even if no
      // sequencer pass had given it a position yet (the instance's sequencer does; the query only reads).
      if (await hasUnsequenced(ctx.sql, sessionID)) await ctx.gateway.sequencer.caughtUp();
      const rows = await readSettlements(ctx.sql, ctx.actor, {
        after,
        limit: limit + 1,
        sessionID,
      });
      return toPage(rows, limit, (r) => encodeCursor('settlement', r.pos));
    },
  }),
);

builder.queryField('latestSettlementCursor', (t) =>
  t.string({
    description: 'The cursor of the last settlement committed so far (of one session if given): a client that loads a page and then subscribes to executionSettled with this `after` misses nothing that settles in between.',
    args: { sessionID: t.arg.id({ required: false }) },
    resolve: async (_r, args, ctx) => {
      const sessionID = sessionArg(args.sessionID);
      // Read your writes, as `settlements` does: a settlement committed before this query is counted.
      if (await hasUnsequenced(ctx.sql, sessionID)) await ctx.gateway.sequencer.caughtUp();
      return encodeCursor('settlement', await latestSettlementPosition(ctx.sql, ctx.actor, { sessionID }));
    },
  }),
);

builder.subscriptionField('executionSettled', (t) =>
  t.field({
    type: SettlementEventRef,
    description: 'Every settlement committed after `after` (replayed first), then live, in commit order, without gap or duplicate.',
    args: { sessionID: t.arg.id({ required: false }), after: t.arg.string({ required: false }) },
    subscribe: (_r, args, ctx) => {
      const sessionID = sessionArg(args.sessionID);
      const after = cursorArg(args.after);
      // Live rows come from the instance's shared reader of the log; each is filtered here with the
      // same scope rule the replay query applies in SQL (inScope = scopeCondition).
      return resumable<SettlementRow>({
        feed: ctx.gateway.settlements,
        after,
        cursorOf: (r) => r.pos,
        replay: (a, limit) => readSettlements(ctx.sql, ctx.actor, { after: a, limit, sessionID }),
        accept: (r) => (!sessionID || r.sessionId === sessionID) && inScope(ctx.actor, r.directory),
        abortOn: revocationOf(ctx.gateway.revocations, ctx.actor.tokenID),
      });
    },
    // Each event runs with a context of its own (subscriptions/shared.ts): nested fields
    // (execution { session { status } }) are read as they are now, not as an earlier event cached them.
    resolve: (r) => r,
  }),
);
