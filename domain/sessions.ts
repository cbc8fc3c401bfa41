import { DatabaseLaggingError, type Db, type Sql, type Tx } from '../db/connection.js';
import { inScope, scopeCondition, type Actor } from './access.js';
import { HostUnavailableError, InvalidRequestError, SessionNotFoundError } from './errors.js';
import { requireIdle } from './busy-rule.js';
import { issueCommand } from './commands.js';
import { awaitRequest, checkReplyResult, checkTimeout, issueRequest, markReplied, type HostRequestOptions, type HostRequestRow } from './host-requests.js';
import { newId } from './ids.js';
import { tombstoneKey } from './shard.js';
import { commitEvent } from './events/commit.js';
import { lockSession, lockSessionIfPresent, openSession, shareSession, type LockedSession } from './session-lock.js';
import { GLOBAL_SCOPE, idempotencyKey, keyReused, lockKey, previousResult, rememberResult } from './idempotency.js';
import type { HostRow, SessionRow } from './rows.js';
import { checkDirectory, checkMetadata, checkText, LIMITS, optionalId, requireId } from './validate.js';

export async function getSession(db: Db, actor: Actor, sessionID: string): Promise<SessionRow | null> {
  const [s] = await db<SessionRow[]>`SELECT * FROM sessions WHERE id = ${sessionID} AND ${scopeCondition(db, actor, 'directory')}`;
  return s ?? null;
}

export interface CreateSessionInput {
  parentID?: string | null;
  title?: string | null;
  directory?: string | null;
  metadata?: unknown;
  /** Retrying with the same key answers the session the first call created (domain/idempotency.ts). */
  idempotencyKey?: string | null;
  /**
   * The host that serves the session from the start (its runtime may start the session's work), as
   * beginExecution would record it: a seal of a session that never ran then still asks that host, and
   * answers SealUnsupportedError(ADMISSION_NOT_EXCLUSIVE) if the host can start work behind the gateway.
   */
  hostID?: string | null;
  /**
   * Metadata owned by the session's host (with hostID only), e.g. the OpenCode bridge's
   * `opencode` key. Shown inside Session.metadata; updateSession never changes or drops it.
   */
  hostMetadata?: unknown;
  /** How long a createSession routed to the parent's host (CREATE_SESSION) waits for its reply. */
  timeoutMs?: number | null;
}

/** Session.metadata as readers see it: the plugin-owned object with the host-owned keys over it. */
export function visibleMetadata(s: SessionRow): Record<string, unknown> {
  return { ...((s.metadata as Record<string, unknown>) ?? {}), ...(s.hostMetadata ?? {}) };
}

/** The host of a session, when it manages sessions of its own runtime (capabilities.sessions). */
async function managingHost(tx: Tx, s: SessionRow): Promise<(HostRow & { live: boolean }) | null> {
  if (!s.hostId) return null;
  const [h] = await tx<(HostRow & { live: boolean })[]>`
    SELECT *, lease_expires_at > clock_timestamp() AS live FROM hosts WHERE id = ${s.hostId}`;
  return h?.canManageSessions ? h : null;
}

/** What a CREATE_SESSION command asks the host: create a child of `parentID` in its runtime and mirror it. */
export interface CreateSessionPayload { parentID: string; title: string; metadata: Record<string, unknown> }

/**
 * createSession. With a parent served by a host that manages sessions (the OpenCode bridge) and no
 * hostID of its own, the session is created in the host's runtime first: a CREATE_SESSION host command
 * (reply expected, like compactSession), whose reply names the gateway mirror the host created; that
 * mirror is the answer, so a plugin can prompt it in OpenCode at once. Without a live host:
 * HostUnavailableError; a host that does not answer in time: CommandTimeoutError (nothing created on
 * the gateway; the host may still create it in its runtime and mirror it later). An idempotency key is
 * remembered once the host answered: two concurrent first calls with one key may both reach the host.
 */
