import type { Db, Sql, Tx } from '../db/connection.js';
import { scopeCondition, type Actor, type Role } from './access.js';
import { requireAdmissionsOpen } from './admission-rule.js';
import { requireIdle, runningExecution } from './busy-rule.js';
import { changesetFilesAt, changesetRows, hasFiles, type BoundedExecution } from './changesets.js';
import {
  CommandTimeoutError, CommentAnchorError, CommentNotFoundError, ExecutionNotFoundError, HostUnavailableError, InvalidRequestError,
  SessionBusyError, SessionSealedError,
} from './errors.js';
import { commitEvent } from './events/commit.js';
import {
  awaitRequest, checkReplyResult, checkTimeout, issueRequest, markReplied, requestHost, requireLive,
  type HostRequestOptions, type HostRequestRow,
} from './host-requests.js';
import { idempotencyKey, previousResult, rememberResult } from './idempotency.js';
import { isId, newId, sessionOf } from './ids.js';
import { formatReviewPrompt } from './review-prompt.js';
import type { ExecutionRow } from './rows.js';
import { lockSessionWith, type LockedSession } from './session-lock.js';
import { rowKey, rowKeys } from './shard.js';
import {
  driftPair, freezeSnapshotChangeset, rangePair, snapshotChangesetFilesAt, snapshotChangesetRows, type SnapshotChangesetFile, type SnapshotPair,
} from './snapshot-changes.js';
import { checkText, requireId } from './validate.js';
import { SessionNotFoundError } from './errors.js';

/**
 * Review comments (issue 50): a reviewer's comment on a line, a file or the whole of a changeset (an
 * execution's own, a range's `Session.changes(from, to)`, or a drift `Execution.driftBefore`), kept with
 * its author (the token and its role), its anchor and the quoted lines of the anchor as the changeset's
 * stored patch showed them, and its state (OPEN, RESOLVED). A set of open comments is sent to the session's
 * agent as its next prompt (sendReviewComments: a PROMPT host command); the execution the host starts for it
 * (beginExecution with the command's ID) answers them.
 *
 * Journal-owned: every change is an event (review_comment.added / .resolved / .reopened, review_comments.sent
 * / .answered) committed under the session lock, projected into `review_comments`, rebuilt by replay.
 * Allowed on a sealed session (a review after the seal is normal); only sending is refused there.
 */

export type ChangesetKind = 'EXECUTION' | 'RANGE' | 'DRIFT';
export type CommentSide = 'OLD' | 'NEW';
export type CommentState = 'OPEN' | 'RESOLVED';

export interface ReviewCommentRow {
  id: string;
  sessionId: string;
  authorTokenId: string | null;
  authorRole: Role;
  body: string;
  changesetKind: ChangesetKind;
  executionId: string;
  fromExecutionId: string | null;
  path: string | null;
  side: CommentSide | null;
  line: number | null;
  startLine: number | null;
  quote: string | null;
  state: CommentState;
  createdAt: Date;
  updatedAt: Date;
  resolvedAt: Date | null;
  sentCommandId: string | null;
  sentAt: Date | null;
  answeredByExecutionId: string | null;
}

/** The changeset a comment is on: its kind and executions (RANGE: from `fromExecutionID` to `executionID`). */
export interface ChangesetKey { kind: ChangesetKind; executionID: string; fromExecutionID: string | null }

/** Upper bound of a comment's body (bytes of UTF-8). */
export const COMMENT_BODY_MAX_BYTES = 64 * 1024;
/** Upper bound of the quoted lines kept with a comment (a longer quote is cut, with a marker). */
export const COMMENT_QUOTE_MAX_BYTES = 16 * 1024;
/** How many comments one send may carry. */
export const SEND_MAX_COMMENTS = 100;

// ---- the lines a patch shows ------------------------------------------------------------------------

/** The lines of a file's unified diff by side: line number (1-based, in that side's file) to its text. */
export interface PatchLines { OLD: Map<number, string>; NEW: Map<number, string> }

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * The lines a unified diff shows, on each side: a context line on both, a removed line on OLD, an added one on
 * NEW. Read by the hunks' own counts (a content line that starts with `---` is not a header).
 */
