import { DatabaseLaggingError, type Tx } from '../db/connection.js';
import { distributedInProcess } from '../db/cluster.js';
import { inScope, type Actor } from './access.js';
import { SessionNotFoundError } from './errors.js';
import { sessionOf } from './ids.js';
import type { SessionRow } from './rows.js';

/**
 * The session row lock, and the proof of holding it. Every state change of a session goes through
 * here first: admissions (executions, prompts, jobs), corrections, seal and removal are serialized on
 * this one lock, so there is no window between a check and a write.
 *
 * `commitEvent` and every projector take a `SessionLock`, and only this module makes one: a session's
 * history cannot be written without its lock held by the same transaction. The lock is taken by
 * `lockSession` (and its forms below, which run the same lock statement); the two handles made without
 * the statement are for rows no other transaction can see: a session its own transaction creates
 * (`openSession`), and replay's scratch tables (`replayLock`).
 */
const MINT: unique symbol = Symbol('session lock');

export class SessionLock {
  constructor(key: typeof MINT, readonly tx: Tx, readonly id: string) {
    if (key !== MINT) throw new Error('a SessionLock is made only by domain/session-lock.ts');
  }
}

/** A session locked for update: the handle, and the session's row as the lock statement read it. */
export class LockedSession extends SessionLock {
  constructor(key: typeof MINT, tx: Tx, readonly session: SessionRow) {
    super(key, tx, session.id);
  }
}

/**
 * On a cluster, how long a session's transaction waits for its row lock (ms) before it answers
 * DATABASE_UNAVAILABLE (503, to try again). A session's transactions hold the lock for milliseconds; what holds
 * it longer is a transaction a worker prepared and could not commit (it restarted between PREPARE and COMMIT
 * PREPARED of a child session's creation or a removal, the session transactions that span two workers), which
 * keeps its locks until Citus' recovery (`citus.recover_2pc_interval`, 60 s by default): a write must not hang for
 * that without an answer. (On one PostgreSQL nothing is left prepared: no bound.)
 */
export const SESSION_LOCK_WAIT_MS = 5_000;
const bounded = new WeakSet<Tx>();

function lockStatement(tx: Tx, sessionID: string, mode: 'update' | 'share' | 'skip-locked') {
  if (mode !== 'skip-locked' && distributedInProcess() && !bounded.has(tx)) {
    // `SET LOCAL` reaches the workers (distribute sets citus.propagate_set_commands); sent ahead of the lock.
    bounded.add(tx);
    tx.unsafe(`SET LOCAL lock_timeout = ${SESSION_LOCK_WAIT_MS}`).execute().catch(() => {});
  }
  switch (mode) {
    case 'update': return tx<SessionRow[]>`SELECT * FROM sessions WHERE id = ${sessionID} FOR UPDATE`;
    case 'share': return tx<SessionRow[]>`SELECT * FROM sessions WHERE id = ${sessionID} FOR SHARE`;
    case 'skip-locked': return tx<SessionRow[]>`SELECT * FROM sessions WHERE id = ${sessionID} FOR UPDATE SKIP LOCKED`;
  }
}

/** The session the lock statement found, if the actor may see it. */
function lockedIn(tx: Tx, actor: Actor, sessionID: string, rows: SessionRow[]): LockedSession {
  const s = rows[0];
  if (!s || !inScope(actor, s.directory)) throw new SessionNotFoundError(sessionID);
  return new LockedSession(MINT, tx, s);
}

/**
 * Takes the session's row lock for the rest of `tx`. A session outside the actor's directory scope is
 * reported exactly like a missing one (SessionNotFoundError).
 */
export async function lockSession(tx: Tx, actor: Actor, sessionID: string): Promise<LockedSession> {
  return lockedIn(tx, actor, sessionID, await lockWait(lockStatement(tx, sessionID, 'update')));
}

/** The lock statement's answer; its lock wait past SESSION_LOCK_WAIT_MS (55P03) is the database unavailable for now. */
async function lockWait<T>(statement: PromiseLike<T>): Promise<T> {
  try {
    return await statement;
  } catch (e) {
    if ((e as { code?: unknown })?.code !== '55P03') throw e;
    throw new DatabaseLaggingError(`a session's row lock was not granted within ${SESSION_LOCK_WAIT_MS} ms`, { cause: e });
  }
}

