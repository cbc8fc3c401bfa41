import type { Db, Sql, Tx } from '../db/connection.js';
import { rowKey } from './shard.js';
import type { Actor } from './access.js';
import { noticeSql, notify, REPLY_TOPIC, type Notice, type Topic } from './notices.js';
import { findCommand, unknownCommand, type HostCommandRow } from './commands.js';
import {
  CommandTimeoutError, HostUnavailableError, InvalidRequestError, SessionNotFoundError, UnsupportedError,
  type HostCapability,
} from './errors.js';
import { newId } from './ids.js';
import type { HostRow, SessionRow } from './rows.js';
import { checkJson, LIMITS, requireId } from './validate.js';
import { Wake, type WakeBus } from './wake.js';

/**
 * Requests to a session's host that expect a reply: compactSession, generate, createSession under a host's
 * session, and sendReviewComments (PROMPT: answered by the beginExecution that carries it out). They ride
 * the durable host command channel of the seal (domain/commands.ts) as commands of kind
 * COMPACT_SESSION / GENERATE with reason PLUGIN, a `payload` and a deadline (`expires_at`).
 *
 * - The request is admitted, and its command inserted, in one transaction under the session row lock;
 *   the command's commit wakes the host's `hostCommands` subscription (notice `{k:'c', h}`).
 * - The host answers with `replyHostCommand`. The reply's transaction is the one that applies it
 *   (a compaction is recorded there, see domain/compaction.ts) and notifies `{k:'r', id}` (bus topic
 *   `replies`); whichever gateway instance holds the caller is woken by it. No sleep-polling: the
 *   waiter sleeps until a notification, the deadline, or the moment the host's lease would lapse.
 * - Exactly one of "replied" and "timed out" wins: both are single-row updates guarded by
 *   `replied_at IS NULL AND timed_out_at IS NULL` (and the reply also by `expires_at`). A reply after
 *   the caller gave up (or after expires_at, if the caller's instance died) is refused and changes
 *   nothing; the host gets CommandTimeoutError.
 * - The host disconnecting mid-command: its subscription delivers the command again when it
 *   reconnects (still pending), so a short disconnect is harmless. If it stays away, the caller gets
 *   CommandTimeoutError at its deadline, or HostUnavailableError(LEASE_EXPIRED) as soon as the host's
 *   lease lapses, whichever comes first; either way the command is closed and a late reply discarded.
 */

export const DEFAULT_HOST_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_HOST_REQUEST_MAX_TIMEOUT_MS = 120_000;
/** Bus topic of the reply notice `{ k: 'r', id: commandID }`. */
export { REPLY_TOPIC };
/** Upper bound of a reply's JSON result. */
export const REPLY_MAX_BYTES = 2 * LIMITS.textBytes;

export type RequestKind = 'COMPACT_SESSION' | 'GENERATE' | 'CREATE_SESSION' | 'PROMPT';

export interface HostRequestRow extends HostCommandRow {
  payload: any;
  reply: any;
  repliedAt: Date | null;
  timedOutAt: Date | null;
  expiresAt: Date | null;
}

/** What a wait needs of the instance's notification bus (subscriptions/bus.ts PgBus). */
export type RequestBus = WakeBus;

export interface HostRequestOptions {
  bus: RequestBus;
  maxTimeoutMs?: number;
  /** Aborted when the instance stops: the wait ends as a timeout (and the command is closed). */
  signal?: AbortSignal;
}

/** timeoutMs: an integer from 1 to the configured maximum (larger values are capped). */
export function checkTimeout(value: number | null | undefined, maxTimeoutMs = DEFAULT_HOST_REQUEST_MAX_TIMEOUT_MS): number {
  const t = value ?? Math.min(DEFAULT_HOST_REQUEST_TIMEOUT_MS, maxTimeoutMs);
  if (!Number.isInteger(t) || t < 1) throw new InvalidRequestError('timeoutMs', 'timeoutMs must be a positive integer (milliseconds).');
  return Math.min(t, maxTimeoutMs);
}

/**
 * Under the session lock: the host that serves requests of this session (the one that owns it, set
 * by beginExecution), checked to declare the capability and to hold a live lease.
 */
export async function requestHost(tx: Tx, session: SessionRow, capability: HostCapability): Promise<HostRow & { live: boolean }> {
  if (!session.hostId) throw new HostUnavailableError(session.id, null, 'NO_HOST');
  const [h] = await tx<(HostRow & { live: boolean })[]>`
    SELECT *, lease_expires_at > clock_timestamp() AS live FROM hosts WHERE id = ${session.hostId}`;
  if (!h) throw new HostUnavailableError(session.id, session.hostId, 'NO_HOST');
  const can = capability === 'COMPACT' ? h.canCompact : capability === 'GENERATE' ? h.canGenerate : h.canPrompt;
  if (!can) throw new UnsupportedError(session.id, h.id, capability);
  return h;
}