export function patchLines(patch: string): PatchLines {
  const out: PatchLines = { OLD: new Map(), NEW: new Map() };
  const lines = patch.split('\n');
  let i = 0;
  while (i < lines.length) {
    const m = HUNK.exec(lines[i++]);
    if (!m) continue;
    let oldNo = Number(m[1]);
    let newNo = Number(m[3]);
    let oldLeft = m[2] === undefined ? 1 : Number(m[2]);
    let newLeft = m[4] === undefined ? 1 : Number(m[4]);
    while ((oldLeft > 0 || newLeft > 0) && i < lines.length) {
      const l = lines[i++];
      const text = l.slice(1);
      if (l.startsWith('\\')) continue; // "\ No newline at end of file"
      if (l.startsWith('-')) { out.OLD.set(oldNo++, text); oldLeft--; }
      else if (l.startsWith('+')) { out.NEW.set(newNo++, text); newLeft--; }
      else { out.OLD.set(oldNo++, text); out.NEW.set(newNo++, text); oldLeft--; newLeft--; }
    }
  }
  return out;
}

// ---- reads --------------------------------------------------------------------------------------------

/** A comment within the caller's scope, or null (unknown and another directory's read alike). */
export async function getReviewComment(db: Db, actor: Actor, commentID: string): Promise<ReviewCommentRow | null> {
  if (!isId('comment', commentID)) return null;
  const [c] = await db<ReviewCommentRow[]>`
    SELECT c.* FROM review_comments c JOIN sessions s ON s.id = c.session_id
    WHERE ${rowKey(db, commentID, { alias: 'c' })} AND ${scopeCondition(db, actor, 's.directory')}`;
  return c ?? null;
}

/** Comments by ID (within the caller's scope), in the order given; missing ones left out. */
export async function reviewCommentsById(db: Db, actor: Actor, ids: readonly string[]): Promise<ReviewCommentRow[]> {
  const valid = ids.filter((id) => isId('comment', id));
  if (!valid.length) return [];
  const rows = await db<ReviewCommentRow[]>`
    SELECT c.* FROM review_comments c JOIN sessions s ON s.id = c.session_id
    WHERE ${rowKeys(db, valid, { alias: 'c' })} AND ${scopeCondition(db, actor, 's.directory')}`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return valid.map((id) => byId.get(id)).filter((r): r is ReviewCommentRow => !!r);
}

/** The order of Changeset.comments: by path (the whole changeset's first), line (a file's first), then time. */
export const CHANGESET_ORDER = 'path NULLS FIRST, line NULLS FIRST, created_at, id';

// ---- addReviewComment -------------------------------------------------------------------------------

export interface AddReviewCommentInput {
  sessionID: string;
  changeset: { kind: ChangesetKind; executionID: string; fromExecutionID?: string | null };
  path?: string | null;
  side?: CommentSide | null;
  line?: number | null;
  startLine?: number | null;
  body: string;
  idempotencyKey?: string | null;
}

const KINDS: readonly ChangesetKind[] = ['EXECUTION', 'RANGE', 'DRIFT'];

async function scopedExecution(db: Db, actor: Actor, executionID: string): Promise<BoundedExecution> {
  const [e] = await db<BoundedExecution[]>`
    SELECT e.* FROM executions e JOIN sessions s ON s.id = e.session_id
    WHERE ${rowKey(db, executionID, { alias: 'e' })} AND ${scopeCondition(db, actor, 's.directory')}`;
  if (!e) throw new ExecutionNotFoundError(executionID);
  return e;
}

function notSettled(e: ExecutionRow): InvalidRequestError {
  return new InvalidRequestError('changeset.executionID', `Execution ${e.id} is still running: its changeset does not exist yet.`);
}

/**
 * The changeset a new comment names, checked to exist in the session (and normalized: a range from an
 * execution to itself is that execution's own changeset), with a way to read one of its files: the file's
 * row (null: the path is not in it) or `unreadable` with why its files cannot be read (coverage unavailable,
 * expired).
 */
