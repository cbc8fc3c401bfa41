import { createHash } from 'node:crypto';
import type { Tx } from '../db/connection.js';
import { InvalidRequestError } from './errors.js';
import { ADVISORY_LOCKS } from '../db/advisory-locks.js';

/**
 * Idempotency keys: retrying a creation without creating twice.
 *
 * A host or plugin that crashed after sending `beginExecution` (or lost the connection before the
 * answer) cannot know whether it landed. With an `idempotencyKey` it sends the same call again and
 * gets the object the first call created, as it is now, with no second event in the journal.
 *
 * - Keys are unique per operation within a scope: the session for work inside a session
 *   (beginExecution, appendMessage, startJob), the whole gateway for createSession. A host can use
 *   its own stable IDs (an OpenCode message ID) as keys.
 * - The first call's transaction stores the key with the created object's ID; a repeat is answered in
 *   the same lock order as the first call (under the session row lock, or under a per-key advisory
 *   lock for createSession), so two concurrent calls with one key create exactly one object.
 * - A repeat is checked against the first call's defining fields (a SHA-256 fingerprint): the same key
 *   with a different request is an InvalidRequestError on `idempotencyKey`, never a silent mix-up.
 *   Boundary snapshots are not part of the fingerprint: a host that retries may have captured its
 *   boundary again; the execution keeps the boundary of the call that landed.
 * - A repeat is answered even when the same call made now would be refused (the session was sealed
 *   since, or another execution runs): the first call was admitted, and the answer says what it did.
 * - Keys of a session go with it when it is removed; createSession keys stay, so a retry after the
 *   removal answers SessionNotFoundError rather than creating the session again.
 */

export type KeyedOperation = 'createSession' | 'beginExecution' | 'appendMessage' | 'startJob' | 'addReviewComment';

export interface IdempotencyKey {
  operation: KeyedOperation;
  /** The session's ID, or 'global' (createSession). */
  scope: string;
  key: string;
  fingerprint: string;
}

export const KEY_MAX_LENGTH = 200;
export const GLOBAL_SCOPE = 'global';

/** JSON with object keys sorted, so equal requests hash equally whatever order the client sent. */
function canonical(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Validates the client's key (absent: null) and fingerprints the request's defining fields. */
export function idempotencyKey(operation: KeyedOperation, scope: string, value: unknown, request: unknown): IdempotencyKey | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidRequestError('idempotencyKey', 'idempotencyKey must be a non-empty string when given.');
  }
  if (value.length > KEY_MAX_LENGTH) throw new InvalidRequestError('idempotencyKey', `idempotencyKey is longer than ${KEY_MAX_LENGTH} characters.`);
  if (value.includes('\u0000')) throw new InvalidRequestError('idempotencyKey', 'idempotencyKey must not contain NUL characters.');
  const fingerprint = createHash('sha256').update(canonical(request)).digest('hex');
  return { operation, scope, key: value, fingerprint };
}

/** For createSession: serialises calls that carry the same key (transaction-scoped advisory lock). */
export async function lockKey(tx: Tx, k: IdempotencyKey): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.idempotentCreate}, hashtext(${`${k.scope} ${k.operation} ${k.key}`}))`;
}

/**
 * The ID the first call with this key created, or null when the key is new. Call under the lock that
 * orders the operation (session row lock, or lockKey). Throws when the key was used for a different request.
 */
export async function previousResult(tx: Tx, k: IdempotencyKey | null): Promise<string | null> {
  if (!k) return null;
  const [row] = await tx<{ fingerprint: string; resultId: string }[]>`
    SELECT fingerprint, result_id FROM idempotency_keys WHERE scope = ${k.scope} AND operation = ${k.operation} AND key = ${k.key}`;
  if (!row) return null;
  if (row.fingerprint !== k.fingerprint) throw keyReused(k);
  return row.resultId;
}

export function keyReused(k: IdempotencyKey): InvalidRequestError {
  return new InvalidRequestError('idempotencyKey', `idempotencyKey "${k.key}" was already used for a different ${k.operation} request.`);
}

/** Records the key with the created object's ID, in the creating transaction. */
export async function rememberResult(tx: Tx, k: IdempotencyKey | null, resultID: string, sessionID: string | null): Promise<void> {
  if (!k) return;
  await tx`
    INSERT INTO idempotency_keys (scope, operation, key, fingerprint, result_id, session_id)
    VALUES (${k.scope}, ${k.operation}, ${k.key}, ${k.fingerprint}, ${resultID}, ${sessionID})`;
}
