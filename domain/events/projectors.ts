import { distributedInProcess } from '../../db/cluster.js';
import type { SessionLock } from '../session-lock.js';
import type { ExecutionRow, JobRow, MessageRow, PartRow, SessionRow } from '../rows.js';
import type { ReviewCommentRow } from '../review-comments.js';
import type { Infer } from './shape.js';
import type * as P from './payloads.js';

/**
 * The projectors: how each journal event changes the readable tables. The live write path
 * (domain/events/commit.ts) and replay (domain/replay.ts) run these same functions, the latter with
 * `search_path` set to a scratch schema, so every table here is named unqualified and every statement
 * touches only the event's own session (`WHERE session_id = …`: one shard on Citus, and replay folds
 * one session at a time), except a child's row in `session_children`, kept on its parent's shard and
 * written by the child's creation and removal. Every timestamp a projector writes is the event's `at`.
 *
 * The session row's journal bookkeeping (`last_seq`, and `updated_at` for the events that touch the
 * session) is done by the commit itself, not here.
 */
export interface Applied<T> {
  sessionID: string;
  seq: number;
  /** The event's time, as Postgres text (microseconds kept). */
  at: string;
  payload: T;
}

/** A projector runs only under the session's lock (its `tx`), as commitEvent and replay hold it. */
type Projector<S, R> = (lock: SessionLock, e: Applied<Infer<S>>) => Promise<R>;

const none = async (): Promise<void> => {};

export const sessionCreated: Projector<typeof P.SessionCreated, SessionRow> = async ({ tx }, { sessionID, seq, at, payload: p }) => {
  const [s] = await tx<SessionRow[]>`
    INSERT INTO sessions (id, parent_id, title, directory, metadata, host_id, host_metadata, last_seq, created_at, updated_at)
    VALUES (${sessionID}, ${p.parentID}, ${p.title}, ${p.directory}, ${tx.json(p.metadata as never)}, ${p.hostID ?? null},
      ${tx.json((p.hostMetadata ?? {}) as never)}, ${seq}, ${at}::text::timestamptz, ${at}::text::timestamptz)
    RETURNING *`;
  // A child is also recorded on its parent's shard, under the parent's share lock that createSession holds
  // (removeSession finds the children of a session there).
  if (p.parentID !== null) await tx`INSERT INTO session_children (parent_id, child_id) VALUES (${p.parentID}, ${sessionID})`;
  return s;
};

export const sessionUpdated: Projector<typeof P.SessionUpdated, SessionRow> = async ({ tx }, { sessionID, payload: p }) => {
  const [s] = await tx<SessionRow[]>`
    UPDATE sessions SET title = coalesce(${p.title}, title),
      metadata = coalesce(${p.metadata === null ? null : tx.json(p.metadata as never)}::jsonb, metadata)
    WHERE id = ${sessionID} RETURNING *`;
  return s;
};

/**
 * The session and everything of it the journal owns go; tombstones answer for the session and its
 * executions from then on. (Rows outside the journal, such as snapshots and changesets, go with the
 * session row by their foreign keys.)
 */
export const sessionRemoved: Projector<typeof P.SessionRemoved, void> = async ({ tx }, { sessionID, at }) => {
  const [gone] = await tx<{ parentId: string | null }[]>`
    WITH t AS (
      INSERT INTO tombstones (id, kind, session_id, directory, removed_at)
      SELECT id, 'session', id, directory, ${at}::text::timestamptz FROM sessions WHERE id = ${sessionID}
      UNION ALL
      SELECT e.id, 'execution', e.session_id, s.directory, ${at}::text::timestamptz FROM executions e JOIN sessions s ON s.id = e.session_id
      WHERE e.session_id = ${sessionID} AND s.id = ${sessionID}
      ON CONFLICT (session_id, id) DO NOTHING
    ), p AS (DELETE FROM parts WHERE session_id = ${sessionID}),
      c AS (DELETE FROM compactions WHERE session_id = ${sessionID}),
      r AS (DELETE FROM review_comments WHERE session_id = ${sessionID}),
      m AS (DELETE FROM messages WHERE session_id = ${sessionID}),
      j AS (DELETE FROM jobs WHERE session_id = ${sessionID}),
      mc AS (DELETE FROM model_calls WHERE session_id = ${sessionID}),
      e AS (DELETE FROM executions WHERE session_id = ${sessionID}),
      -- Keys of work inside the session go with it (idempotency_keys has no foreign key: it is keyed by
      -- scope, and createSession's global scope outlives the sessions it created).
      k AS (DELETE FROM idempotency_keys WHERE scope = ${sessionID}),
      l AS (DELETE FROM session_children WHERE parent_id = ${sessionID})
    DELETE FROM sessions WHERE id = ${sessionID} RETURNING parent_id`;
  // Its own record as a child, on the parent's shard.
  if (gone?.parentId) await tx`DELETE FROM session_children WHERE parent_id = ${gone.parentId} AND child_id = ${sessionID}`;
};

