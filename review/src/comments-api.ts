import {
  GatewayCallError,
  ReviewPageAddCommentDocument, ReviewPageDriftCommentsDocument, ReviewPageEventsCursorDocument, ReviewPageExecutionCommentsDocument,
  ReviewPageRangeCommentsDocument, ReviewPageReopenCommentDocument, ReviewPageResolveCommentDocument, ReviewPageSendCommentsDocument,
  type ReviewPageCommentFragment,
} from '../../client/index.js';
import { gateway } from './api.js';
import { CommentError, type ApiError, type ChangesetRef, type CommentsApi, type ReviewComment } from './comments.js';
import { sessionEventStream } from './live.js';

export function comment(c: ReviewPageCommentFragment): ReviewComment {
  return {
    id: c.id, state: c.state, body: c.body, author: { tokenID: c.author.tokenID ?? null, role: String(c.author.role).toLowerCase() },
    anchor: {
      kind: c.anchor.kind, executionID: c.anchor.executionID, fromExecutionID: c.anchor.fromExecutionID ?? null,
      path: c.anchor.path ?? null, side: c.anchor.side ?? null, line: c.anchor.line ?? null, startLine: c.anchor.startLine ?? null, quote: c.anchor.quote ?? null,
    },
    createdAt: c.createdAt, resolvedAt: c.resolvedAt ?? null, sentAt: c.sentAt ?? null,
    answeredBy: c.answeredBy ? { id: c.answeredBy.id, sequence: c.answeredBy.sequence } : null,
  };
}

/** The typed client's call, its error member rethrown as the page's CommentError. */
async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof GatewayCallError) throw new CommentError(e.error as unknown as ApiError);
    throw e;
  }
}

/**
 * The comments of one changeset through the public API: `changeset` names it as the comments' anchors do (a range from
 * an execution to itself is that execution's own changeset, as the gateway stores it).
 */
export function commentsApi(sessionID: string, changeset: ChangesetRef): CommentsApi {
  const gw = () => gateway();
  const ref: ChangesetRef = changeset.kind === 'RANGE' && changeset.fromExecutionID === changeset.executionID
    ? { kind: 'EXECUTION', executionID: changeset.executionID, fromExecutionID: null } : changeset;
  return {
    async cursor() {
      const { session } = await gw().request(ReviewPageEventsCursorDocument, { id: sessionID });
      return session?.eventsCursor ?? null;
    },
    async list() {
      let list: ReviewPageCommentFragment[] = [];
      if (ref.kind === 'EXECUTION') {
        list = (await gw().request(ReviewPageExecutionCommentsDocument, { id: ref.executionID })).execution?.changeset.comments ?? [];
      } else if (ref.kind === 'DRIFT') {
        list = (await gw().request(ReviewPageDriftCommentsDocument, { id: ref.executionID })).execution?.driftBefore?.comments ?? [];
      } else {
        const c = (await gw().request(ReviewPageRangeCommentsDocument, { id: sessionID, from: ref.fromExecutionID!, to: ref.executionID })).session?.changes;
        list = c?.__typename === 'Changeset' ? c.comments : [];
      }
      return list.map(comment);
    },
    add: (c) => call(async () => comment(await gw().call(ReviewPageAddCommentDocument, { input: {
      sessionID, changeset: { kind: ref.kind, executionID: ref.executionID, fromExecutionID: ref.fromExecutionID },
      path: c.path, side: c.side, line: c.line, startLine: c.startLine, body: c.body, idempotencyKey: c.idempotencyKey,
    } }))),
    resolve: (id) => call(async () => comment(await gw().call(ReviewPageResolveCommentDocument, { id }))),
    reopen: (id) => call(async () => comment(await gw().call(ReviewPageReopenCommentDocument, { id }))),
    send: (ids) => call(async () => {
      const r = await gw().call(ReviewPageSendCommentsDocument, { input: { sessionID, commentIDs: ids } });
      return { execution: { id: r.execution.id, sequence: r.execution.sequence }, comments: r.comments.map(comment) };
    }),
    follow: (cursor, onEvent) => sessionEventStream(sessionID, cursor, (ev) => onEvent(ev.type)),
  };
}