export async function createSession(sql: Sql, actor: Actor, input: CreateSessionInput, opts?: HostRequestOptions): Promise<SessionRow> {
  const parentID = optionalId('session', input.parentID, 'parentID');
  const title = checkText(input.title ?? '', 'title', LIMITS.title);
  const metadata = input.metadata === undefined || input.metadata === null ? {} : checkMetadata(input.metadata);
  let directory = input.directory == null ? null : checkDirectory(input.directory);
  const hostID = optionalId('host', input.hostID, 'hostID');
  const hostMetadata = input.hostMetadata == null ? {} : checkMetadata(input.hostMetadata, 'hostMetadata');
  if (!hostID && Object.keys(hostMetadata).length > 0) throw new InvalidRequestError('hostMetadata', 'hostMetadata is owned by the session\'s host: give hostID too.');
  const key = idempotencyKey('createSession', GLOBAL_SCOPE, input.idempotencyKey,
    { parentID, title, directory, metadata, hostID, ...(Object.keys(hostMetadata).length ? { hostMetadata } : {}) });
  const timeoutMs = checkTimeout(input.timeoutMs, opts?.maxTimeoutMs);
  const created = await sql.begin(async (tx): Promise<SessionRow | HostRequestRow> => {
    if (key) {
      await lockKey(tx, key);
      const previous = await previousResult(tx, key);
      if (previous) {
        const [s] = await tx<SessionRow[]>`SELECT * FROM sessions WHERE id = ${previous}`;
        if (!s) throw new SessionNotFoundError(previous); // created with this key, removed since
        if (!inScope(actor, s.directory)) throw keyReused(key);
        return s;
      }
    }
    if (parentID) {
      // FOR SHARE: a concurrent removal of the parent waits for us, or we see it gone.
      const parent = await shareSession(tx, actor, parentID);
      const host = hostID ? null : await managingHost(tx, parent);
      if (host && opts) {
        // Created in the host's runtime (a child there shares its parent's directory).
        if (directory !== null && directory !== parent.directory) {
          throw new InvalidRequestError('directory', `A session created under ${parentID} runs in its host's runtime, in the parent's directory ${parent.directory}.`);
        }
        if (!host.live) throw new HostUnavailableError(parentID, host.id, 'LEASE_EXPIRED');
        const payload: CreateSessionPayload = { parentID, title, metadata };
        return issueRequest(tx, { hostId: host.id, sessionId: parentID, kind: 'CREATE_SESSION', payload, timeoutMs });
      }
      directory ??= parent.directory;
    }
    if (directory === null) throw new InvalidRequestError('directory', 'directory is required for a session without a parent.');
    if (!inScope(actor, directory)) throw new InvalidRequestError('directory', 'directory is outside the directory scope of this token.');
    if (hostID) {
      // A plugin may name the host that will serve the session, but only a host whose own token's
      // scope covers the session's directory (it could not see the session otherwise); any other reads
      // like an unknown host. Hosts are never removed, so nothing is locked (on a cluster a row lock on
      // the hosts reference table would serialise every createSession).
      const [h] = await tx<{ id: string; scope: string | null }[]>`
        SELECT h.id, t.directory AS scope FROM hosts h LEFT JOIN tokens t ON t.id = h.token_id
        WHERE h.id = ${hostID}`;
      if (!h || !inScope({ tokenID: '', role: 'host', directory: h.scope }, directory)) throw new InvalidRequestError('hostID', `No host ${hostID} is registered for ${directory}.`);
    }
    const id = newId('session');
    const { result: s } = await commitEvent(openSession(tx, id), 'session.created', {
      parentID, title, directory, metadata, ...(hostID ? { hostID } : {}), ...(Object.keys(hostMetadata).length ? { hostMetadata } : {}),
    });
    await rememberResult(tx, key, id, null);
    return { ...s, lastSeq: Number(s.lastSeq) };
  });
  if (!('kind' in created)) return created;
  // Routed to the parent's host: wait for its reply (woken by the reply's notification).
  const r = (await awaitRequest(sql, created, { ...opts!, deadline: Date.now() + timeoutMs, timeoutMs, owner: true }))!;
  const out = r.reply?.outcome;
  if (out?.kind !== 'CREATED') throw new HostUnavailableError(parentID!, r.hostId, 'HOST_FAILED', String(out?.error ?? r.reply?.error ?? 'no usable reply'));
  const [s] = await sql<SessionRow[]>`SELECT * FROM sessions WHERE id = ${out.sessionID}`;
  if (!s) throw new SessionNotFoundError(out.sessionID); // removed right after
  if (key) {
    await sql.begin(async (tx) => {
      await lockKey(tx, key);
      if (!(await previousResult(tx, key))) await rememberResult(tx, key, s.id, null);
    });
  }
  return s;
}

