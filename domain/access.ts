import type { Db } from '../db/connection.js';

export type Role = 'admin' | 'host' | 'plugin' | 'reader';
export const ROLES: Role[] = ['admin', 'host', 'plugin', 'reader'];

/** Who is asking: the bearer token's role and, when scoped, the directory prefix it may see. */
export interface Actor {
  tokenID: string;
  role: Role;
  directory: string | null;
}

export const SYSTEM: Actor = { tokenID: 'system', role: 'admin', directory: null };

/** A directory is under a prefix when it is the prefix or a path below it (`/a/b` covers `/a/b/c`, not `/a/bc`). */
export function inScope(actor: Actor, directory: string): boolean {
  const p = actor.directory;
  if (p === null) return true;
  const base = p.endsWith('/') && p.length > 1 ? p.slice(0, -1) : p;
  return directory === base || directory.startsWith(base === '/' ? '/' : base + '/');
}

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}

/** SQL condition: `column` is within the actor's directory scope (always true for unscoped tokens). */
export function scopeCondition(db: Db, actor: Actor, column: string) {
  if (actor.directory === null) return db`true`;
  const p = actor.directory;
  const base = p.endsWith('/') && p.length > 1 ? p.slice(0, -1) : p;
  const like = (base === '/' ? '' : likeEscape(base)) + '/%';
  return db`(${db(column)} = ${base} OR ${db(column)} LIKE ${like})`;
}