interface Target {
  key: ChangesetKey;
  file(path: string): Promise<{ found: { binary: boolean; patch: string | null } | null } | { unreadable: string }>;
}

async function resolveTarget(sql: Sql, actor: Actor, sessionID: string, input: AddReviewCommentInput['changeset']): Promise<Target> {
  if (!input || typeof input !== 'object') throw new InvalidRequestError('changeset', 'changeset { kind, executionID } is required.');
  if (!KINDS.includes(input.kind)) throw new InvalidRequestError('changeset.kind', `changeset.kind must be one of ${KINDS.join(', ')}.`);
  const executionID = requireId('execution', input.executionID, 'changeset.executionID');
  let kind = input.kind;
  let fromID: string | null = null;
  if (kind === 'RANGE') {
    fromID = requireId('execution', input.fromExecutionID, 'changeset.fromExecutionID');
    if (fromID === executionID) { kind = 'EXECUTION'; fromID = null; }
  } else if (input.fromExecutionID != null) {
    throw new InvalidRequestError('changeset.fromExecutionID', 'fromExecutionID names the start of a RANGE changeset only.');
  }
  const e = await scopedExecution(sql, actor, executionID);
  if (e.sessionId !== sessionID) throw new InvalidRequestError('changeset.executionID', `Execution ${executionID} belongs to another session than ${sessionID}.`);
  if (kind === 'EXECUTION') {
    if (e.status === 'RUNNING') throw notSettled(e);
    return {
      key: { kind, executionID, fromExecutionID: null },
      file: async (path) => {
        const [row] = await changesetRows(sql, [executionID]);
        if (!hasFiles(row ?? null)) return { unreadable: row?.prunedAt ? 'its changeset was pruned by retention' : 'its changeset\'s coverage is unavailable' };
        const [f] = await changesetFilesAt(sql, [{ executionId: executionID, path }]);
        return { found: f ? { binary: f.binary, patch: f.patch } : null };
      },
    };
  }
  let pair: ReturnType<typeof rangePair>;
  if (kind === 'RANGE') {
    const from = await scopedExecution(sql, actor, fromID!);
    if (from.sessionId !== sessionID) throw new InvalidRequestError('changeset.fromExecutionID', `Execution ${fromID} belongs to another session than ${sessionID}.`);
    if (from.sequence > e.sequence) {
      throw new InvalidRequestError('changeset.fromExecutionID', `Execution ${fromID} (sequence ${from.sequence}) comes after execution ${executionID} (sequence ${e.sequence}): a range goes from an execution to the same or a later one.`);
    }
    pair = rangePair(from, e);
  } else {
    const [previous] = e.sequence > 1 ? await sql<BoundedExecution[]>`
      SELECT * FROM executions WHERE session_id = ${sessionID} AND sequence = ${e.sequence - 1}` : [];
    if (!previous) throw new InvalidRequestError('changeset.executionID', `Execution ${executionID} is the first of its session: it has no drift before it.`);
    pair = driftPair(previous, e);
  }
  if (pair.kind === 'unavailable' && pair.reason === 'NOT_SETTLED') throw new InvalidRequestError('changeset.executionID', pair.detail);
  return {
    key: { kind, executionID, fromExecutionID: fromID },
    file: async (path) => {
      if (pair.kind === 'unavailable') return { unreadable: `its coverage is unavailable (${pair.detail})` };
      const p: SnapshotPair = pair.pair;
      const [stored] = await snapshotChangesetRows(sql, [p]);
      let f: SnapshotChangesetFile | undefined;
      if (stored) {
        [f] = await snapshotChangesetFilesAt(sql, [{ ...p, path }]);
      } else {
        // Never read yet: this first read stores it (once, as any reader would).
        const frozen = await freezeSnapshotChangeset(sql, p);
        if (!frozen) return { unreadable: 'a boundary snapshot was pruned by retention' };
        f = frozen.files.find((x) => x.path === path);
      }
      return { found: f ? { binary: f.binary, patch: f.patch ?? null } : null };
    },
  };
}

