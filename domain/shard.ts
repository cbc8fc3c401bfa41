import type { Db } from '../db/connection.js';
import { isId, sessionOf } from './ids.js';

/**
 * How a row of a session is found from its ID alone: the ID carries its session (domain/ids.ts), so the
 * condition names both, and on a cluster distributed by session (docs/citus.md) the statement runs on
 * that session's shard alone. An ID made before IDs carried their session is found by ID alone (the
 * tables keep an index on id for them).
 *
 *   SELECT * FROM executions e WHERE ${rowKey(db, id, { alias: 'e' })}
 *   -> (e.session_id = 'ses_…' AND e.id = 'exe_…')
 */
export function rowKey(db: Db, id: string, opts: { alias?: string; column?: string } = {}) {
  const col = opts.alias ? db(`${opts.alias}.${opts.column ?? 'id'}`) : db(opts.column ?? 'id');
  const session = sessionOf(id);
  if (!session) return db`${col} = ${id}`;
  const sc = opts.alias ? db(`${opts.alias}.session_id`) : db('session_id');
  return db`(${sc} = ${session} AND ${col} = ${id})`;
}

/**
 * The sessions these IDs carry (domain/ids.ts sessionOf), or null when one of them is of the old shape.
 * A table joined to rows found by ID is filtered on them too: Citus prunes each table by its own
 * conditions, not through a join, so a statement whose every table is filtered on the sessions runs on
 * their shards alone.
 */
export function carriedSessions(ids: readonly string[]): string[] | null {
  const sessions = new Set<string>();
  for (const id of ids) {
    const s = sessionOf(id);
    if (!s) return null;
    sessions.add(s);
  }
  return [...sessions];
}

/** `rowKey` for several IDs: `session_id = ANY(their sessions) AND id = ANY(ids)`. */
export function rowKeys(db: Db, ids: readonly string[], opts: { alias?: string; column?: string } = {}) {
  const col = opts.alias ? db(`${opts.alias}.${opts.column ?? 'id'}`) : db(opts.column ?? 'id');
  const sessions = carriedSessions(ids);
  if (!sessions) return db`${col} = ${anyOf(db, ids)}`;
  const sc = opts.alias ? db(`${opts.alias}.session_id`) : db('session_id');
  return db`(${sc} = ${anyOf(db, sessions)} AND ${col} = ${anyOf(db, ids)})`;
}

/**
 * The right side of `column = …` for a set of keys: `$1` for one key (a by-ID read of one row, the
 * usual batch of a request), `ANY($1)` for several. Not only shorter: PostgreSQL estimates an array
 * parameter of a prepared statement as several rows, so its generic plan always looks dearer than a
 * custom one and it plans every execution again (measured for execution(id) with its changeset: 0.35 ms
 * of planning per 0.09 ms of execution), where with one scalar key it settles on the generic plan.
 */
export function anyOf(db: Db, keys: readonly string[]) {
  return keys.length === 1 ? db`${keys[0]}` : db`ANY(${keys as string[]})`;
}

/** `rowKey` for tombstones, which answer for sessions (their own session) and executions. */
export function tombstoneKey(db: Db, id: string, alias?: string) {
  if (isId('session', id)) {
    const p = alias ? `${alias}.` : '';
    return db`(${db(`${p}session_id`)} = ${id} AND ${db(`${p}id`)} = ${id})`;
  }
  return rowKey(db, id, { alias });
}
