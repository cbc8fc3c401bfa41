import * as crypto from 'node:crypto';
import { createHash, randomBytes } from 'node:crypto';
import type { Db, Sql } from '../db/connection.js';
import { ROLES, type Actor, type Role } from './access.js';
import { InvalidRequestError } from './errors.js';
import { newId } from './ids.js';
import { checkDirectory, checkText } from './validate.js';

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

export async function createToken(db: Db, input: { role: string; directory?: string | null; label?: string | null }): Promise<CreatedToken> {
  if (!ROLES.includes(input.role as Role)) throw new InvalidRequestError('role', `role must be one of ${ROLES.join(', ')}.`);
  const directory = input.directory == null ? null : checkDirectory(input.directory);
  const label = checkText(input.label ?? '', 'label', 200);
  const id = newId('token');
  const secret = 'gw_' + randomBytes(24).toString('base64url');
  await db`INSERT INTO tokens (id, hash, role, directory, label) VALUES (${id}, ${hashToken(secret)}, ${input.role}, ${directory}, ${label})`;
  return { id, role: input.role as Role, directory, label, secret };
}

/** Revokes a token. The token notice `{k:'t', id}` is sent by a trigger (migration 010), delivered at commit. */
export async function revokeToken(db: Db, tokenID: string): Promise<boolean> {
  const rows = await db`UPDATE tokens SET revoked_at = now() WHERE id = ${tokenID} AND revoked_at IS NULL RETURNING id`;
  return rows.length > 0;
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
    await tx`SELECT pg_advisory_xact_lock(7424002)`;
    const [any] = await tx`SELECT 1 FROM tokens WHERE role = 'admin' LIMIT 1`;
    if (any) return null;
    return createToken(tx, { role: 'admin', label: 'first start' });
  });
}
