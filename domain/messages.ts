import type { Db, Sql } from '../db/connection.js';
import { rowKey } from './shard.js';
import { scopeCondition, type Actor } from './access.js';
import { InvalidRequestError, outcome } from './errors.js';
import { requireAdmissionsOpen, requireNotSealed } from './admission-rule.js';
import { newId } from './ids.js';
import { commitEvent } from './events/commit.js';
import type { MessageRow, Origin, PartRow, PartType, Role } from './rows.js';
import { lockSessionWith } from './session-lock.js';
import { idempotencyKey, previousResult, rememberResult } from './idempotency.js';
import { checkJson, checkText, LIMITS, optionalId, requireId } from './validate.js';

export interface PartInput {
  type: PartType;
  text?: string | null;
  tool?: string | null;
  input?: unknown;
  output?: string | null;
  status?: string | null;
  path?: string | null;
  mime?: string | null;
  /** Any part type, all optional: the host's own part ID, a title, metadata and timing. */
  externalID?: string | null;
  title?: string | null;
  metadata?: unknown;
  startedAt?: string | Date | null;
  endedAt?: string | Date | null;
}

export interface AppendMessageInput {
  sessionID: string;
  executionID?: string | null;
  role: Role;
  origin: Origin;
  parts: PartInput[];
  /** The host's own ID of the message (OpenCode: msg_…), where a plugin would look it up. */
  externalID?: string | null;
  /** Retrying with the same key answers the message the first call stored (domain/idempotency.ts). */
  idempotencyKey?: string | null;
}

/** Origins that are admissions (they can wake the session); a seal closes them. */
const ADMISSION_ORIGINS: Origin[] = ['PROMPT', 'SYNTHETIC'];

/** A part as checked and stored (also the `parts` of the `message.appended` event; timestamps as ISO text). */
export interface PartFields {
  index: number;
  type: PartType;
  text: string | null;
  tool: string | null;
  input: unknown;
  output: string | null;
  status: string | null;
  path: string | null;
  mime: string | null;
  externalId?: string | null;
  title?: string | null;
  metadata?: unknown;
  startedAt?: string | null;
  endedAt?: string | null;
}

/** An optional host ID (OpenCode's msg_…/prt_…/ses_…): bounded text, or null. */
export function checkExternalId(v: unknown, field: string): string | null {
  if (v == null) return null;
  if (typeof v !== 'string') throw new InvalidRequestError(field, `${field} must be a string.`);
  return checkText(v, field, 200, { nonEmpty: true });
}

/** An optional instant given as ISO 8601 text (or a Date): its ISO form, or null. */
export function checkInstant(v: unknown, field: string): string | null {
  if (v == null) return null;
  const d = v instanceof Date ? v : typeof v === 'string' ? new Date(v) : null;
  if (!d || Number.isNaN(d.getTime())) throw new InvalidRequestError(field, `${field} must be an ISO 8601 date-time.`);
  return d.toISOString();
}

function checkPartMetadata(v: unknown, field: string): unknown {
  if (typeof v !== 'object' || Array.isArray(v)) throw new InvalidRequestError(field, `${field} must be a JSON object.`);
  return checkJson(v, field, LIMITS.jsonBytes);
}

function checkPart(p: PartInput, i: number): PartFields {
  const f = (name: string) => `parts[${i}].${name}`;
  const startedAt = checkInstant(p.startedAt, f('startedAt'));
  const endedAt = checkInstant(p.endedAt, f('endedAt'));
  if (startedAt && endedAt && endedAt < startedAt) throw new InvalidRequestError(f('endedAt'), `${f('endedAt')} is before ${f('startedAt')}.`);
  const base: PartFields = {
    index: i, type: p.type, text: null, tool: null, input: null, output: null, status: null, path: null, mime: null,
    externalId: checkExternalId(p.externalID, f('externalID')),
    title: p.title == null ? null : checkText(p.title, f('title'), LIMITS.title),
    metadata: p.metadata == null ? null : checkPartMetadata(p.metadata, f('metadata')),
    startedAt, endedAt,
  };
  const onlyFields = (allowed: string[]) => {
    for (const k of ['text', 'tool', 'input', 'output', 'status', 'path', 'mime'] as const) {
      if (!allowed.includes(k) && p[k] != null) throw new InvalidRequestError(f(k), `${f(k)} is not a field of a ${p.type} part.`);
    }
  };
  switch (p.type) {
    case 'TEXT':
    case 'REASONING':
      onlyFields(['text']);
      if (p.text == null) throw new InvalidRequestError(f('text'), `${f('text')} is required for a ${p.type} part.`);
      return { ...base, text: checkText(p.text, f('text'), LIMITS.textBytes) };
    case 'TOOL':
      onlyFields(['tool', 'input', 'output', 'status']);
      if (!p.tool) throw new InvalidRequestError(f('tool'), `${f('tool')} is required for a TOOL part.`);
      return {
        ...base,
        tool: checkText(p.tool, f('tool'), 200, { nonEmpty: true }),
        input: p.input === undefined ? null : checkJson(p.input, f('input'), LIMITS.jsonBytes),
        output: p.output == null ? null : checkText(p.output, f('output'), LIMITS.textBytes),
        status: p.status == null ? null : checkText(p.status, f('status'), 100),
      };
    case 'FILE':
      onlyFields(['path', 'mime']);
      if (!p.path) throw new InvalidRequestError(f('path'), `${f('path')} is required for a FILE part.`);
      return {
        ...base,
        path: checkText(p.path, f('path'), LIMITS.directory, { nonEmpty: true }),
        mime: p.mime == null ? null : checkText(p.mime, f('mime'), 200),
      };
    default:
      throw new InvalidRequestError(f('type'), `${f('type')} must be TEXT, REASONING, TOOL or FILE.`);
  }
}

