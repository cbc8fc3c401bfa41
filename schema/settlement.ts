import { GraphQLError } from 'graphql';
import { builder } from './builder.js';
import { ExecutionStatusEnum } from './enums.js';
import { ExecutionRef } from './refs.js';
import { inScope } from '../domain/access.js';
import { getExecution } from '../domain/executions.js';
import { decodeSettlementCursor, encodeSettlementCursor, readSettlements, type SettlementRow } from '../domain/settlements.js';
import { pageSize, toPage } from '../resolvers/pagination.js';
import { connectionOf, pageArgs } from './connection.js';
import { resumable } from '../subscriptions/feed.js';
import { liveSignal } from '../subscriptions/signal.js';

export const SettlementEventRef = builder.objectRef<SettlementRow>('SettlementEvent').implement({
  description: 'An execution reached a terminal status. `cursor` follows commit order across the whole gateway.',
  fields: (t) => ({
    cursor: t.string({ resolve: (r) => encodeSettlementCursor(r.pos) }),
    executionID: t.exposeID('executionId'),
    sessionID: t.exposeID('sessionId'),
    status: t.field({ type: ExecutionStatusEnum, resolve: (r) => r.status as any }),
    settledAt: t.field({ type: 'DateTime', resolve: (r) => r.settledAt }),
    execution: t.field({
      type: ExecutionRef,
      nullable: true,
      description: 'Null when the session has since been removed.',
      resolve: (r, _a, ctx) => getExecution(ctx.sql, ctx.actor, r.executionId),
    }),
  }),
});

const SettlementConnection = connectionOf<SettlementRow>('Settlement', SettlementEventRef);

function cursorArg(after: string | null | undefined): number | null {
  if (after == null) return null;
  const pos = decodeSettlementCursor(after);
  if (pos === null) throw new GraphQLError('after is not a settlement cursor.', { extensions: { code: 'BAD_USER_INPUT' } });
  return pos;
}

builder.queryField('settlements', (t) =>
  t.field({
    type: SettlementConnection,
    description: 'The settlement log in commit order, for backfills; resume with `after` = the last cursor.',
    args: { ...pageArgs, sessionID: t.arg.id({ required: false }) },
    resolve: async (_r, args, ctx) => {
      const limit = pageSize(args.first);
      const rows = await readSettlements(ctx.sql, ctx.actor, {
        after: cursorArg(args.after) ?? 0,
        limit: limit + 1,
        sessionID: args.sessionID == null ? null : String(args.sessionID),
      });
      return toPage(rows, limit, (r) => encodeSettlementCursor(r.pos));
    },
  }),
);

builder.subscriptionField('executionSettled', (t) =>
  t.field({
    type: SettlementEventRef,
    description: 'Every settlement committed after `after` (replayed first), then live, in commit order, without gap or duplicate.',
    args: { sessionID: t.arg.id({ required: false }), after: t.arg.string({ required: false }) },
    subscribe: (_r, args, ctx) => {
      const sessionID = args.sessionID == null ? null : String(args.sessionID);
      const signal = liveSignal(ctx);
      return resumable<SettlementRow>({
        feed: ctx.gateway.settlements,
        after: cursorArg(args.after),
        cursorOf: (r) => r.pos,
        replay: (after, limit) => readSettlements(ctx.sql, ctx.actor, { after, limit, sessionID }),
        accept: (r) => (!sessionID || r.sessionId === sessionID) && inScope(ctx.actor, r.directory),
        signal,
      });
    },
    resolve: (r) => r,
  }),
);
