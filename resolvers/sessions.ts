import { scopeCondition } from '../domain/access.js';
import type { SessionRow } from '../domain/rows.js';
import type { Context } from './context.js';
import { SessionRef } from '../schema/refs.js';
import { decodeCursor, encodeCursor } from './cursors.js';
import { pageSize, toPage } from './pagination.js';

/**
 * The top-level session list: newest first (IDs ascend with creation time). `columns`: only those
 * (resolvers/projection.ts SESSION); rows read whole also answer the session loader by ID.
 */
export async function listSessions(ctx: Context, args: { first?: number | null; after?: string | null; parentID: string | null; rootsOnly: boolean },
  columns: readonly string[] | null = null) {
  const limit = pageSize(args.first);
  const after = decodeCursor('session', args.after);
  const db = ctx.sql;
  const rows = await db<SessionRow[]>`
    SELECT ${columns ? db(columns as string[]) : db`*`} FROM sessions
    WHERE ${scopeCondition(db, ctx.actor, 'directory')}
      ${args.parentID ? db`AND parent_id = ${args.parentID}` : db``}
      ${args.rootsOnly ? db`AND parent_id IS NULL` : db``}
      ${after ? db`AND id < ${after}` : db``}
    ORDER BY id DESC LIMIT ${limit + 1}`;
  if (!columns) {
    const loader = SessionRef.getDataloader(ctx);
    for (const r of rows) loader.prime(r.id, r);
  }
  return toPage(rows, limit, (r) => encodeCursor('session', r.id));
}
