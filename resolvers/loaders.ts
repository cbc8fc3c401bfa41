import DataLoader from 'dataloader';
import type { Db, Sql } from '../db/connection.js';
import { scopeCondition, type Actor } from '../domain/access.js';
import type { ExecutionRow, JobRow, MessageRow, PartRow, SessionRow } from '../domain/rows.js';
import { decodeCursor, encodeCursor, pageSize, toPage, type Page } from './pagination.js';

/**
 * Per-request batch loaders: every list and reference field resolves through one of these, so the
 * number of SQL round trips of a request depends on its shape, not on how many rows it returns.
 */
export type Loaders = ReturnType<typeof createLoaders>;

/**
 * Batches are dispatched on setImmediate, after every pending promise of the current resolution
 * wave has run, so loads from sibling resolvers land in one batch however their awaits interleave.
 */
const schedule = { batchScheduleFn: (cb: () => void) => setImmediate(cb) };

function byId<T extends { id: string }>(fetch: (ids: string[]) => Promise<T[]>) {
  return new DataLoader<string, T | null>(async (ids) => {
    const rows = await fetch([...ids]);
    const map = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => map.get(id) ?? null);
  }, schedule);
}

function groupBy<T>(keys: readonly string[], rows: T[], keyOf: (r: T) => string): T[][] {
  const map = new Map<string, T[]>(keys.map((k) => [k, []]));
  for (const r of rows) map.get(keyOf(r))?.push(r);
  return keys.map((k) => map.get(k)!);
}

export interface PageArgs { first?: number | null; after?: string | null }
interface PageKey { parent: string; limit: number; after: string | number | null }

/**
 * A loader of one page of children per parent. Keys with the same page arguments are fetched in one
 * query (a LATERAL join takes up to limit+1 rows per parent through the index).
 */
function pagedLoader<T>(
  kind: string,
  numeric: boolean,
  cursorKey: (row: T) => string | number,
  parentOf: (row: T) => string,
  fetch: (parents: string[], limit: number, after: any) => Promise<T[]>,
) {
  const loader = new DataLoader<PageKey, Page<T>, string>(
    async (keys) => {
      const groups = new Map<string, PageKey[]>();
      for (const k of keys) {
        const g = `${k.limit}|${k.after ?? ''}`;
        if (!groups.has(g)) groups.set(g, []);
        groups.get(g)!.push(k);
      }
      const result = new Map<PageKey, Page<T>>();
      await Promise.all(
        [...groups.values()].map(async (group) => {
          const { limit, after } = group[0];
          const parents = [...new Set(group.map((k) => k.parent))];
          const rows = await fetch(parents, limit + 1, after);
          const perParent = groupBy(parents, rows, parentOf);
          const pages = new Map(parents.map((p, i) => [p, toPage(perParent[i], limit, (r) => encodeCursor(kind, cursorKey(r)))]));
          for (const k of group) result.set(k, pages.get(k.parent)!);
        }),
      );
      return keys.map((k) => result.get(k)!);
    },
    { cacheKeyFn: (k) => `${k.parent}|${k.limit}|${k.after ?? ''}`, ...schedule },
  );
  return (parent: string, args: PageArgs) =>
    loader.load({ parent, limit: pageSize(args.first), after: decodeCursor(kind, args.after, numeric as any) });
}