/** The anchor's quote, checked against the file's patch (CommentAnchorError when the lines are not shown). */
async function anchorOf(target: Target, path: string | null, side: CommentSide | null, line: number | null, startLine: number | null): Promise<string | null> {
  if (path === null) return null;
  const read = await target.file(path);
  if ('unreadable' in read) throw new CommentAnchorError('UNKNOWN_PATH', path, line, `The files of this changeset cannot be read: ${read.unreadable}.`);
  if (!read.found) throw new CommentAnchorError('UNKNOWN_PATH', path, line, `${path} is not a file of this changeset.`);
  if (line === null) return null;
  const { patch, binary } = read.found;
  if (patch === null || binary) {
    throw new CommentAnchorError('NO_PATCH', path, line, `${path} has no patch in this changeset (${binary ? 'a binary file' : 'left out: see the coverage omissions'}): comment on the whole file instead.`);
  }
  const shown = patchLines(patch)[side!];
  const lines: string[] = [];
  for (let n = startLine ?? line; n <= line; n++) {
    const text = shown.get(n);
    if (text === undefined) {
      throw new CommentAnchorError('LINE_OUTSIDE_PATCH', path, n, `Line ${n} of ${path} (${side!.toLowerCase()} side) is not shown in the changeset's patch: comment on a line of a hunk, or on the whole file.`);
    }
    lines.push(text);
  }
  let quote = lines.join('\n');
  if (Buffer.byteLength(quote, 'utf8') > COMMENT_QUOTE_MAX_BYTES) quote = Buffer.from(quote, 'utf8').subarray(0, COMMENT_QUOTE_MAX_BYTES).toString('utf8').replace(/\uFFFD$/, '') + '\n…';
  return quote;
}

function positiveLine(v: unknown, field: string): number | null {
  if (v == null) return null;
  if (!Number.isSafeInteger(v) || (v as number) < 1) throw new InvalidRequestError(field, `${field} must be a line number (1 or more).`);
  return v as number;
}

export async function addReviewComment(sql: Sql, actor: Actor, input: AddReviewCommentInput): Promise<ReviewCommentRow> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  if (typeof input.body !== 'string') throw new InvalidRequestError('body', 'body is required.');
  const body = checkText(input.body, 'body', COMMENT_BODY_MAX_BYTES, { nonEmpty: true });
  const path = input.path == null ? null : checkText(String(input.path), 'path', 4_096, { nonEmpty: true });
  const line = positiveLine(input.line, 'line');
  const startLine = positiveLine(input.startLine, 'startLine');
  const side = input.side ?? null;
  if (side !== null && side !== 'OLD' && side !== 'NEW') throw new InvalidRequestError('side', 'side must be OLD or NEW.');
  if (path === null && (line !== null || side !== null || startLine !== null)) {
    throw new InvalidRequestError('path', 'A comment on a line names its file: give path (or leave out side and line for a comment on the whole changeset).');
  }
  if ((line === null) !== (side === null)) throw new InvalidRequestError(line === null ? 'line' : 'side', 'A line comment gives both side and line; a file comment neither.');
  if (startLine !== null && line === null) throw new InvalidRequestError('startLine', 'startLine needs line (the last line of the range).');
  if (startLine !== null && startLine > line!) throw new InvalidRequestError('startLine', 'startLine must not be after line.');
  // The session first: one outside the caller's scope reads as missing, whatever else the input names.
  const [visible] = await sql<{ id: string }[]>`SELECT id FROM sessions WHERE id = ${sessionID} AND ${scopeCondition(sql, actor, 'directory')}`;
  if (!visible) throw new SessionNotFoundError(sessionID);
  const target = await resolveTarget(sql, actor, sessionID, input.changeset);
  const quote = await anchorOf(target, path, side, line, startLine === line ? null : startLine);
  const key = idempotencyKey('addReviewComment', sessionID, input.idempotencyKey, {
    changeset: target.key, path, side, line, startLine, body,
  });
  return sql.begin(async (tx) => {
    const [lock, previous] = await lockSessionWith(tx, actor, sessionID, () => previousResult(tx, key));
    if (previous) return (await commentRow(tx, sessionID, previous))!;
    const commentID = newId('comment', sessionID);
    const [{ result }] = await Promise.all([
      commitEvent(lock, 'review_comment.added', {
        commentID, authorTokenID: actor.tokenID, authorRole: actor.role, body,
        changesetKind: target.key.kind, executionID: target.key.executionID, fromExecutionID: target.key.fromExecutionID,
        path, side, line, startLine: startLine === line ? null : startLine, quote,
      }),
      rememberResult(tx, key, commentID, sessionID),
    ]);
    return result;
  });
}