/**
 * The host's reply to CREATE_SESSION: `{ sessionID }`, the gateway mirror it created (with hostID) as a
 * child of the payload's parent; or an error (the caller gets HostUnavailableError(HOST_FAILED)).
 */
export async function replySessionCreated(sql: Sql, c: HostRequestRow, result: unknown, error: string | null): Promise<HostRequestRow> {
  return sql.begin(async (tx) => {
    if (error !== null) return markReplied(tx, c, { error, outcome: { kind: 'FAILED', error } });
    const r = checkReplyResult(result);
    const sessionID = requireId('session', r.sessionID, 'result.sessionID');
    const [s] = await tx<SessionRow[]>`SELECT * FROM sessions WHERE id = ${sessionID}`;
    const p = c.payload as CreateSessionPayload;
    if (!s || s.parentId !== p.parentID || s.hostId !== c.hostId) {
      throw new InvalidRequestError('result.sessionID', `Session ${sessionID} is not a session of this host under ${p.parentID}.`);
    }
    return markReplied(tx, c, { outcome: { kind: 'CREATED', sessionID } });
  });
}

export interface UpdateSessionInput {
  sessionID: string;
  title?: string | null;
  metadata?: unknown;
}

/**
 * Title and metadata are replaced when given, left alone when omitted. `metadata` replaces the
 * plugin-owned object as a whole; the host-owned keys (hostMetadata, e.g. `opencode`) are kept: given
 * with their current value (a read-modify-write of Session.metadata) they are ignored, given with another
 * value they are refused (InvalidRequestError on `metadata.<key>`). A new title of a session whose host
 * manages sessions is sent to it as a RENAME_SESSION command in the same transaction.
 */
export async function updateSession(sql: Sql, actor: Actor, input: UpdateSessionInput): Promise<SessionRow> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  const title = input.title == null ? null : checkText(input.title, 'title', LIMITS.title);
  let metadata = input.metadata == null ? null : checkMetadata(input.metadata);
  return sql.begin(async (tx) => {
    const lock = await lockSession(tx, actor, sessionID);
    const before = lock.session;
    if (metadata) {
      const owned = before.hostMetadata ?? {};
      for (const k of Object.keys(metadata)) {
        if (!(k in owned)) continue;
        if (JSON.stringify(metadata[k]) !== JSON.stringify(owned[k])) {
          throw new InvalidRequestError(`metadata.${k}`, `metadata.${k} is owned by the session's host and cannot be changed.`);
        }
      }
      metadata = Object.fromEntries(Object.entries(metadata).filter(([k]) => !(k in owned)));
    }
    if (title !== null && title !== before.title) {
      const host = await managingHost(tx, before);
      if (host) {
        await issueCommand(tx, { hostId: host.id, sessionId: sessionID, kind: 'RENAME_SESSION', reason: 'PLUGIN', payload: { title } });
      }
    }
    const { seq, result: s } = await commitEvent(lock, 'session.updated', { title, metadata });
    return { ...s, lastSeq: seq };
  });
}

export interface RemovedSessions {
  sessionID: string;
  removedSessionIDs: string[];
}

/**
 * Removes a session and all its descendants in one transaction. Busy if any of them has a running
 * execution. Leaves tombstones for the sessions and their executions so later questions about those
 * IDs are answered as removed. The journal keeps every event, ending with session.removed.
 */
