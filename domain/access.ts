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

function baseOf(prefix: string): string {
  return prefix.endsWith('/') && prefix.length > 1 ? prefix.slice(0, -1) : prefix;
}

/** A directory is under a prefix when it is the prefix or a path below it (`/a/b` covers `/a/b/c`, not `/a/bc`). */
export function inScope(actor: Actor, directory: string): boolean {
  const p = actor.directory;
  if (p === null) return true;
  const base = baseOf(p);
  return directory === base || directory.startsWith(base === '/' ? '/' : base + '/');
}

/**
 * Instance-wide powers (the changeset policy, acting for any host) belong to unscoped admins only:
 * a directory-scoped admin is an administrator of its directory, not of the instance.
 */
export function isUnscopedAdmin(actor: Actor): boolean {
  return actor.role === 'admin' && actor.directory === null;
}

/**
 * A token scope (`null`: unscoped) the actor may create, list or revoke: any for an unscoped actor;
 * for a scoped one only scopes at or below its own (never an unscoped token).
 */
export function coversScope(actor: Actor, directory: string | null): boolean {
  if (actor.directory === null) return true;
  return directory !== null && inScope(actor, directory);
}

/** A host the actor may act for: one its own token registered; an unscoped admin may act for any. */
export function ownsHost(actor: Actor, host: { tokenId: string | null }): boolean {
  return isUnscopedAdmin(actor) || host.tokenId === actor.tokenID;
}

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}

/** SQL condition: `column` is within the actor's directory scope (always true for unscoped tokens; never true for a NULL column). */
export function scopeCondition(db: Db, actor: Actor, column: string) {
  if (actor.directory === null) return db`true`;
  const base = baseOf(actor.directory);
  const like = (base === '/' ? '' : likeEscape(base)) + '/%';
  return db`(${db(column)} = ${base} OR ${db(column)} LIKE ${like})`;
}
