import { ReviewPageSessionCommentsDocument, type ReviewPageSessionCommentsQuery } from '../../../client/index.js';
import { gateway } from '../api.js';
import { anchorLabel, type ReviewComment } from '../comments.js';
import { comment } from '../comments-api.js';
import { badge, h, link, time } from '../dom.js';
import { lineHref } from './files.js';
import { answerHref, fileHref } from './execution.js';
import { driftHref, rangeHref } from './range.js';

/** Where a comment is read and answered: its changeset's page, at its file and line. */
export function commentHref(sessionID: string, c: ReviewComment): string {
  const a = c.anchor;
  const path = a.path ?? undefined;
  const page = a.kind === 'RANGE' ? rangeHref(sessionID, a.fromExecutionID!, a.executionID, path)
    : a.kind === 'DRIFT' ? driftHref(a.executionID, path)
      : path ? fileHref(a.executionID, path) : `#/execution/${a.executionID}`;
  return path && a.line != null && a.side ? lineHref(page, `${a.side === 'OLD' ? 'L' : 'R'}${a.line}`) : page;
}

/**
 * The session page's review comments (every changeset's, oldest first): each with its state, where it is (linked to
 * its line on its changeset's page), who wrote it, and the execution that answered it. Read again by the page on
 * review_comment events.
 */
export class SessionComments {
  readonly el = h('section', { class: 'session-comments' });

  constructor(private readonly sessionID: string, private readonly sequenceOf: (executionID: string) => number | undefined) {}

  async refresh(): Promise<void> {
    const all: ReviewComment[] = [];
    let after: string | null = null;
    for (let page = 0; page < 20; page++) {
      const { session }: ReviewPageSessionCommentsQuery = await gateway().request(ReviewPageSessionCommentsDocument, { id: this.sessionID, after });
      if (!session) break;
      all.push(...session.comments.edges.map((e) => comment(e.node)));
      if (!session.comments.pageInfo.hasNextPage) break;
      after = session.comments.pageInfo.endCursor ?? null;
    }
    const open = all.filter((c) => c.state === 'OPEN');
    const waiting = open.filter((c) => !c.answeredBy).length;
    this.el.replaceChildren(
      h('h2', {}, 'Review comments ', h('span', { class: 'comment-counts muted' }, `${open.length} open (${waiting} not answered yet) · ${all.length - open.length} resolved`)),
      all.length
        ? h('ul', { class: 'session-comment-list' }, ...all.map((c) => this.row(c)))
        : h('p', { class: 'muted' }, 'No review comments yet: comment on a line of any changeset with its "+".'));
  }

  private changeset(c: ReviewComment): string {
    const a = c.anchor;
    const n = (id: string) => { const s = this.sequenceOf(id); return s ? `#${s}` : 'an execution'; };
    if (a.kind === 'RANGE') return `changes ${n(a.fromExecutionID!)}–${n(a.executionID)}`;
    if (a.kind === 'DRIFT') return `drift before ${n(a.executionID)}`;
    return `execution ${n(a.executionID)}`;
  }

  private row(c: ReviewComment): HTMLElement {
    const a = c.anchor;
    const where = a.path == null ? 'whole changeset' : a.line == null ? `${a.path} (whole file)` : `${a.path}, ${anchorLabel(a)}`;
    const first = c.body.split('\n')[0];
    return h('li', { class: `session-comment thread-${c.state.toLowerCase()}`, 'data-comment': c.id, 'data-state': c.state },
      c.state === 'RESOLVED' ? badge('resolved', 'ok') : badge('open', 'open'), ' ',
      link(commentHref(this.sessionID, c), `${this.changeset(c)} · ${where}`), ' ',
      h('span', { class: 'muted' }, `${c.author.role} `, time(c.createdAt)), ': ',
      h('span', { class: 'session-comment-body', title: c.body }, first.length > 140 ? `${first.slice(0, 139)}…` : first),
      c.answeredBy ? [' · ', h('span', { class: 'answered' }, '✔ answered by ', link(answerHref(c.answeredBy.id, a.path), `execution #${c.answeredBy.sequence}`))]
        : c.sentAt ? [' · ', h('span', { class: 'sent muted' }, 'sent, waiting for the agent')] : null);
  }
}