export const sessionSealing: Projector<typeof P.SessionSealing, SessionRow> = async ({ tx }, { sessionID, at }) => {
  const [s] = await tx<SessionRow[]>`UPDATE sessions SET seal_requested_at = ${at}::text::timestamptz WHERE id = ${sessionID} RETURNING *`;
  return s;
};

export const sessionSealed: Projector<typeof P.SessionSealed, SessionRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [s] = await tx<SessionRow[]>`
    UPDATE sessions SET sealed_at = ${at}::text::timestamptz, seal_unproven = ${p.unproven} WHERE id = ${sessionID} RETURNING *`;
  return s;
};

export const sessionCompacted: Projector<typeof P.SessionCompacted, void> = async ({ tx }, { sessionID, seq, at, payload: p }) => {
  await tx`
    INSERT INTO compactions (session_id, seq, summary_message_id, through_position, compacted_messages, command_id, created_at)
    VALUES (${sessionID}, ${seq}, ${p.summaryMessageID}, ${p.throughPosition}, ${p.compactedMessages}, ${p.commandID}, ${at}::text::timestamptz)`;
};

export const executionStarted: Projector<typeof P.ExecutionStarted, ExecutionRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [e] = await tx<ExecutionRow[]>`
    WITH e AS (
      INSERT INTO executions (id, session_id, sequence, host_id, status, trigger, start_snapshot_id, start_capture_error,
        external_id, provider_id, model_id, agent, mode, started_at)
      VALUES (${p.executionID}, ${sessionID}, ${p.sequence}, ${p.hostID}, 'RUNNING', ${p.trigger}, ${p.startSnapshotID}, ${p.startCaptureError},
        ${p.externalID}, ${p.providerID}, ${p.modelID}, ${p.agent}, ${p.mode}, ${at}::text::timestamptz)
      RETURNING *
    ), s AS (
      UPDATE sessions SET execution_count = ${p.sequence}, host_id = ${p.hostID} WHERE id = ${sessionID}
    )
    SELECT * FROM e`;
  return e;
};

export const executionSettled: Projector<typeof P.ExecutionSettled, ExecutionRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const u = p.usage;
  const [e] = await tx<ExecutionRow[]>`
    UPDATE executions SET status = ${p.status}, interrupt_reason = ${p.interruptReason}, error = ${p.error}, settled_at = ${at}::text::timestamptz,
      end_snapshot_id = ${p.endSnapshotID}, end_capture_error = ${p.endCaptureError},
      provider_id = coalesce(${p.providerID}, provider_id), model_id = coalesce(${p.modelID}, model_id),
      agent = coalesce(${p.agent}, agent), mode = coalesce(${p.mode}, mode),
      finish_reason = ${p.finishReason}, error_name = ${p.errorName},
      input_tokens = ${u.inputTokens}, output_tokens = ${u.outputTokens}, reasoning_tokens = ${u.reasoningTokens},
      cache_read_tokens = ${u.cacheReadTokens}, cache_write_tokens = ${u.cacheWriteTokens},
      cache_write_5m_tokens = ${u.cacheWrite5mTokens}, cache_write_1h_tokens = ${u.cacheWrite1hTokens}, cost = ${u.cost}
    WHERE session_id = ${sessionID} AND id = ${p.executionID} RETURNING *`;
  // Its model calls, in order: plain rows (routed to the session's shard on Citus).
  if (p.modelCalls?.length) {
    await tx`INSERT INTO model_calls ${tx(p.modelCalls.map((c, index) => ({
      session_id: sessionID, execution_id: p.executionID, index, external_id: c.externalID, provider_id: c.providerID, model_id: c.modelID,
      started_at: c.startedAt, ended_at: c.endedAt, times_from: c.timesFrom, finish_reason: c.finishReason,
      input_tokens: c.usage.inputTokens, output_tokens: c.usage.outputTokens, reasoning_tokens: c.usage.reasoningTokens,
      cache_read_tokens: c.usage.cacheReadTokens, cache_write_tokens: c.usage.cacheWriteTokens,
      cache_write_5m_tokens: c.usage.cacheWrite5mTokens, cache_write_1h_tokens: c.usage.cacheWrite1hTokens, cost: c.usage.cost,
    })))}`;
  }
  return e;
};

export const executionCostReported: Projector<typeof P.ExecutionCostReported, ExecutionRow> = async ({ tx }, { sessionID, payload: p }) => {
  const [e] = await tx<ExecutionRow[]>`UPDATE executions SET cost = ${p.cost} WHERE session_id = ${sessionID} AND id = ${p.executionID} RETURNING *`;
  return e;
};

