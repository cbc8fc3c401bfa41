import type { Db, Sql, Tx } from '../db/connection.js';
import { anyOf, rowKey } from './shard.js';
import type { Actor } from './access.js';
import {
  InvalidRequestError, MessageNotFoundError, PartNotFoundError,
} from './errors.js';
import { requireIdle, runningExecution } from './busy-rule.js';
import { commitEvent } from './events/commit.js';
import type { MessageRow, PartRow, Role } from './rows.js';
import { lockSessionHolding, type LockedSession } from './session-lock.js';
import { checkText, LIMITS, requireId } from './validate.js';

/**
 * What a retracted message reads as, everywhere (Message.parts, Session.context, live events). Owned
 * by the gateway: the same fixed text for every retraction, never caller-supplied.
 */
export const RETRACTION_PLACEHOLDER = '[This message was retracted.]';

/**
 * Takes the session row lock of the message's session, then reads the message under it. A message of
 * a session outside the actor's scope is reported exactly like a missing one.
 */
async function lockMessage(tx: Tx, actor: Actor, messageID: string): Promise<{ lock: LockedSession; message: MessageRow }> {
  // Read under the lock (sent with it): the session may have been removed (with its messages) meanwhile.
  const locked = await lockSessionHolding(tx, actor, 'messages', messageID, (sessionID) =>
    tx<MessageRow[]>`SELECT * FROM messages WHERE ${rowKey(tx, messageID)} AND session_id = ${sessionID}`);
  if (!locked) throw new MessageNotFoundError(messageID);
  const [lock, [message]] = locked;
  if (!message) throw new MessageNotFoundError(messageID);
  return { lock, message };
}


export interface CorrectMessagePartInput {
  messageID: string;
  partID: string;
  text: string;
}

/**
 * Replaces the text of a TEXT part. Message and part keep their IDs; both revisions increase. One
 * transaction: session lock → checks → journal event → projection update.
 */
export async function correctMessagePart(sql: Sql, actor: Actor, input: CorrectMessagePartInput): Promise<{ message: MessageRow; part: PartRow }> {
  const messageID = requireId('message', input.messageID, 'messageID');
  const partID = requireId('part', input.partID, 'partID');
  if (typeof input.text !== 'string') throw new InvalidRequestError('text', 'text is required.');
  const text = checkText(input.text, 'text', LIMITS.textBytes, { nonEmpty: true });
  return sql.begin(async (tx) => {
    const { lock, message } = await lockMessage(tx, actor, messageID);
    if (message.retractedAt) {
      throw new InvalidRequestError('messageID', `Message ${messageID} is retracted; its parts can no longer be corrected.`);
    }
    const [part] = await tx<PartRow[]>`SELECT * FROM parts WHERE ${rowKey(tx, partID)} AND message_id = ${messageID}`;
    if (!part) throw new PartNotFoundError(messageID, partID);
    if (part.type !== 'TEXT') {
      throw new InvalidRequestError('partID', `Part ${partID} is a ${part.type} part; only TEXT parts can be corrected.`);
    }
    requireIdle(lock.id, await runningExecution(tx, lock.id));
    const { result: { message: m, part: p } } = await commitEvent(lock, 'message.part_corrected', {
      messageID, partID, text, revision: part.revision + 1, messageRevision: message.revision + 1,
    });
    return { message: m, part: p };
  });
}

export interface RetractMessageInput {
  messageID: string;
  reason?: string | null;
}

/**
 * Retracts a whole message: it keeps its ID and reads as RETRACTION_PLACEHOLDER from now on. The
 * projection drops the parts' content (their rows and IDs stay); the journal keeps the original event.
 */
export async function retractMessage(sql: Sql, actor: Actor, input: RetractMessageInput): Promise<{ message: MessageRow }> {
  const messageID = requireId('message', input.messageID, 'messageID');
  const reason = input.reason == null ? null : checkText(input.reason, 'reason', LIMITS.reason);
  return sql.begin(async (tx) => {
    const { lock, message } = await lockMessage(tx, actor, messageID);
    if (message.retractedAt) throw new InvalidRequestError('messageID', `Message ${messageID} is already retracted.`);
    requireIdle(lock.id, await runningExecution(tx, lock.id));
    const { result: m } = await commitEvent(lock, 'message.retracted', { messageID, reason, revision: message.revision + 1 });
    return { message: m };
  });
}

/** What a reader of a retracted message gets instead of its parts: one TEXT part with the placeholder. */
export function placeholderPart(m: MessageRow, parts: PartRow[]): PartRow {
  const first = parts[0];
  return {
    // The first part's ID (stable, and it never leaves the message); its revision moves on.
    id: first?.id ?? `prt_${m.id.slice(4)}`,
    messageId: m.id,
    sessionId: m.sessionId,
    index: 0,
    type: 'TEXT',
    text: RETRACTION_PLACEHOLDER,
    revision: (first?.revision ?? 1) + 1,
    correctedAt: m.retractedAt,
    tool: null, input: null, output: null, status: null, path: null, mime: null,
    externalId: first?.externalId ?? null, title: null, metadata: null, startedAt: null, endedAt: null,
  };
}

/** The parts a reader sees: the placeholder for a retracted message, the stored parts otherwise. */
export function visibleParts(m: MessageRow, parts: PartRow[]): PartRow[] {
  return m.retractedAt ? [placeholderPart(m, parts)] : parts;
}

export interface ContextMessage {
  messageID: string;
  role: Role;
  text: string;
}

/**
 * Session.context: what the next model request would see, per session, oldest first. The text of a
 * message is its TEXT parts joined by newlines (corrected text included); a retracted message is the
 * placeholder. One round trip for any number of sessions. After a compaction (domain/compaction.ts)
 * it is the latest compaction's summary message, then the messages positioned after what it summarized.
 */
export async function sessionContexts(db: Db, sessionIDs: readonly string[]): Promise<ContextMessage[][]> {
  // Every table is filtered by the sessions themselves, not only through the join: Citus prunes each table
  // by its own conditions, so the statement runs on the shards of these sessions alone.
  const sessions = anyOf(db, sessionIDs);
  const rows = await db<{ sessionId: string; messageId: string; role: Role; retracted: boolean; text: string | null }[]>`
    SELECT m.session_id, m.id AS message_id, m.role, m.retracted_at IS NOT NULL AS retracted,
      (SELECT string_agg(p.text, E'\n' ORDER BY p.index) FROM parts p
        WHERE p.session_id = m.session_id AND p.session_id = ${sessions} AND p.message_id = m.id AND p.type = 'TEXT') AS text
    FROM messages m
      -- After a compaction the context starts from its summary, then the messages after it.
      LEFT JOIN LATERAL (
        SELECT c.summary_message_id, c.through_position FROM compactions c
        WHERE c.session_id = m.session_id AND c.session_id = ${sessions} ORDER BY c.seq DESC LIMIT 1
      ) k ON true
    WHERE m.session_id = ${sessions}
      AND (k.through_position IS NULL OR m.position > k.through_position)
    ORDER BY m.session_id, (m.id = k.summary_message_id) IS NOT TRUE, m.position`;
  const by = new Map<string, ContextMessage[]>(sessionIDs.map((id) => [id, []]));
  for (const r of rows) {
    by.get(r.sessionId)?.push({ messageID: r.messageId, role: r.role, text: r.retracted ? RETRACTION_PLACEHOLDER : r.text ?? '' });
  }
  return sessionIDs.map((id) => by.get(id)!);
}
