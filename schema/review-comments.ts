// Review comments (issue 50): domain/review-comments.ts; the prompt they become, domain/review-prompt.ts.
import { builder, allow } from './builder.js';
import {
  CommandTimeoutError, CommentAnchorError, CommentNotFoundError, ExecutionNotFoundError, HostUnavailableError, InvalidRequestError,
  SessionBusyError, SessionNotFoundError, SessionSealedError, UnsupportedError,
} from './errors.js';
import { TokenRoleEnum } from './enums.js';
import { ExecutionRef, SessionRef } from './refs.js';
import { ChangesetRef, changesetKeyOf } from './changeset.js';
import { connectionOf, pageArgs } from './connection.js';
import { hostRequestOptions } from './compaction.js';
import {
  addReviewComment, getReviewComment, reopenReviewComment, resolveReviewComment, sendReviewComments,
  type ReviewCommentRow, type ReviewCommentsSent,
} from '../domain/review-comments.js';
import { commentById, commentsOfChangeset, commentsOfSession } from '../resolvers/loaders.js';
import { SessionEventRef } from './events.js';

export const ReviewCommentStateEnum = builder.enumType('ReviewCommentState', { values: ['OPEN', 'RESOLVED'] as const });
export const CommentSideEnum = builder.enumType('CommentSide', {
  values: {
    OLD: { description: 'The file before the changeset (a removed or context line, numbered as in the old file).' },
    NEW: { description: 'The file after the changeset (an added or context line, numbered as in the new file).' },
  } as const,
});
export const ChangesetKindEnum = builder.enumType('ChangesetKind', {
  values: {
    EXECUTION: { description: 'An execution\'s own changeset (Execution.changeset; Session.changes from an execution to itself).' },
    RANGE: { description: 'Session.changes(from: fromExecutionID, to: executionID).' },
    DRIFT: { description: 'Execution.driftBefore of executionID.' },
  } as const,
});

const ReviewCommentAuthorRef = builder.objectRef<ReviewCommentRow>('ReviewCommentAuthor').implement({
  description: 'Who wrote a comment: the token and its role.',
  fields: (t) => ({
    tokenID: t.exposeID('authorTokenId', { nullable: true }),
    role: t.field({ type: TokenRoleEnum, resolve: (c) => c.authorRole }),
  }),
});

const ReviewCommentAnchorRef = builder.objectRef<ReviewCommentRow>('ReviewCommentAnchor').implement({
  description: 'Where a comment is: the changeset (kind and executions), the file (null: the whole changeset), the side and lines (null: the whole file), and the quoted lines.',
  fields: (t) => ({
    kind: t.field({ type: ChangesetKindEnum, resolve: (c) => c.changesetKind }),
    executionID: t.exposeID('executionId', { description: 'EXECUTION and DRIFT: the execution; RANGE: the last execution of the range (`to`).' }),
    fromExecutionID: t.exposeID('fromExecutionId', { nullable: true, description: 'RANGE: the first execution of the range (`from`). Null otherwise.' }),
    path: t.exposeString('path', { nullable: true, description: 'The file (for a RENAMED file its new path); null: a comment on the whole changeset.' }),
    side: t.field({ type: CommentSideEnum, nullable: true, resolve: (c) => c.side }),
    line: t.exposeInt('line', { nullable: true, description: 'The (last) line, 1-based, in that side\'s file; null: a comment on the whole file.' }),
    startLine: t.exposeInt('startLine', { nullable: true, description: 'A comment on several lines: the first one (same side); null for one line.' }),
    quote: t.exposeString('quote', { nullable: true, description: 'The anchored lines as the changeset\'s patch showed them when the comment was written (taken by the gateway), joined by newlines.' }),
  }),
});