export function requireLive(session: SessionRow, h: { id: string; live: boolean }) {
  if (!h.live) throw new HostUnavailableError(session.id, h.id, 'LEASE_EXPIRED');
}

/** Inserts a request command (under the session lock); its commit wakes the host's subscription. */
export async function issueRequest(
  tx: Tx,
  r: { hostId: string; sessionId: string; kind: RequestKind; payload: unknown; timeoutMs: number },
): Promise<HostRequestRow> {
  const [{ notified: _, ...row }] = await tx<(HostRequestRow & { notified: unknown })[]>`
    WITH i AS (
      INSERT INTO host_commands (id, host_id, session_id, kind, reason, payload, expires_at)
      VALUES (${newId('command', r.sessionId)}, ${r.hostId}, ${r.sessionId}, ${r.kind}, 'PLUGIN', ${tx.json(r.payload as any)},
        clock_timestamp() + ${r.timeoutMs} * interval '1 millisecond')
      RETURNING *
    )
    SELECT i.*, ${noticeSql(tx, { k: 'c', h: r.hostId })} AS notified FROM i`;
  return row;
}

/** The reply's commit wakes whichever instance waits for it. Call inside the replying transaction. */
export async function notifyReply(tx: Tx, commandID: string) {
  await notify(tx, { k: 'r', id: commandID });
}

interface CommandState extends HostRequestRow {
  expired: boolean;
  hostLive: boolean;
  /** Milliseconds until the host's lease lapses (database clock). */
  leaseLeftMs: number;
  /** Milliseconds until the command expires (database clock). */
  expiresLeftMs: number;
}

async function readState(db: Db, commandID: string): Promise<CommandState | null> {
  const [r] = await db<CommandState[]>`
    SELECT c.*, c.expires_at <= clock_timestamp() AS expired, h.lease_expires_at > clock_timestamp() AS host_live,
      greatest(0, extract(epoch FROM h.lease_expires_at - clock_timestamp()) * 1000)::float8 AS lease_left_ms,
      greatest(0, extract(epoch FROM c.expires_at - clock_timestamp()) * 1000)::float8 AS expires_left_ms
    FROM host_commands c JOIN hosts h ON h.id = c.host_id WHERE ${rowKey(db, commandID, { alias: 'c' })}`;
  return r ?? null;
}

/**
 * Closes a pending request (the caller gave up). False when a reply won the race.
 * Writes stamp statement_timestamp(), not clock_timestamp(): the same instant for a one-statement write,
 * and not volatile, which a write distributed by Citus refuses (docs/citus.md).
 */
async function closeRequest(db: Db, commandID: string): Promise<boolean> {
  const rows = await db`
    UPDATE host_commands SET timed_out_at = statement_timestamp()
    WHERE ${rowKey(db, commandID)} AND replied_at IS NULL AND timed_out_at IS NULL RETURNING id`;
  if (!rows.length) return false;
  // (Acknowledged by a second statement, see commands.ts acknowledge. Should it not run, nothing is owed:
  // a request that timed out is no longer pending whatever acknowledged_at says.)
  await db`UPDATE host_commands SET acknowledged_at = timed_out_at WHERE ${rowKey(db, commandID)} AND acknowledged_at IS NULL`;
  return true;
}

/**
 * Waits for the request's outcome. The owner (the caller that issued it) closes it when its deadline
 * passes or the host's lease lapses; a non-owner (a compaction waiting for the one in flight) only
 * waits, until the command ends one way or another or its own deadline passes.
 * Returns the replied row, or null (non-owner only) when the command ended without a reply.
 */
export async function awaitRequest(
  sql: Sql,
  cmd: { id: string; sessionId: string },
  opts: HostRequestOptions & { deadline: number; timeoutMs: number; owner: boolean },
): Promise<HostRequestRow | null> {
  // Listen before the first read: a reply committed after it cannot be missed.
  const wake = new Wake({ bus: opts.bus, topic: REPLY_TOPIC, accept: (n) => n.k === 'r' && n.id === cmd.id, signal: opts.signal });
  const timeout = () => new CommandTimeoutError(cmd.sessionId, cmd.id, opts.timeoutMs);
  try {
    for (;;) {
      wake.take();
      const s = await readState(sql, cmd.id);
      if (!s) throw new SessionNotFoundError(cmd.sessionId); // removed with its session
      if (s.repliedAt) return s;
      const over = s.timedOutAt || s.expired;
      if (!opts.owner) {
        if (over) return null;
      } else {
        if (over) {
          await closeRequest(sql, cmd.id);
          throw timeout();
        }
        if (!s.hostLive) {
          if (await closeRequest(sql, cmd.id)) throw new HostUnavailableError(cmd.sessionId, s.hostId, 'LEASE_EXPIRED');
          continue; // the reply won
        }
      }
      const left = opts.deadline - Date.now();
      if (left <= 0 || opts.signal?.aborted) {
        if (!opts.owner) throw new CommandTimeoutError(cmd.sessionId, null, opts.timeoutMs);
        if (await closeRequest(sql, cmd.id)) throw timeout();
        continue; // the reply won
      }
      // Sleep until a notification, the deadline, the command's expiry (a non-owner then goes on even if
      // the owner's instance is gone), or the moment the lease would lapse (re-checked then: a renewal
      // moves it). Never a periodic poll.
      const until = Math.min(left, Math.ceil(s.expiresLeftMs) + 5, opts.owner ? Math.ceil(s.leaseLeftMs) + 5 : left);
      // A notice that came during the read leaves the wake set: the wait returns at once.
      await wake.wait(Math.max(1, until));
    }
  } finally {
    wake.close();
  }
}

