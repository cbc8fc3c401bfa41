import { ReviewLatestSettlementCursorDocument, ReviewSessionStatusDocument, ReviewSessionsDocument, type ReviewSessionSummaryFragment, type ReviewSettlementsSubscription } from '../../../client/index.js';
import { gateway } from '../api.js';
import { h, link, loading, statusBadge, time } from '../dom.js';
import { sessionEventStream, settlementStream } from '../live.js';

const PAGE = 20;

function lastSettled(s: ReviewSessionSummaryFragment) {
  const e = s.lastSettledExecution;
  if (!e) return h('span', { class: 'muted' }, 'none yet');
  return h('span', { class: 'last-settled' }, link(`#/execution/${e.id}`, `#${e.sequence}`), ' ', statusBadge(e.status), ' ', time(e.settledAt));
}

function family(s: ReviewSessionSummaryFragment) {
  const parts: (Node | string)[] = [];
  if (s.parent) parts.push(h('span', { class: 'parent' }, '↑ ', link(`#/session/${s.parent.id}`, s.parent.title || s.parent.id)));
  const kids = s.children.edges.map((e) => e.node);
  if (kids.length) {
    parts.push(h('span', { class: 'children' }, '↓ ',
      ...kids.flatMap((k, i) => [i ? ', ' : '', link(`#/session/${k.id}`, k.title || k.id)]),
      s.children.pageInfo.hasNextPage ? ', …' : ''));
  }
  return parts.length ? h('div', { class: 'family' }, ...parts) : null;
}

export function sessionRow(s: ReviewSessionSummaryFragment): HTMLElement {
  return h('li', { class: 'session-row', 'data-session': s.id },
    h('div', { class: 'row-main' },
      h('span', { class: 'session-status' }, statusBadge(s.status)), ' ',
      link(`#/session/${s.id}`, h('strong', {}, s.title || '(untitled)')),
      h('code', { class: 'directory' }, s.directory)),
    family(s),
    h('div', { class: 'row-meta' }, 'last settled: ', lastSettled(s), h('span', { class: 'muted' }, ' · updated ', time(s.updatedAt))));
}

/** The sessions list, newest first, paged; rows update live as their executions settle. */
export function sessionsView(root: HTMLElement, after: string | null): () => void {
  root.replaceChildren(h('h1', {}, 'Sessions'), loading());
  const stops: (() => void)[] = [];
  let closed = false;
  (async () => {
    const gw = gateway();
    // The cursor first, the page second: whatever settles after the page was read is delivered.
    const { latestSettlementCursor } = await gw.request(ReviewLatestSettlementCursorDocument, {});
    const page = await gw.request(ReviewSessionsDocument, { first: PAGE, after });
    if (closed) return;
    const list = h('ul', { class: 'sessions' }, ...page.sessions.edges.map((e) => sessionRow(e.node)));
    const pager = h('nav', { class: 'pager' },
      after ? link('#/', '← Newest') : null,
      page.sessions.pageInfo.hasNextPage && page.sessions.pageInfo.endCursor
        ? link(`#/sessions?after=${encodeURIComponent(page.sessions.pageInfo.endCursor)}`, 'Older →') : null);
    const notice = h('p', { class: 'notice', hidden: true });
    root.replaceChildren(h('h1', {}, 'Sessions'), notice,
      page.sessions.edges.length ? list : h('p', { class: 'muted' }, 'No sessions yet.'), pager);
    // Each listed session's journal, after what this page read: its badge follows seals as they happen.
    for (const { node } of page.sessions.edges) {
      stops.push(sessionEventStream(node.id, node.eventsCursor, (ev) => {
        if (!ev.type.startsWith('session.')) return;
        gw.request(ReviewSessionStatusDocument, { id: node.id }).then(({ session: s }) => {
          const row = list.querySelector<HTMLElement>(`[data-session="${CSS.escape(node.id)}"]`);
          if (s && row) row.querySelector('.session-status')?.replaceChildren(statusBadge(s.status));
        }, () => {});
      }));
    }
    stops.push(settlementStream(null, latestSettlementCursor, (ev: ReviewSettlementsSubscription['executionSettled']) => {
      const s = ev.execution?.session;
      const row = list.querySelector<HTMLElement>(`[data-session="${CSS.escape(ev.sessionID)}"]`);
      if (row && s) {
        row.querySelector('.session-status')?.replaceChildren(statusBadge(s.status));
        const e = s.lastSettledExecution;
        if (e) row.querySelector('.row-meta')!.replaceChildren('last settled: ',
          h('span', { class: 'last-settled' }, link(`#/execution/${e.id}`, `#${e.sequence}`), ' ', statusBadge(e.status), ' ', time(e.settledAt)));
        row.classList.remove('flash');
        void row.offsetWidth; // restart the highlight animation
        row.classList.add('flash');
      } else {
        notice.hidden = false;
        notice.replaceChildren('New settlements in sessions not shown here. ', link(`#/?t=${Date.now()}`, 'Show newest'));
      }
    }));
  })().catch((e) => { if (!closed) root.dispatchEvent(new CustomEvent('view-error', { detail: e, bubbles: true })); });
  return () => { closed = true; for (const s of stops) s(); };
}