export function createLoaders(sql: Sql, actor: Actor) {
  const db: Db = sql;
  const scope = (col: string) => scopeCondition(db, actor, col);
  return {
    session: byId<SessionRow>((ids) => db<SessionRow[]>`SELECT * FROM sessions WHERE id = ANY(${ids}) AND ${scope('directory')}`),
    execution: byId<ExecutionRow>((ids) => db<ExecutionRow[]>`
      SELECT e.* FROM executions e JOIN sessions s ON s.id = e.session_id WHERE e.id = ANY(${ids}) AND ${scope('s.directory')}`),
    message: byId<MessageRow>((ids) => db<MessageRow[]>`
      SELECT m.* FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ANY(${ids}) AND ${scope('s.directory')}`),
    job: byId<JobRow>((ids) => db<JobRow[]>`
      SELECT j.* FROM jobs j JOIN sessions s ON s.id = j.session_id WHERE j.id = ANY(${ids}) AND ${scope('s.directory')}`),

    runningExecution: new DataLoader<string, ExecutionRow | null>(async (ids) => {
      const rows = await db<ExecutionRow[]>`SELECT * FROM executions WHERE session_id = ANY(${[...ids]}) AND status = 'RUNNING'`;
      const map = new Map(rows.map((r) => [r.sessionId, r]));
      return ids.map((id) => map.get(id) ?? null);
    }, schedule),
    lastSettledExecution: new DataLoader<string, ExecutionRow | null>(async (ids) => {
      const rows = await db<ExecutionRow[]>`
        SELECT DISTINCT ON (session_id) * FROM executions
        WHERE session_id = ANY(${[...ids]}) AND status <> 'RUNNING' ORDER BY session_id, sequence DESC`;
      const map = new Map(rows.map((r) => [r.sessionId, r]));
      return ids.map((id) => map.get(id) ?? null);
    }, schedule),
    parts: new DataLoader<string, PartRow[]>(async (ids) => {
      const rows = await db<PartRow[]>`SELECT * FROM parts WHERE message_id = ANY(${[...ids]}) ORDER BY message_id, index`;
      return groupBy(ids, rows, (r) => r.messageId);
    }, schedule),

    childrenOfSession: pagedLoader<SessionRow>('session', false, (r) => r.id, (r) => r.parentId!, (parents, limit, after) => db<SessionRow[]>`
      SELECT c.* FROM unnest(${parents}::text[]) AS p(id) CROSS JOIN LATERAL (
        SELECT * FROM sessions WHERE parent_id = p.id ${after ? db`AND id > ${after}` : db``} AND ${scope('directory')}
        ORDER BY id LIMIT ${limit}) c`),
    executionsOfSession: pagedLoader<ExecutionRow>('execution', true, (r) => r.sequence, (r) => r.sessionId, (parents, limit, after) => db<ExecutionRow[]>`
      SELECT e.* FROM unnest(${parents}::text[]) AS p(id) CROSS JOIN LATERAL (
        SELECT * FROM executions WHERE session_id = p.id ${after !== null ? db`AND sequence < ${after}` : db``}
        ORDER BY sequence DESC LIMIT ${limit}) e`),
    messagesOfSession: pagedLoader<MessageRow>('message', true, (r) => r.position, (r) => r.sessionId, (parents, limit, after) => db<MessageRow[]>`
      SELECT m.* FROM unnest(${parents}::text[]) AS p(id) CROSS JOIN LATERAL (
        SELECT * FROM messages WHERE session_id = p.id ${after !== null ? db`AND position > ${after}` : db``}
        ORDER BY position LIMIT ${limit}) m`),
    jobsOfSession: pagedLoader<JobRow>('job', false, (r) => r.id, (r) => r.sessionId, (parents, limit, after) => db<JobRow[]>`
      SELECT j.* FROM unnest(${parents}::text[]) AS p(id) CROSS JOIN LATERAL (
        SELECT * FROM jobs WHERE session_id = p.id ${after ? db`AND id > ${after}` : db``}
        ORDER BY id LIMIT ${limit}) j`),
    messagesOfExecution: pagedLoader<MessageRow>('message', true, (r) => r.position, (r) => r.executionId!, (parents, limit, after) => db<MessageRow[]>`
      SELECT m.* FROM unnest(${parents}::text[]) AS p(id) CROSS JOIN LATERAL (
        SELECT * FROM messages WHERE execution_id = p.id ${after !== null ? db`AND position > ${after}` : db``}
        ORDER BY position LIMIT ${limit}) m`),
    jobsOfExecution: pagedLoader<JobRow>('job', false, (r) => r.id, (r) => r.executionId!, (parents, limit, after) => db<JobRow[]>`
      SELECT j.* FROM unnest(${parents}::text[]) AS p(id) CROSS JOIN LATERAL (
        SELECT * FROM jobs WHERE execution_id = p.id ${after ? db`AND id > ${after}` : db``}
        ORDER BY id LIMIT ${limit}) j`),
  };
}