export const executionAbandoned: Projector<typeof P.ExecutionAbandoned, ExecutionRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [e] = await tx<ExecutionRow[]>`
    UPDATE executions SET status = 'ABANDONED', settled_at = ${at}::text::timestamptz
    WHERE session_id = ${sessionID} AND id = ${p.executionID} RETURNING *`;
  return e;
};

/**
 * Message and parts in one statement (the parts' foreign key is checked at its end). On Citus the parts' insert
 * from `jsonb_to_recordset` is an INSERT … SELECT Citus runs on the coordinator and copies into the shard over a
 * second connection to the worker, which made every append a two-phase commit (PREPARE TRANSACTION on the one
 * worker, a row in pg_dist_transaction): there the message and its parts are two inserts of plain values, each
 * routed to the session's shard over the transaction's one connection, sent together, so the append commits in
 * one phase like the session's other writes (test/cluster-restart.test.ts counts the prepared transactions).
 */
export const messageAppended: Projector<typeof P.MessageAppended, MessageRow> = async ({ tx }, { sessionID, seq, at, payload: p }) => {
  if (distributedInProcess()) {
    const parts = p.parts.map((x) => ({
      id: x.id, message_id: p.messageID, session_id: sessionID, index: x.index, type: x.type, text: x.text, tool: x.tool,
      input: x.input == null ? null : tx.json(x.input as never), output: x.output, status: x.status, path: x.path, mime: x.mime,
      external_id: x.externalId ?? null, title: x.title ?? null, metadata: x.metadata == null ? null : tx.json(x.metadata as never),
      started_at: x.startedAt ?? null, ended_at: x.endedAt ?? null,
    }));
    const [[m]] = await Promise.all([
      tx<MessageRow[]>`
        INSERT INTO messages (id, session_id, execution_id, position, role, origin, external_id, created_at)
        VALUES (${p.messageID}, ${sessionID}, ${p.executionID}, ${seq}, ${p.role}, ${p.origin}, ${p.externalID ?? null}, ${at}::text::timestamptz)
        RETURNING *`,
      tx`INSERT INTO parts ${tx(parts as Record<string, unknown>[])}`,
    ]);
    return m;
  }
  const [m] = await tx<MessageRow[]>`
    WITH m AS (
      INSERT INTO messages (id, session_id, execution_id, position, role, origin, external_id, created_at)
      VALUES (${p.messageID}, ${sessionID}, ${p.executionID}, ${seq}, ${p.role}, ${p.origin}, ${p.externalID ?? null}, ${at}::text::timestamptz)
      RETURNING *
    ), p AS (
      INSERT INTO parts (id, message_id, session_id, index, type, text, tool, input, output, status, path, mime,
        external_id, title, metadata, started_at, ended_at)
      SELECT x.id, ${p.messageID}, ${sessionID}, x.index, x.type, x.text, x.tool, x.input, x.output, x.status, x.path, x.mime,
        x."externalId", x.title, x.metadata, x."startedAt", x."endedAt"
      FROM jsonb_to_recordset(${tx.json(p.parts as never)}::jsonb) AS x(id text, index integer, type text, text text, tool text,
        input jsonb, output text, status text, path text, mime text, "externalId" text, title text, metadata jsonb,
        "startedAt" timestamptz, "endedAt" timestamptz)
    )
    SELECT * FROM m`;
  return m;
};

export const messagePartCorrected: Projector<typeof P.MessagePartCorrected, { message: MessageRow; part: PartRow }> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [part] = await tx<PartRow[]>`
    UPDATE parts SET text = ${p.text}, revision = revision + 1, corrected_at = ${at}::text::timestamptz
    WHERE session_id = ${sessionID} AND id = ${p.partID} RETURNING *`;
  const [message] = await tx<MessageRow[]>`
    UPDATE messages SET revision = revision + 1 WHERE session_id = ${sessionID} AND id = ${p.messageID} RETURNING *`;
  return { message, part };
};

/** The parts keep their rows and IDs; their content goes (the journal keeps the original event). */
export const messageRetracted: Projector<typeof P.MessageRetracted, MessageRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [m] = await tx<MessageRow[]>`
    WITH m AS (
      UPDATE messages SET retracted_at = ${at}::text::timestamptz, retraction_reason = ${p.reason}, revision = revision + 1
      WHERE session_id = ${sessionID} AND id = ${p.messageID} RETURNING *
    ), p AS (
      UPDATE parts SET text = NULL, tool = NULL, input = NULL, output = NULL, status = NULL, path = NULL, mime = NULL, title = NULL, metadata = NULL
      WHERE session_id = ${sessionID} AND message_id = ${p.messageID}
    )
    SELECT * FROM m`;
  return m;
};