export async function removeSession(sql: Sql, actor: Actor, input: { sessionID: string }): Promise<RemovedSessions> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  return sql.begin(async (tx) => {
    const root = await lockSession(tx, actor, sessionID);
    // Lock the whole subtree, level by level. A child's creation holds FOR SHARE on its parent and records
    // the child on the parent's shard (session_children): a parent is locked here before its children are
    // read, so no new child can appear under it afterwards. Each session is locked by its own statement
    // (its own shard on a cluster), in ID order within a level.
    const locked = new Map<string, LockedSession>([[root.id, root]]);
    for (let level = [root.id]; level.length; ) {
      const children = await tx<{ childId: string }[]>`
        SELECT child_id FROM session_children WHERE parent_id = ANY(${level}) ORDER BY child_id`;
      level = [];
      for (const { childId } of children) {
        if (locked.has(childId)) continue;
        const c = await lockChild(tx, childId);
        if (!c) continue; // removed meanwhile by a removal of its own
        locked.set(childId, c);
        level.push(childId);
      }
    }
    const ids = [...locked.keys()];
    const [running] = await tx`
      SELECT id, session_id FROM executions WHERE session_id = ANY(${ids}) AND status = 'RUNNING' ORDER BY session_id LIMIT 1`;
    if (running) requireIdle(running.sessionId, { id: running.id });
    // Commands of removed sessions go with them (host_commands.session_id is not a foreign key since 012);
    // a host that manages sessions is told to remove each one in its runtime (REMOVE_SESSION, acknowledged).
    await tx`DELETE FROM host_commands WHERE session_id = ANY(${ids}) AND kind <> 'REMOVE_SESSION'`;
    const managed = await tx<{ id: string; hostId: string }[]>`
      SELECT s.id, s.host_id FROM sessions s JOIN hosts h ON h.id = s.host_id
      WHERE s.id = ANY(${ids}) AND h.can_manage_sessions ORDER BY s.id`;
    for (const m of managed) {
      await issueCommand(tx, { hostId: m.hostId, sessionId: m.id, kind: 'REMOVE_SESSION', reason: 'PLUGIN', payload: { rootSessionID: sessionID } });
    }
    // One session.removed per session, children before their parents (a parent's row goes last).
    const depth = (id: string): number => { const p = locked.get(id)?.session.parentId; return p && locked.has(p) ? 1 + depth(p) : 0; };
    for (const id of [...ids].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1))) {
      await commitEvent(locked.get(id)!, 'session.removed', { rootSessionID: sessionID });
    }
    return { sessionID, removedSessionIDs: ids };
  });
}

/** How long a removal waits for a child recorded on its parent's shard to be visible on its own (see lockChild). */
const CHILD_VISIBLE_WITHIN_MS = 10_000;

/**
 * The lock of a child session a removal found in session_children; null when the child has been removed
 * (its tombstone is there). On one Postgres the child's row is visible with its record. On a Citus cluster
 * the child's creation commits on two workers in two phases, and the parent's (with the record) may
 * commit before the child's (with its row): the child then is neither present nor removed for a moment,
 * and this waits for its row, re-reading with growing pauses. A worker that never commits its part
 * (down in the middle of the commit) fails the removal after CHILD_VISIBLE_WITHIN_MS rather than leave
 * the child behind without its parent: nothing is removed, and the client is told the database is
 * unavailable (DATABASE_UNAVAILABLE, 503), to try again.
 */
async function lockChild(tx: Tx, childID: string): Promise<LockedSession | null> {
  const deadline = Date.now() + CHILD_VISIBLE_WITHIN_MS;
  for (let pause = 2; ; pause = Math.min(pause * 2, 100)) {
    const c = await lockSessionIfPresent(tx, childID);
    if (c) return c;
    const [removed] = await tx`SELECT 1 FROM tombstones WHERE ${tombstoneKey(tx, childID)}`;
    if (removed) return null;
    if (Date.now() > deadline) {
      throw new DatabaseLaggingError(`session ${childID} is recorded as a child but its row is not visible after ${CHILD_VISIBLE_WITHIN_MS} ms (a node has not committed its part of the child's creation); try the removal again`);
    }
    await new Promise((res) => setTimeout(res, pause));
  }
}

export type SessionStatus = 'IDLE' | 'BUSY' | 'SEALING' | 'SEALED';

export function sessionStatus(s: SessionRow, hasRunningExecution: boolean): SessionStatus {
  if (s.sealedAt) return 'SEALED';
  if (s.sealRequestedAt) return 'SEALING';
  return hasRunningExecution ? 'BUSY' : 'IDLE';
}

export async function tombstone(db: Db, actor: Actor, id: string): Promise<{ id: string; kind: string; sessionId: string; removedAt: Date } | null> {
  const [t] = await db`SELECT * FROM tombstones WHERE ${tombstoneKey(db, id)} AND ${scopeCondition(db, actor, 'directory')}`;
  return (t as any) ?? null;
}
