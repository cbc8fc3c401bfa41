import type { GraphQLResolveInfo } from 'graphql';
import { isDistributed } from '../db/cluster.js';
import { literalLimit } from '../db/connection.js';
import { scopeCondition } from '../domain/access.js';
import type { Context } from './context.js';
import { decodeCursor, encodeCursor } from './cursors.js';
import { pageSize, toPage } from './pagination.js';
import { sessionsWithExecutionPages, type SessionRead } from './loaders.js';
import { planSessionPage, type SessionPlan } from './plans.js';
import { argumentsOf } from './selection.js';

/**
 * The top-level session list: newest first (IDs ascend with creation time), read as its plan asks
 * (resolvers/plans.ts SessionPlan): its columns and, when every session selects one page of its
 * executions one way, those pages in the same statement on one PostgreSQL (loaders.ts
 * sessionsWithExecutions), kept on each session for `Session.executions`.
 */
export async function listSessions(ctx: Context, args: { first?: number | null; after?: string | null; parentID: string | null; rootsOnly: boolean }, info: GraphQLResolveInfo) {
  const limit = pageSize(args.first);
  const after = decodeCursor('session', args.after);
  const db = ctx.sql;
  const plan = planSessionPage(info);
  // Only the conditions asked for: every fragment is a query object of its own (an empty one included).
  let where = scopeCondition(db, ctx.actor, 'directory');
  if (args.parentID) where = db`${where} AND parent_id = ${args.parentID}`;
  if (args.rootsOnly) where = db`${where} AND parent_id IS NULL`;
  if (after) where = db`${where} AND id < ${after}`;
  const page = !isDistributed(db) && executionPageOf(plan, info);
  const rows = page
    ? await sessionsWithExecutionPages(ctx, { where, limit: limit + 1, sessionColumns: plan.columns, page })
    : await db<SessionRead[]>`SELECT ${db(plan.columns as string[])} FROM sessions WHERE ${where} ORDER BY id DESC LIMIT ${literalLimit(db, limit + 1)}`;
  return toPage(rows, limit, (r) => encodeCursor('session', r.id));
}

/** The page of executions every session of the list reads, as `Session.executions` will ask for it, when the plan has one. */
function executionPageOf(plan: SessionPlan, info: GraphQLResolveInfo) {
  if (!plan.executions) return null;
  const args = argumentsOf(info, 'Session', 'executions', plan.executions.nodes[0]);
  if (!args) return null;
  try {
    return { limit: pageSize(args.first as number | null | undefined), after: decodeCursor('execution', args.after as string | null | undefined), plan: plan.executions.plan };
  } catch {
    return null; // a bad page argument: Session.executions answers it
  }
}
