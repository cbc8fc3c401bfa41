import type { Sql, Tx } from '../db/connection.js';
import { rowKey, rowKeys } from './shard.js';
import { SYSTEM, type Actor } from './access.js';
import { sessionContexts, type ContextMessage } from './corrections.js';
import { HostUnavailableError, InvalidRequestError, SessionNotFoundError, SessionSealedError } from './errors.js';
import { admissionsClosed, requireAdmissionsOpen } from './admission-rule.js';
import { requireIdle, runningExecution } from './busy-rule.js';
import {
  awaitRequest, checkReplyError, checkReplyResult, checkTimeout, findRequest, issueRequest, markReplied, requestHost,
  requireLive, type HostRequestOptions, type HostRequestRow,
} from './host-requests.js';
import { newId } from './ids.js';
import { commitEvent } from './events/commit.js';
import type { MessageRow, SessionRow } from './rows.js';
import { lockSession, type LockedSession } from './session-lock.js';
import { checkText, LIMITS, requireId } from './validate.js';

/**
 * compactSession: the session's host summarizes Session.context with its model; the gateway
 * records the summary as a message (role ASSISTANT, origin HOST) and the compaction as the journal
 * event `session.compacted`, in the transaction that accepts the host's reply. From then on
 * Session.context is [summary, messages appended after the compacted ones...].
 *
 * Admission (one transaction under the session row lock, like every admission): not found, sealed
 * (seal requested), busy (an execution is RUNNING), then the host: none owns the session or its lease
 * lapsed (HostUnavailableError), it did not declare `compact` (UnsupportedError).
 *
 * Two compactions at once: they are serialized. A request made while another compaction of the session
 * is in flight waits for that one to end (woken by its reply notice), then compacts what is there then
 * (the first summary and anything newer); so each caller gets a compaction that started after its call.
 * If its own deadline passes while waiting, it gets CommandTimeoutError and changed nothing.
 *
 * Messages appended while the host summarizes (an execution may start meanwhile) are not part of the
 * summary and stay after it. A correction or retraction of a summarized message committed meanwhile
 * makes the summary stale: the reply is refused (nothing recorded) and the gateway asks again with the
 * current context, within the same deadline. A seal requested meanwhile refuses the reply too
 * (SessionSealedError to the caller).
 */

export interface SessionCompacted {
  session: SessionRow;
  summary: MessageRow;
  compactedMessages: number;
  commandID: string;
}

interface CompactPayload {
  context: ContextMessage[];
  /** The highest position among the summarized messages: the new context keeps what comes after. */
  throughPosition: number;
  /** Revisions of the summarized messages when the request was made (the staleness check). */
  revisions: Record<string, number>;
  /** seq of the latest compaction then (0: none). */
  afterCompactionSeq: number;
}

type Admission = { kind: 'issued'; command: HostRequestRow } | { kind: 'wait'; command: HostRequestRow };

async function admit(sql: Sql, actor: Actor, sessionID: string, timeoutMs: number): Promise<Admission> {
  return sql.begin(async (tx) => {
    const s = (await lockSession(tx, actor, sessionID)).session;
    requireAdmissionsOpen(s);
    requireIdle(sessionID, await runningExecution(tx, sessionID));
    const [inFlight] = await tx<HostRequestRow[]>`
      SELECT * FROM host_commands WHERE session_id = ${sessionID} AND kind = 'COMPACT_SESSION'
        AND replied_at IS NULL AND timed_out_at IS NULL AND expires_at IS NOT NULL AND expires_at > clock_timestamp()
      ORDER BY id LIMIT 1`;
    if (inFlight) return { kind: 'wait', command: inFlight };
    const h = await requestHost(tx, s, 'COMPACT');
    requireLive(s, h);
    const [context] = await sessionContexts(tx, [sessionID]);
    if (context.length === 0) throw new InvalidRequestError('sessionID', `Session ${sessionID} has no messages to compact.`);
    const ids = context.map((m) => m.messageID);
    const rows = await tx<{ id: string; position: number; revision: number }[]>`
      SELECT id, position, revision FROM messages WHERE ${rowKeys(tx, ids)}`;
    const [last] = await tx<{ seq: number }[]>`SELECT coalesce(max(seq), 0)::int AS seq FROM compactions WHERE session_id = ${sessionID}`;
    const payload: CompactPayload = {
      context,
      throughPosition: Math.max(...rows.map((r) => Number(r.position))),
      revisions: Object.fromEntries(rows.map((r) => [r.id, r.revision])),
      afterCompactionSeq: Number(last.seq),
    };
    const command = await issueRequest(tx, { hostId: h.id, sessionId: sessionID, kind: 'COMPACT_SESSION', payload, timeoutMs });
    return { kind: 'issued', command };
  });
}

