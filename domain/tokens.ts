import * as crypto from 'node:crypto';
import { createHash, randomBytes } from 'node:crypto';
import { literalLimit, type Db, type Sql } from '../db/connection.js';
import { coversScope, ROLES, scopeCondition, SYSTEM, type Actor, type Role } from './access.js';
import { InvalidRequestError } from './errors.js';
import { newId } from './ids.js';
import { checkDirectory, checkText } from './validate.js';
import { ADVISORY_LOCKS } from '../db/advisory-locks.js';

/** Bearer tokens are stored as SHA-256 hashes; the secret is shown once, when created. */
export function hashToken(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

// One-shot hashing (Node >= 20.12) is several times cheaper than createHash for short inputs.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: string) => string }).hash;

/** The token's SHA-256 as hex: how an authenticated token is known without keeping its secret. */
export function tokenKey(secret: string): string {
  return oneShot ? oneShot('sha256', secret, 'hex') : hashToken(secret).toString('hex');
}

export interface CreatedToken {
  id: string;
  role: Role;
  directory: string | null;
  label: string;
  secret: string;
}

/**
 * Creates a token. `actor` is who asks (the CLI and first start: SYSTEM). A directory-scoped actor
 * creates only tokens scoped at or below its own directory: without `directory` the new token gets
 * the actor's own scope, never none; a directory outside it is an InvalidRequestError.
 */
export async function createToken(
  db: Db,
  input: { role: string; directory?: string | null; label?: string | null },
  actor: Actor = SYSTEM,
): Promise<CreatedToken> {
  if (!ROLES.includes(input.role as Role)) throw new InvalidRequestError('role', `role must be one of ${ROLES.join(', ')}.`);
  const directory = input.directory == null ? actor.directory : checkDirectory(input.directory);
  if (!coversScope(actor, directory)) {
    throw new InvalidRequestError('directory', `A token scoped to ${actor.directory} creates only tokens scoped at or below it.`);
  }
  const label = checkText(input.label ?? '', 'label', 200);
  const id = newId('token');
  const secret = 'gw_' + randomBytes(24).toString('base64url');
  await db`INSERT INTO tokens (id, hash, role, directory, label) VALUES (${id}, ${hashToken(secret)}, ${input.role}, ${directory}, ${label})`;
  return { id, role: input.role as Role, directory, label, secret };
}

/**
 * Revokes a token. A scoped actor revokes only tokens scoped at or below its directory; any other
 * reads like an unknown token (false). The token notice `{k:'t', id}` is sent by a trigger
 * (migration 010), delivered at commit.
 */
export async function revokeToken(db: Db, tokenID: string, actor: Actor = SYSTEM): Promise<boolean> {
  const rows = await db`
    UPDATE tokens SET revoked_at = now()
    WHERE id = ${tokenID} AND revoked_at IS NULL AND ${scopeCondition(db, actor, 'directory')} RETURNING id`;
  return rows.length > 0;
}

export interface TokenRow {
  id: string;
  role: Role;
  directory: string | null;
  label: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/**
 * The tokens the actor may manage, newest first (never their secrets or hashes): for a scoped actor
 * only those scoped at or below its directory. `limit + 1` rows at most (the extra one says "more").
 */
export async function listTokens(
  db: Db,
  actor: Actor,
  opts: { limit: number; after: string | null; includeRevoked: boolean },
): Promise<TokenRow[]> {
  return db<TokenRow[]>`
    SELECT id, role, directory, label, created_at, revoked_at FROM tokens
    WHERE ${scopeCondition(db, actor, 'directory')}
      ${opts.includeRevoked ? db`` : db`AND revoked_at IS NULL`}
      ${opts.after ? db`AND id < ${opts.after}` : db``}
    ORDER BY id DESC LIMIT ${literalLimit(db, opts.limit + 1)}`;
}

export async function authenticate(db: Db, secret: string | null | undefined): Promise<Actor | null> {
  if (!secret || secret.length > 200) return null;
  return findActiveToken(db, tokenKey(secret));
}

/** The actor of the active token whose hash is `key` (hex, see tokenKey), or null. */
export async function findActiveToken(db: Db, key: string): Promise<Actor | null> {
  const [t] = await db`SELECT id, role, directory FROM tokens WHERE hash = ${Buffer.from(key, 'hex')} AND revoked_at IS NULL`;
  return t ? { tokenID: t.id, role: t.role, directory: t.directory } : null;
}

export async function isTokenActive(db: Db, tokenID: string): Promise<boolean> {
  if (tokenID === 'system') return true;
  const [t] = await db`SELECT 1 FROM tokens WHERE id = ${tokenID} AND revoked_at IS NULL`;
  return !!t;
}

/**
 * At first start: when no admin token exists, create one (exactly one, even with several instances
 * starting at once) and return it so the caller can print it.
 */
export async function ensureAdminToken(sql: Sql): Promise<CreatedToken | null> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.firstAdmin})`;
    const [any] = await tx`SELECT 1 FROM tokens WHERE role = 'admin' LIMIT 1`;
    if (any) return null;
    return createToken(tx, { role: 'admin', label: 'first start' });
  });
}