/**
 * A share lock on the session for the rest of `tx`: nothing of the session changes and it is not
 * removed until `tx` ends, while others holding it share it too. It gives no handle: nothing may be
 * committed to a session under a share lock.
 */
export async function shareSession(tx: Tx, actor: Actor, sessionID: string): Promise<SessionRow> {
  const rows = await lockWait(lockStatement(tx, sessionID, 'share'));
  const s = rows[0];
  if (!s || !inScope(actor, s.directory)) throw new SessionNotFoundError(sessionID);
  return s;
}

/**
 * The lock of a session the instance works on for itself (the lease sweep, retention, a host's
 * acknowledgement, a removal's subtree): no directory scope, and null when the session is gone. With
 * `skipLocked` a session locked by someone else is null too (a sweep takes it up on its next pass).
 */
export async function lockSessionIfPresent(tx: Tx, sessionID: string, opts: { skipLocked?: boolean } = {}): Promise<LockedSession | null> {
  const [s] = await lockWait(lockStatement(tx, sessionID, opts.skipLocked ? 'skip-locked' : 'update'));
  return s ? new LockedSession(MINT, tx, s) : null;
}

/**
 * lockSession, with the statements `reads` sends for the transaction's checks sent right behind the
 * lock statement: one wait for the server instead of two. A connection runs its statements one after
 * another, and in read committed each takes its snapshot when it starts, so they run once the lock is
 * granted and see what the holder before committed, exactly as if sent after the answer. `reads` must
 * only read: when the lock is refused (no such session within the actor's scope, or the statement
 * failed), that refusal is the answer and what the reads found is dropped.
 */
export async function lockSessionWith<T>(tx: Tx, actor: Actor, sessionID: string, reads: () => Promise<T>): Promise<[LockedSession, T]> {
  // The lock statement is handed to the connection before `reads` starts any statement. postgres.js
  // hands a query over a microtask after it is first executed or awaited, and `await` on it (a promise
  // of its own class) gets to that later than a statement `reads` executes at once, which would then
  // run before the lock (seen: three concurrent handoffs of one job all reading it as not handed off;
  // test/executions.test.ts 'reads under the session lock').
  const lock = lockStatement(tx, sessionID, 'update').execute();
  const read = reads();
  read.catch(() => {}); // after a refused lock its failure (the transaction aborted) says nothing more
  return [lockedIn(tx, actor, sessionID, await lockWait(lock)), await read];
}

/**
 * Locks the session holding the row `id` of `table` (as lockSessionWith, with `reads` given that
 * session's ID) and answers it with what the reads found; null when no session within the actor's
 * scope holds the row. The session is the one the ID carries (domain/ids.ts sessionOf), so nothing is
 * read before the lock; an ID of the old shape is looked up first. Whether the row exists is for the
 * reads to find (after the lock: it may have changed meanwhile); an ID carrying a session that does not
 * hold it locks that session for nothing, and is answered as not found all the same.
 */
export async function lockSessionHolding<T>(tx: Tx, actor: Actor, table: 'executions' | 'jobs' | 'messages', id: string,
  reads: (sessionID: string) => Promise<T>): Promise<[LockedSession, T] | null> {
  let sessionID = sessionOf(id);
  if (!sessionID) {
    const [found] = await tx<{ sessionId: string }[]>`SELECT session_id FROM ${tx(table)} WHERE id = ${id}`;
    if (!found) return null;
    sessionID = found.sessionId;
  }
  const holder = sessionID;
  try {
    return await lockSessionWith(tx, actor, holder, () => reads(holder));
  } catch (e) {
    if (e instanceof SessionNotFoundError) return null;
    throw e;
  }
}

/**
 * The handle of a session `tx` creates (its first event, `session.created`, inserts the row): until
 * `tx` commits no other transaction sees the session, so `tx` is its only writer.
 */
export function openSession(tx: Tx, sessionID: string): SessionLock {
  return new SessionLock(MINT, tx, sessionID);
}

/**
 * The handle replay folds a session's journal with: its tables are a scratch schema of its own
 * transaction (domain/replay.ts), which no other transaction writes.
 */
export function replayLock(tx: Tx, sessionID: string): SessionLock {
  return new SessionLock(MINT, tx, sessionID);
}
