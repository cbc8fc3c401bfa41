import type { GraphQLResolveInfo } from 'graphql';
import { literalLimit } from '../db/connection.js';
import { scopeCondition } from '../domain/access.js';
import type { SessionRow } from '../domain/rows.js';
import type { Context } from './context.js';
import { SessionRef } from '../schema/refs.js';
import { decodeCursor, encodeCursor } from './cursors.js';
import { pageSize, toPage } from './pagination.js';
import { executionPageAlongable, sessionsWithExecutionPages, type ExecutionPageAlong } from './loaders.js';
import { changesetsAlong, nestedField } from './lookahead.js';
import { EXECUTION, pageColumns } from './projection.js';

/**
 * The top-level session list: newest first (IDs ascend with creation time). `columns`: only those
 * (resolvers/projection.ts SESSION); rows read whole also answer the session loader by ID. When the
 * selection reads one page of executions of every session (`edges.node.executions`, one way:
 * lookahead.ts nestedField), those pages come in the same statement (loaders.ts sessionsWithExecutions).
 */
export async function listSessions(ctx: Context, args: { first?: number | null; after?: string | null; parentID: string | null; rootsOnly: boolean },
  columns: readonly string[] | null = null, info?: GraphQLResolveInfo) {
  const limit = pageSize(args.first);
  const after = decodeCursor('session', args.after);
  const db = ctx.sql;
  // Only the conditions asked for: every fragment is a query object of its own (an empty one included).
  let where = scopeCondition(db, ctx.actor, 'directory');
  if (args.parentID) where = db`${where} AND parent_id = ${args.parentID}`;
  if (args.rootsOnly) where = db`${where} AND parent_id IS NULL`;
  if (after) where = db`${where} AND id < ${after}`;
  const page = info && executionPageOf(ctx, info, columns);
  const rows = page && columns
    ? await sessionsWithExecutionPages(ctx, { where, limit: limit + 1, sessionColumns: columns, page })
    : await db<SessionRow[]>`SELECT ${columns ? db(columns as string[]) : db`*`} FROM sessions WHERE ${where} ORDER BY id DESC LIMIT ${literalLimit(db, limit + 1)}`;
  if (!columns) {
    const loader = SessionRef.getDataloader(ctx);
    for (const r of rows) loader.prime(r.id, r);
  }
  return toPage(rows, limit, (r) => encodeCursor('session', r.id));
}

/** The page of executions every session of the list reads, as `Session.executions` will ask for it, when it can come along. */
function executionPageOf(ctx: Context, info: GraphQLResolveInfo, sessionColumns: readonly string[] | null): ExecutionPageAlong | null {
  const field = nestedField(info, 'Session', 'executions');
  if (!field) return null;
  const columns = pageColumns(EXECUTION, info, field.nodes);
  if (!executionPageAlongable(ctx.sql, sessionColumns, columns)) return null;
  let limit: number;
  let after: number | null;
  try {
    limit = pageSize(field.args.first as number | null | undefined);
    after = decodeCursor('execution', field.args.after as string | null | undefined);
  } catch {
    return null; // a bad page argument: Session.executions answers it
  }
  return { limit, after, columns, along: changesetsAlong(info, field.nodes) };
}