export const ReviewCommentRef = builder.objectRef<ReviewCommentRow>('ReviewComment').implement({
  description: 'A reviewer\'s comment on a line, a file or the whole of a changeset; it can be sent to the session\'s agent (sendReviewComments).',
  fields: (t) => ({
    id: t.exposeID('id'),
    state: t.field({ type: ReviewCommentStateEnum, resolve: (c) => c.state }),
    body: t.exposeString('body'),
    author: t.field({ type: ReviewCommentAuthorRef, resolve: (c) => c }),
    anchor: t.field({ type: ReviewCommentAnchorRef, resolve: (c) => c }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    resolvedAt: t.expose('resolvedAt', { type: 'DateTime', nullable: true }),
    sentAt: t.expose('sentAt', { type: 'DateTime', nullable: true, description: 'When it was last sent to the agent.' }),
    sentCommandID: t.exposeID('sentCommandId', { nullable: true, description: 'The PROMPT host command of its last send.' }),
    answeredBy: t.field({
      type: ExecutionRef,
      nullable: true,
      description: 'The execution the agent ran for the send that carried it (its changeset shows what the agent changed).',
      resolve: (c) => c.answeredByExecutionId,
    }),
    session: t.field({ type: SessionRef, resolve: (c) => c.sessionId }),
  }),
});

const ReviewCommentConnection = connectionOf('ReviewComment', ReviewCommentRef);

builder.objectFields(ChangesetRef, (t) => ({
  comments: t.field({
    type: [ReviewCommentRef],
    description: 'The review comments anchored on this very changeset (the same kind and executions), by path (the whole changeset\'s first), line (a file\'s first), then time.',
    args: { state: t.arg({ type: ReviewCommentStateEnum, required: false }) },
    resolve: (c, { state }, ctx) => commentsOfChangeset(ctx).load({ ...changesetKeyOf(c), state: state ?? null }),
  }),
}));

builder.objectFields(SessionRef, (t) => ({
  comments: t.field({
    type: ReviewCommentConnection,
    description: 'Every review comment of the session, on any of its changesets, oldest first.',
    args: { ...pageArgs, state: t.arg({ type: ReviewCommentStateEnum, required: false }) },
    resolve: (s, args, ctx) => commentsOfSession(ctx, s.id, args, { key: args.state ?? '' }),
  }),
}));

builder.queryField('reviewComment', (t) =>
  t.field({
    type: ReviewCommentRef,
    nullable: true,
    description: 'A review comment by ID; null when unknown or outside the caller\'s scope.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => getReviewComment(ctx.sql, ctx.actor, id),
  }),
);

const ChangesetInput = builder.inputType('ChangesetInput', {
  description: 'A changeset of a session: an execution\'s own (EXECUTION), Session.changes(from, to) (RANGE), or Execution.driftBefore (DRIFT).',
  fields: (t) => ({
    kind: t.field({ type: ChangesetKindEnum, required: true }),
    executionID: t.id({ required: true, description: 'EXECUTION, DRIFT: the execution; RANGE: `to`.' }),
    fromExecutionID: t.id({ required: false, description: 'RANGE only: `from` (a range from an execution to itself is that execution\'s own changeset).' }),
  }),
});

const AddReviewCommentInput = builder.inputType('AddReviewCommentInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    changeset: t.field({ type: ChangesetInput, required: true }),
    path: t.string({ required: false, description: 'A file of the changeset (for a RENAMED file its new path); leave out for a comment on the whole changeset.' }),
    side: t.field({ type: CommentSideEnum, required: false, description: 'With line: which side of the patch the line is on.' }),
    line: t.int({ required: false, description: 'A line shown in the file\'s patch on that side (1-based, in that side\'s file); leave out with side for a comment on the whole file.' }),
    startLine: t.int({ required: false, description: 'A comment on several lines: the first (every line from it to `line` shown on that side).' }),
    body: t.string({ required: true, description: 'The comment (not empty; at most 64 KiB).' }),
    idempotencyKey: t.string({ required: false, description: 'Optional. A call repeated with the same key returns the comment the first call added instead of adding it again; the same key with a different request is an InvalidRequestError. Unique within the session.' }),
  }),
});

const ReviewCommentIDInput = builder.inputType('ReviewCommentIDInput', { fields: (t) => ({ id: t.id({ required: true }) }) });

const SendReviewCommentsInput = builder.inputType('SendReviewCommentsInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    commentIDs: t.idList({ required: true, description: 'Open, unanswered comments of the session (at most 100), in the order the prompt lists them.' }),
    timeoutMs: t.int({ required: false, description: 'How long to wait for the host to start the prompt (default 30000, capped by the gateway\'s configuration).' }),
  }),
});