export const jobStarted: Projector<typeof P.JobStarted, JobRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [j] = await tx<JobRow[]>`
    INSERT INTO jobs (id, session_id, execution_id, host_id, kind, title, command, status, background, started_at)
    VALUES (${p.jobID}, ${sessionID}, ${p.executionID}, ${p.hostID}, ${p.kind}, ${p.title}, ${p.command}, 'RUNNING', ${p.background}, ${at}::text::timestamptz)
    RETURNING *`;
  return j;
};

export const jobBackgrounded: Projector<typeof P.JobBackgrounded, JobRow> = async ({ tx }, { sessionID, payload: p }) => {
  const [j] = await tx<JobRow[]>`UPDATE jobs SET background = true WHERE session_id = ${sessionID} AND id = ${p.jobID} RETURNING *`;
  return j;
};

export const jobCancelling: Projector<typeof P.JobCancelling, JobRow> = async ({ tx }, { sessionID, payload: p }) => {
  const [j] = await tx<JobRow[]>`UPDATE jobs SET status = 'CANCELLING' WHERE session_id = ${sessionID} AND id = ${p.jobID} RETURNING *`;
  return j;
};

export const jobFinished: Projector<typeof P.JobFinished, JobRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [j] = await tx<JobRow[]>`
    UPDATE jobs SET status = ${p.status}, exit_code = ${p.exitCode}, completed_at = ${at}::text::timestamptz
    WHERE session_id = ${sessionID} AND id = ${p.jobID} RETURNING *`;
  return j;
};

export const jobLost: Projector<typeof P.JobLost, JobRow> = async ({ tx }, { sessionID, payload: p }) => {
  const [j] = await tx<JobRow[]>`UPDATE jobs SET status = 'LOST' WHERE session_id = ${sessionID} AND id = ${p.jobID} RETURNING *`;
  return j;
};

export const jobRestored: Projector<typeof P.JobRestored, JobRow> = async ({ tx }, { sessionID, payload: p }) => {
  const [j] = await tx<JobRow[]>`
    UPDATE jobs SET status = 'RUNNING', restored = true WHERE session_id = ${sessionID} AND id = ${p.jobID} RETURNING *`;
  return j;
};

export const reviewCommentAdded: Projector<typeof P.ReviewCommentAdded, ReviewCommentRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [c] = await tx<ReviewCommentRow[]>`
    INSERT INTO review_comments (id, session_id, author_token_id, author_role, body, changeset_kind, execution_id, from_execution_id,
      path, side, line, start_line, quote, state, created_at, updated_at)
    VALUES (${p.commentID}, ${sessionID}, ${p.authorTokenID}, ${p.authorRole}, ${p.body}, ${p.changesetKind}, ${p.executionID}, ${p.fromExecutionID},
      ${p.path}, ${p.side}, ${p.line}, ${p.startLine}, ${p.quote}, 'OPEN', ${at}::text::timestamptz, ${at}::text::timestamptz)
    RETURNING *`;
  return c;
};

export const reviewCommentResolved: Projector<typeof P.ReviewCommentResolved, ReviewCommentRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [c] = await tx<ReviewCommentRow[]>`
    UPDATE review_comments SET state = 'RESOLVED', resolved_at = ${at}::text::timestamptz, updated_at = ${at}::text::timestamptz
    WHERE session_id = ${sessionID} AND id = ${p.commentID} RETURNING *`;
  return c;
};

export const reviewCommentReopened: Projector<typeof P.ReviewCommentReopened, ReviewCommentRow> = async ({ tx }, { sessionID, at, payload: p }) => {
  const [c] = await tx<ReviewCommentRow[]>`
    UPDATE review_comments SET state = 'OPEN', resolved_at = NULL, updated_at = ${at}::text::timestamptz
    WHERE session_id = ${sessionID} AND id = ${p.commentID} RETURNING *`;
  return c;
};

export const reviewCommentsSent: Projector<typeof P.ReviewCommentsSent, void> = async ({ tx }, { sessionID, at, payload: p }) => {
  await tx`
    UPDATE review_comments SET sent_command_id = ${p.commandID}, sent_at = ${at}::text::timestamptz, updated_at = ${at}::text::timestamptz
    WHERE session_id = ${sessionID} AND id = ANY(${p.commentIDs}::text[])`;
};

export const reviewCommentsAnswered: Projector<typeof P.ReviewCommentsAnswered, void> = async ({ tx }, { sessionID, at, payload: p }) => {
  await tx`
    UPDATE review_comments SET answered_by_execution_id = ${p.executionID}, updated_at = ${at}::text::timestamptz
    WHERE session_id = ${sessionID} AND id = ANY(${p.commentIDs}::text[])`;
};

/** Events that change no readable table the journal owns (they wake waiters and tell subscribers). */
export const informational = none;