/**
 * Stores a message with its parts. PROMPT and SYNTHETIC messages are admissions and are refused once
 * the session is sealed (or sealing); model and host output of work already admitted is still taken.
 */
export async function appendMessage(sql: Sql, actor: Actor, input: AppendMessageInput): Promise<MessageRow> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  const executionID = optionalId('execution', input.executionID, 'executionID');
  if (!Array.isArray(input.parts) || input.parts.length === 0) throw new InvalidRequestError('parts', 'A message needs at least one part.');
  if (input.parts.length > LIMITS.partsPerMessage) throw new InvalidRequestError('parts', `A message has at most ${LIMITS.partsPerMessage} parts.`);
  const parts = input.parts.map(checkPart);
  const total = parts.reduce((n, p) => n + Buffer.byteLength(JSON.stringify(p), 'utf8'), 0);
  if (total > 4 * LIMITS.textBytes) throw new InvalidRequestError('parts', 'The message is larger than 4 MiB.');
  if (input.origin === 'MODEL' && input.role !== 'ASSISTANT') {
    throw new InvalidRequestError('role', 'MODEL output has the ASSISTANT role.');
  }
  const externalId = checkExternalId(input.externalID, 'externalID');
  const key = idempotencyKey('appendMessage', sessionID, input.idempotencyKey,
    { executionID, role: input.role, origin: input.origin, parts, ...(externalId ? { externalId } : {}) });
  return sql.begin(async (tx) => {
    // Both reads of the checks sent with the lock, then checked in order: a retried request, the seal, the execution.
    const [lock, [previous, execution]] = await lockSessionWith(tx, actor, sessionID, () => Promise.all([
      outcome(previousResult(tx, key)),
      executionID ? tx<{ sessionId: string }[]>`SELECT session_id FROM executions WHERE ${rowKey(tx, executionID)}`.then((r) => r[0] ?? null) : null,
    ]));
    const s = lock.session;
    if ('error' in previous) throw previous.error;
    if (previous.value) {
      const [m] = await tx<MessageRow[]>`SELECT * FROM messages WHERE ${rowKey(tx, previous.value)}`;
      return m;
    }
    if (ADMISSION_ORIGINS.includes(input.origin)) requireAdmissionsOpen(s);
    requireNotSealed(s);
    if (executionID && (!execution || execution.sessionId !== sessionID)) {
      throw new InvalidRequestError('executionID', `Execution ${executionID} is not an execution of session ${sessionID}.`);
    }
    const messageID = newId('message', sessionID);
    const stored = parts.map((p) => ({ ...p, id: newId('part', sessionID) }));
    // The key is remembered with the ID the event will carry: both writes sent together.
    const [{ result: m }] = await Promise.all([
      commitEvent(lock, 'message.appended', {
        messageID, executionID, role: input.role, origin: input.origin, parts: stored, ...(externalId ? { externalID: externalId } : {}),
      }),
      rememberResult(tx, key, messageID, sessionID),
    ]);
    return m;
  });
}

export async function getMessage(db: Db, actor: Actor, messageID: string): Promise<MessageRow | null> {
  const [m] = await db<MessageRow[]>`
    SELECT m.* FROM messages m JOIN sessions s ON s.id = m.session_id
    WHERE ${rowKey(db, messageID, { alias: 'm' })} AND ${scopeCondition(db, actor, 's.directory')}`;
  return m ?? null;
}