/**
 * The host's side of a reply, shared by both kinds: finds the command (it must be this host's),
 * and, inside `tx`, marks it replied if it is still open. Throws CommandTimeoutError when the caller
 * already gave up (the reply is discarded) and InvalidRequestError when it was answered before.
 */
export async function findRequest(db: Db, actor: Actor, commandID: unknown): Promise<HostRequestRow> {
  const id = requireId('command', commandID, 'commandID');
  // Unknown, another host's and another directory's commands read alike (nothing of them, not even the kind).
  const c = await findCommand<HostRequestRow>(db, actor, id);
  if (!c) throw unknownCommand(id);
  if (c.kind !== 'COMPACT_SESSION' && c.kind !== 'GENERATE' && c.kind !== 'CREATE_SESSION' && c.kind !== 'PROMPT') {
    throw new InvalidRequestError('commandID', `Command ${id} is a ${c.kind} command: acknowledge it, there is nothing to reply.`);
  }
  return c;
}

export async function markReplied(tx: Tx, c: HostRequestRow, reply: unknown): Promise<HostRequestRow> {
  const [u] = await tx<HostRequestRow[]>`
    UPDATE host_commands SET replied_at = statement_timestamp(), reply = ${tx.json(reply as any)}
    WHERE ${rowKey(tx, c.id)} AND replied_at IS NULL AND timed_out_at IS NULL AND expires_at > statement_timestamp()
    RETURNING *`;
  if (u) {
    // Replied is acknowledged (a second statement: see commands.ts acknowledge).
    if (!u.acknowledgedAt) {
      await tx`UPDATE host_commands SET acknowledged_at = replied_at WHERE ${rowKey(tx, c.id)} AND acknowledged_at IS NULL`;
      u.acknowledgedAt = u.repliedAt;
    }
    await notifyReply(tx, c.id);
    return u;
  }
  const [now] = await tx<HostRequestRow[]>`SELECT * FROM host_commands WHERE ${rowKey(tx, c.id)}`;
  if (now?.repliedAt) throw new InvalidRequestError('commandID', `Command ${c.id} was already answered.`);
  throw new CommandTimeoutError(c.sessionId, c.id, Math.max(0, (c.expiresAt?.getTime() ?? 0) - c.createdAt.getTime()));
}

/** A reply's `error`: bounded text, or null. */
export function checkReplyError(error: unknown): string | null {
  if (error === null || error === undefined) return null;
  if (typeof error !== 'string' || error.trim() === '') throw new InvalidRequestError('error', 'error must be a non-empty string when given.');
  return error.length > 2_000 ? error.slice(0, 2_000) : error;
}

export function checkReplyResult(result: unknown): Record<string, unknown> {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    throw new InvalidRequestError('result', 'result must be a JSON object (or give error instead).');
  }
  return checkJson(result, 'result', REPLY_MAX_BYTES) as Record<string, unknown>;
}

/** For the host's hostCommand query: one of its own commands of a session in its scope, with its payload; else null. */
export async function getHostCommand(db: Db, actor: Actor, commandID: string): Promise<HostRequestRow | null> {
  return findCommand<HostRequestRow>(db, actor, commandID);
}

/** How long a closed plugin request keeps its payload and reply (default of pruneHostRequests). */
export const DEFAULT_HOST_REQUEST_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Retention of plugin requests: deletes COMPACT_SESSION and GENERATE commands closed (replied, given up,
 * or past their deadline) for longer than `olderThanMs`. Their payload (the prompt) and reply (the
 * generated text) are transport, not history: a compaction's outcome lives in `compactions`, and a
 * generation is never stored. Seal commands are kept (the seal's answer is read back from them).
 * Any instance may run it at any time; it only ever deletes rows no caller can still be waiting for.
 */
export async function pruneHostRequests(sql: Sql, olderThanMs = DEFAULT_HOST_REQUEST_RETENTION_MS): Promise<number> {
  const rows = await sql`
    DELETE FROM host_commands
    WHERE kind IN ('COMPACT_SESSION', 'GENERATE', 'CREATE_SESSION', 'PROMPT')
      AND coalesce(replied_at, timed_out_at, expires_at) < statement_timestamp() - ${olderThanMs} * interval '1 millisecond'
      AND (replied_at IS NOT NULL OR timed_out_at IS NOT NULL OR expires_at < statement_timestamp())
    RETURNING id`;
  return rows.length;
}