const ReviewCommentsSentRef = builder.objectRef<ReviewCommentsSent>('ReviewCommentsSent').implement({
  description: 'The comments were sent to the session\'s agent: its host started `execution` with `prompt`.',
  fields: (t) => ({
    // Always set; typed `ID` like CommandTimeoutError.commandID so both can be selected together.
    commandID: t.exposeID('commandID', { nullable: true, description: 'The PROMPT host command that carried them (always set).' }),
    execution: t.field({ type: ExecutionRef, description: 'The execution the agent runs for them (answeredBy of each comment).', resolve: (r) => r.execution }),
    comments: t.field({ type: [ReviewCommentRef], resolve: (r) => r.comments }),
    prompt: t.exposeString('prompt', { description: 'The prompt the agent got (the format of docs/api.md "Review comments").' }),
  }),
});

builder.mutationFields((t) => ({
  addReviewComment: t.field({
    type: ReviewCommentRef,
    description: 'Comments on a line, a file or the whole of a changeset of the session (also after its seal). The line must be shown in the file\'s patch; the gateway keeps the quoted lines with the comment.',
    extensions: allow('plugin'),
    errors: { types: [SessionNotFoundError, ExecutionNotFoundError, CommentAnchorError, InvalidRequestError] },
    args: { input: t.arg({ type: AddReviewCommentInput, required: true }) },
    resolve: (_r, { input }, ctx) => addReviewComment(ctx.sql, ctx.actor, input),
  }),
  resolveReviewComment: t.field({
    type: ReviewCommentRef,
    description: 'Marks the comment RESOLVED (a resolved one is answered as it is).',
    extensions: allow('plugin'),
    errors: { types: [CommentNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: ReviewCommentIDInput, required: true }) },
    resolve: (_r, { input }, ctx) => resolveReviewComment(ctx.sql, ctx.actor, input.id),
  }),
  reopenReviewComment: t.field({
    type: ReviewCommentRef,
    description: 'Marks the comment OPEN again (an open one is answered as it is).',
    extensions: allow('plugin'),
    errors: { types: [CommentNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: ReviewCommentIDInput, required: true }) },
    resolve: (_r, { input }, ctx) => reopenReviewComment(ctx.sql, ctx.actor, input.id),
  }),
  sendReviewComments: t.field({
    type: ReviewCommentsSentRef,
    description: 'Sends open comments to the session\'s agent as its next prompt (a PROMPT host command) and waits until its host starts the execution that answers them. Admitted like any prompt: SessionSealedError once a seal was requested, SessionBusyError while an execution runs, UnsupportedError(PROMPT) from a host that cannot prompt. Comments of a send that did not start stay open and unanswered.',
    extensions: allow('plugin'),
    errors: {
      types: [SessionNotFoundError, SessionSealedError, SessionBusyError, UnsupportedError, HostUnavailableError, CommandTimeoutError, CommentNotFoundError, InvalidRequestError],
    },
    args: { input: t.arg({ type: SendReviewCommentsInput, required: true }) },
    resolve: (_r, { input }, ctx) => sendReviewComments(ctx.sql, ctx.actor, input, hostRequestOptions(ctx)),
  }),
}));

// The review comment events on sessionEvents: review_comment.added / .resolved / .reopened (one comment),
// review_comments.sent (commandID, the comments) and review_comments.answered (commandID, executionID, the comments).
builder.objectFields(SessionEventRef, (t) => ({
  commentIDs: t.idList({
    description: 'review_comment.*: the comment; review_comments.sent and .answered: the comments of the send. Empty for other events.',
    resolve: (e) => (Array.isArray(e.payload?.commentIDs) ? e.payload.commentIDs : e.payload?.commentID ? [e.payload.commentID] : []),
  }),
  comments: t.field({
    type: [ReviewCommentRef],
    description: 'The comments of commentIDs as they are now (those that still exist).',
    resolve: async (e, _a, ctx) => {
      const ids: string[] = Array.isArray(e.payload?.commentIDs) ? e.payload.commentIDs : e.payload?.commentID ? [e.payload.commentID] : [];
      return (await Promise.all(ids.map((id) => commentById(ctx).load(id)))).filter((c): c is ReviewCommentRow => !!c);
    },
  }),
  commandID: t.id({
    nullable: true,
    description: 'The host command the event concerns (review_comments.sent and .answered: the PROMPT command; job.cancelling, execution.interrupting, session.compacted: theirs).',
    resolve: (e) => e.payload?.commandID ?? null,
  }),
}));