async function commentRow(tx: Tx, sessionID: string, commentID: string): Promise<ReviewCommentRow | null> {
  const [c] = await tx<ReviewCommentRow[]>`SELECT * FROM review_comments WHERE session_id = ${sessionID} AND id = ${commentID}`;
  return c ?? null;
}

// ---- resolve, reopen ----------------------------------------------------------------------------------

/** The comment's session locked, with the comment as read under the lock; CommentNotFoundError when out of reach. */
async function lockComment(tx: Tx, actor: Actor, commentID: unknown): Promise<[LockedSession, ReviewCommentRow]> {
  if (!isId('comment', commentID)) throw new InvalidRequestError('id', 'id must be an ID starting with "cmt_".');
  let sessionID = sessionOf(commentID);
  if (!sessionID) {
    const [found] = await tx<{ sessionId: string }[]>`SELECT session_id FROM review_comments WHERE id = ${commentID}`;
    if (!found) throw new CommentNotFoundError(commentID);
    sessionID = found.sessionId;
  }
  const holder = sessionID;
  try {
    const [lock, c] = await lockSessionWith(tx, actor, holder, () => commentRow(tx, holder, commentID));
    if (!c) throw new CommentNotFoundError(commentID);
    return [lock, c];
  } catch (e) {
    if (e instanceof SessionNotFoundError) throw new CommentNotFoundError(commentID);
    throw e;
  }
}

/** Resolves the comment (idempotent: a resolved one is answered as it is, with no event). */
export async function resolveReviewComment(sql: Sql, actor: Actor, commentID: string): Promise<ReviewCommentRow> {
  return sql.begin(async (tx) => {
    const [lock, c] = await lockComment(tx, actor, commentID);
    if (c.state === 'RESOLVED') return c;
    return (await commitEvent(lock, 'review_comment.resolved', { commentID: c.id })).result;
  });
}

/** Reopens the comment (idempotent: an open one is answered as it is, with no event). */
export async function reopenReviewComment(sql: Sql, actor: Actor, commentID: string): Promise<ReviewCommentRow> {
  return sql.begin(async (tx) => {
    const [lock, c] = await lockComment(tx, actor, commentID);
    if (c.state === 'OPEN') return c;
    return (await commitEvent(lock, 'review_comment.reopened', { commentID: c.id })).result;
  });
}

// ---- sendReviewComments -------------------------------------------------------------------------------

export interface SendReviewCommentsInput { sessionID: string; commentIDs: readonly string[]; timeoutMs?: number | null }

export interface ReviewCommentsSent {
  commandID: string;
  execution: ExecutionRow;
  comments: ReviewCommentRow[];
  prompt: string;
}

/** What a PROMPT command asks of its host. */
export interface PromptPayload { text: string; commentIDs: string[] }

/**
 * Sends open comments of a session to its agent as the session's next prompt. In one transaction under the
 * session lock: the comments (of this session, open, not answered, not in a send still in flight), the
 * admission rule (SessionSealedError once a seal was requested), the busy rule (SessionBusyError), the host
 * (HostUnavailableError: none, lease lapsed; UnsupportedError: it cannot prompt); then the event
 * `review_comments.sent` and the PROMPT command. Then waits for the host: its beginExecution with the command's
 * ID answers it (the comments read answered by that execution); a host that could not start it replies an
 * error, and the session is read again to say why (sealed, busy meanwhile, or HOST_FAILED). The comments of a
 * send that did not start stay open and unanswered: they may be sent again.
 */