export async function compactSession(sql: Sql, actor: Actor, input: { sessionID: string; timeoutMs?: number | null }, opts: HostRequestOptions): Promise<SessionCompacted> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  const timeoutMs = checkTimeout(input.timeoutMs, opts.maxTimeoutMs);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const a = await admit(sql, actor, sessionID, Math.max(1, deadline - Date.now()));
    if (a.kind === 'wait') {
      // Another compaction is in flight: wait for it to end, then start ours.
      await awaitRequest(sql, a.command, { ...opts, deadline, timeoutMs, owner: false });
      continue;
    }
    const r = (await awaitRequest(sql, a.command, { ...opts, deadline, timeoutMs, owner: true }))!;
    const outcome = r.reply?.outcome;
    switch (outcome?.kind) {
      case 'COMPACTED': {
        const [s] = await sql<SessionRow[]>`SELECT * FROM sessions WHERE id = ${sessionID}`;
        const [m] = await sql<MessageRow[]>`SELECT * FROM messages WHERE ${rowKey(sql, outcome.summaryMessageID)}`;
        if (!s || !m) throw new SessionNotFoundError(sessionID); // removed right after
        return { session: s, summary: m, compactedMessages: outcome.compactedMessages, commandID: r.id };
      }
      case 'SEALED':
        throw new SessionSealedError(sessionID);
      case 'STALE':
        if (Date.now() < deadline) continue; // ask again with the current context
        throw new HostUnavailableError(sessionID, r.hostId, 'HOST_FAILED', 'the context changed while the host was summarizing it');
      default:
        throw new HostUnavailableError(sessionID, r.hostId, 'HOST_FAILED', String(outcome?.error ?? r.reply?.error ?? 'no usable reply'));
    }
  }
}

/**
 * The host's reply to a COMPACT_SESSION command: `{ summary }` or an error. Applied in one transaction
 * under the session lock (taken before the command row: the lock order of every session change).
 */
export async function replyCompaction(sql: Sql, actor: Actor, c: HostRequestRow, result: unknown, error: string | null): Promise<HostRequestRow> {
  let summary: string | null = null;
  if (error === null) {
    const r = checkReplyResult(result);
    if (typeof r.summary !== 'string') throw new InvalidRequestError('result.summary', 'result.summary (a string) is required.');
    summary = checkText(r.summary, 'result.summary', LIMITS.textBytes, { nonEmpty: true });
  }
  return sql.begin(async (tx) => {
    let lock: LockedSession;
    try {
      lock = await lockSession(tx, SYSTEM, c.sessionId);
    } catch (e) {
      if (e instanceof SessionNotFoundError) throw new InvalidRequestError('commandID', `No command ${c.id} is known.`);
      throw e;
    }
    const s = lock.session;
    if (summary === null) return markReplied(tx, c, { error, outcome: { kind: 'FAILED', error } });
    const p = c.payload as CompactPayload;
    if (admissionsClosed(s)) return markReplied(tx, c, { outcome: { kind: 'SEALED' } });
    if (await isStale(tx, c.sessionId, p)) return markReplied(tx, c, { outcome: { kind: 'STALE' } });
    // Claim the command first: if the caller already gave up, nothing below happens.
    const messageID = newId('message', c.sessionId);
    const compactedMessages = p.context.length;
    const replied = await markReplied(tx, c, { outcome: { kind: 'COMPACTED', summaryMessageID: messageID, compactedMessages } });
    const parts = [{
      index: 0, type: 'TEXT' as const, text: summary, tool: null, input: null, output: null, status: null, path: null, mime: null,
      id: newId('part', c.sessionId),
    }];
    await commitEvent(lock, 'message.appended', { messageID, executionID: null, role: 'ASSISTANT', origin: 'HOST', parts });
    await commitEvent(lock, 'session.compacted', {
      // messageID: the summary, so sessionEvents subscribers can read it from the event.
      commandID: c.id, hostID: c.hostId, messageID, summaryMessageID: messageID, throughPosition: p.throughPosition,
      compactedMessages, compactedMessageIDs: p.context.map((m) => m.messageID),
    });
    return replied;
  });
}

/** Did a summarized message change (corrected, retracted, removed) or another compaction land since the request? */
async function isStale(tx: Tx, sessionID: string, p: CompactPayload): Promise<boolean> {
  const ids = Object.keys(p.revisions);
  const rows = await tx<{ id: string; revision: number }[]>`SELECT id, revision FROM messages WHERE ${rowKeys(tx, ids)}`;
  if (rows.length !== ids.length || rows.some((r) => p.revisions[r.id] !== r.revision)) return true;
  const [last] = await tx<{ seq: number }[]>`SELECT coalesce(max(seq), 0)::int AS seq FROM compactions WHERE session_id = ${sessionID}`;
  return Number(last.seq) !== p.afterCompactionSeq;
}

export { findRequest, checkReplyError };