export async function sendReviewComments(sql: Sql, actor: Actor, input: SendReviewCommentsInput, opts: HostRequestOptions): Promise<ReviewCommentsSent> {
  const sessionID = requireId('session', input.sessionID, 'sessionID');
  if (!Array.isArray(input.commentIDs) || input.commentIDs.length === 0) throw new InvalidRequestError('commentIDs', 'Give at least one comment to send.');
  if (input.commentIDs.length > SEND_MAX_COMMENTS) throw new InvalidRequestError('commentIDs', `At most ${SEND_MAX_COMMENTS} comments are sent at once.`);
  const ids = input.commentIDs.map((id, i) => requireId('comment', id, `commentIDs[${i}]`));
  if (new Set(ids).size !== ids.length) throw new InvalidRequestError('commentIDs', 'A comment is listed twice.');
  const timeoutMs = checkTimeout(input.timeoutMs, opts.maxTimeoutMs);
  const deadline = Date.now() + timeoutMs;
  const { command, prompt } = await sql.begin(async (tx) => {
    const [lock, [running, rows, inFlight]] = await lockSessionWith(tx, actor, sessionID, () => Promise.all([
      runningExecution(tx, sessionID),
      tx<ReviewCommentRow[]>`SELECT * FROM review_comments WHERE session_id = ${sessionID} AND id = ANY(${ids})`,
      tx<{ id: string }[]>`
        SELECT id FROM host_commands WHERE session_id = ${sessionID} AND kind = 'PROMPT'
          AND replied_at IS NULL AND timed_out_at IS NULL AND expires_at > statement_timestamp()`,
    ]));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const open = new Set(inFlight.map((c) => c.id));
    const comments: ReviewCommentRow[] = [];
    for (const id of ids) {
      const c = byId.get(id);
      if (!c) {
        // Of another session the caller may see: bad input; else (unknown, out of scope) not found.
        if (await getReviewComment(tx, actor, id)) throw new InvalidRequestError('commentIDs', `Comment ${id} belongs to another session than ${sessionID}.`);
        throw new CommentNotFoundError(id);
      }
      if (c.state !== 'OPEN') throw new InvalidRequestError('commentIDs', `Comment ${id} is resolved: reopen it to send it.`);
      if (c.answeredByExecutionId) throw new InvalidRequestError('commentIDs', `Comment ${id} was already answered by execution ${c.answeredByExecutionId}.`);
      if (c.sentCommandId && open.has(c.sentCommandId)) throw new InvalidRequestError('commentIDs', `Comment ${id} is being sent (command ${c.sentCommandId}).`);
      comments.push(c);
    }
    const s = lock.session;
    requireAdmissionsOpen(s);
    requireIdle(sessionID, running);
    const h = await requestHost(tx, s, 'PROMPT');
    requireLive(s, h);
    const text = formatReviewPrompt(comments);
    const payload: PromptPayload = { text, commentIDs: ids };
    const command = await issueRequest(tx, { hostId: h.id, sessionId: sessionID, kind: 'PROMPT', payload, timeoutMs });
    await commitEvent(lock, 'review_comments.sent', { commandID: command.id, commentIDs: ids });
    return { command, prompt: text };
  });
  const r = (await awaitRequest(sql, command, { ...opts, deadline, timeoutMs, owner: true }))!;
  const out = r.reply?.outcome;
  if (out?.kind === 'STARTED') {
    const [[execution], comments] = await Promise.all([
      sql<ExecutionRow[]>`SELECT * FROM executions WHERE ${rowKey(sql, out.executionID)}`,
      reviewCommentsById(sql, actor, ids),
    ]);
    return { commandID: command.id, execution, comments, prompt };
  }
  // The host could not start it: say why when the session says it.
  const [s] = await sql<{ sealRequestedAt: Date | null; running: string | null }[]>`
    SELECT seal_requested_at, (SELECT id FROM executions WHERE session_id = ${sessionID} AND status = 'RUNNING' LIMIT 1) AS running
    FROM sessions WHERE id = ${sessionID}`;
  if (!s) throw new SessionNotFoundError(sessionID);
  if (s.sealRequestedAt) throw new SessionSealedError(sessionID);
  if (s.running) throw new SessionBusyError(sessionID, s.running);
  throw new HostUnavailableError(sessionID, r.hostId, 'HOST_FAILED', String(out?.error ?? r.reply?.error ?? 'no usable reply'));
}

/**
 * The host's side: beginExecution (or admitWork) naming a PROMPT command. Under the session lock, the command
 * must be a PROMPT of this session, sent to this host, and still open (not answered, not given up by its
 * caller, not expired); else InvalidRequestError on commandID, and nothing starts.
 */
export async function promptCommand(tx: Tx, sessionID: string, hostID: string, commandID: unknown): Promise<HostRequestRow> {
  const id = requireId('command', commandID, 'commandID');
  const [c] = await tx<(HostRequestRow & { open: boolean })[]>`
    SELECT *, (replied_at IS NULL AND timed_out_at IS NULL AND expires_at > statement_timestamp()) AS open
    FROM host_commands WHERE ${rowKey(tx, id)}`;
  if (!c || c.kind !== 'PROMPT' || c.sessionId !== sessionID || c.hostId !== hostID) {
    throw new InvalidRequestError('commandID', `No PROMPT command ${id} of session ${sessionID} was sent to host ${hostID}.`);
  }
  if (!c.open) throw new InvalidRequestError('commandID', `Command ${id} is no longer open (answered, given up by its caller, or expired): its prompt must not run.`);
  return c;
}

/**
 * Links the execution `beginExecution` is starting to the PROMPT command it carries out (in its transaction,
 * under the session lock, after its own checks): the command is marked replied STARTED (which wakes
 * sendReviewComments) and the comments it carried read answered by the execution (`review_comments.answered`).
 * A command closed meanwhile (its caller gave up) refuses the begin.
 */
export async function answerPrompt(lock: LockedSession, c: HostRequestRow, executionID: string): Promise<void> {
  try {
    await markReplied(lock.tx, c, { outcome: { kind: 'STARTED', executionID } });
  } catch (e) {
    if (e instanceof CommandTimeoutError || e instanceof InvalidRequestError) {
      throw new InvalidRequestError('commandID', `Command ${c.id} is no longer open (answered, given up by its caller, or expired): its prompt must not run.`);
    }
    throw e;
  }
  const commentIDs = ((c.payload as PromptPayload | null)?.commentIDs ?? []).filter((id) => isId('comment', id));
  await commitEvent(lock, 'review_comments.answered', { commandID: c.id, executionID, commentIDs });
}

/**
 * The seal's first step (domain/seal.ts), in its transaction under the session lock: a PROMPT whose turn has not
 * begun can no longer begin (beginExecution and admitWork refuse from this commit on), so its sender is answered
 * now, as SessionSealedError (sendReviewComments reads the seal), not at its timeout, whatever its host does
 * with the command: a host may lose the prompt to the seal's own interrupt and never reply.
 */
export async function refuseWaitingPrompts(tx: Tx, sessionID: string): Promise<void> {
  const waiting = await tx<HostRequestRow[]>`
    SELECT * FROM host_commands WHERE session_id = ${sessionID} AND kind = 'PROMPT'
      AND replied_at IS NULL AND timed_out_at IS NULL AND expires_at > statement_timestamp()`;
  for (const c of waiting) await markReplied(tx, c, { outcome: { kind: 'FAILED', error: 'The session was sealed before the prompt\'s turn began.' } });
}

/**
 * replyHostCommand for a PROMPT: only a failure is replied (`error`: the host could not start the prompt);
 * success is beginExecution with the command's ID.
 */
export async function replyPrompt(sql: Sql, c: HostRequestRow, result: unknown, error: string | null): Promise<HostRequestRow> {
  if (error === null) {
    checkReplyResult(result);
    throw new InvalidRequestError('result', 'A PROMPT command is answered by beginExecution with its commandID; reply only with error when the prompt cannot run.');
  }
  return sql.begin((tx) => markReplied(tx, c, { outcome: { kind: 'FAILED', error } }));
}
