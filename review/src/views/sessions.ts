import { ReviewLatestSettlementCursorDocument, ReviewSessionStatusDocument, ReviewSessionsDocument, type ReviewSessionSummaryFragment, type ReviewSessionsQuery, type ReviewSettlementsSubscription } from '../../../client/index.js';
import { gateway } from '../api.js';
import { h, link, loading, statusBadge, time } from '../dom.js';
import { sessionEventStream, settlementStream } from '../live.js';

/** Sessions read per request, and pages read before "Load more" is offered. */
const PAGE = 100;
const FIRST_PAGES = 5;
/** Sessions whose journal the list follows live (the newest), for their status badges. */
const FOLLOWED = 20;

function lastSettledEl(e: ReviewSessionSummaryFragment['lastSettledExecution']) {
  if (!e) return h('span', { class: 'muted last-settled-none' }, 'none yet');
  return h('span', { class: 'last-settled' }, link(`#/execution/${e.id}`, `#${e.sequence}`), ' ', statusBadge(e.status), ' ', time(e.settledAt));
}

interface Node { s: ReviewSessionSummaryFragment; row: HTMLElement; kids: HTMLElement; toggle: HTMLButtonElement; children: Node[]; parent: Node | null; open: boolean }

/**
 * The sessions as a tree (children under their parents, collapsible, newest first at every level),
 * with a search by title or directory over every session read, updated live as executions settle.
 */
export function sessionsView(root: HTMLElement): () => void {
  root.replaceChildren(h('h1', {}, 'Sessions'), loading());
  const stops: (() => void)[] = [];
  let closed = false;
  const nodes = new Map<string, Node>();
  const rootsList = h('ul', { class: 'sessions session-tree', role: 'tree' });
  const search = h('input', { type: 'search', class: 'session-search', placeholder: 'Search by title or directory…', 'aria-label': 'Search sessions by title or directory' });
  const count = h('span', { class: 'muted session-count' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, 'Load older sessions');
  const notice = h('p', { class: 'notice', hidden: true });
  let after: string | null = null;

  function setOpen(n: Node, open: boolean) {
    n.open = open;
    n.kids.hidden = !open;
    n.toggle.setAttribute('aria-expanded', String(open));
    n.toggle.textContent = open ? '▾' : '▸';
  }

  function node(s: ReviewSessionSummaryFragment): Node {
    const toggle = h('button', { type: 'button', class: 'tree-toggle', 'aria-expanded': 'true', title: 'Show / hide child sessions', hidden: true }, '▾');
    const kids = h('ul', { class: 'session-children', role: 'group' });
    const row = h('li', { class: 'session-row', 'data-session': s.id, role: 'treeitem' },
      h('div', { class: 'row-main' }, toggle,
        h('span', { class: 'session-status' }, statusBadge(s.status)),
        link(`#/session/${s.id}`, h('strong', { class: 'session-title' }, s.title || '(untitled)')),
        h('code', { class: 'directory' }, s.directory)),
      h('div', { class: 'row-meta' }, 'last settled: ', h('span', { class: 'last-settled-slot' }, lastSettledEl(s.lastSettledExecution)),
        h('span', { class: 'muted' }, ' · updated ', time(s.updatedAt))),
      kids);
    const n: Node = { s, row, kids, toggle, children: [], parent: null, open: true };
    toggle.addEventListener('click', () => setOpen(n, !n.open));
    return n;
  }

  function add(list: ReviewSessionSummaryFragment[]) {
    for (const s of list) if (!nodes.has(s.id)) nodes.set(s.id, node(s));
    // Newest first at every level; a child whose parent is not read (yet) stands at the top level.
    for (const s of list) {
      const n = nodes.get(s.id)!;
      const parent = s.parentID ? nodes.get(s.parentID) : undefined;
      if (parent && n.parent !== parent) {
        n.parent = parent;
        parent.children.push(n);
        parent.kids.append(n.row);
        parent.toggle.hidden = false;
      } else if (!parent && !n.row.parentElement) {
        rootsList.append(n.row);
        if (s.parent) n.row.querySelector('.row-main')!.append(h('span', { class: 'parent muted' }, '↑ ', link(`#/session/${s.parent.id}`, s.parent.title || s.parent.id)));
      }
    }
    // Children read before their parent: move them under it now.
    for (const n of nodes.values()) {
      const p = n.s.parentID ? nodes.get(n.s.parentID) : undefined;
      if (p && !n.parent) {
        n.row.querySelector('.parent')?.remove();
        n.parent = p;
        p.children.push(n);
        p.kids.append(n.row);
        p.toggle.hidden = false;
      }
    }
    applySearch();
  }

  function applySearch() {
    const q = search.value.trim().toLowerCase();
    let shown = 0;
    const matches = (n: Node) => !q || n.s.title.toLowerCase().includes(q) || n.s.directory.toLowerCase().includes(q);
    // A session is shown when it matches or a descendant does; ancestors of a match open.
    const visit = (n: Node): boolean => {
      let any = false;
      for (const c of n.children) any = visit(c) || any;
      const me = matches(n);
      n.row.hidden = !(me || any);
      if (q && any) setOpen(n, true);
      if (me) shown++;
      n.row.classList.toggle('match', !!q && me);
      return me || any;
    };
    for (const n of nodes.values()) if (!n.parent) visit(n);
    count.textContent = q ? `${shown} of ${nodes.size} sessions match` : `${nodes.size} sessions`;
  }
  search.addEventListener('input', applySearch);

  async function loadPages(pages: number) {
    more.disabled = true;
    for (let i = 0; i < pages; i++) {
      const page: ReviewSessionsQuery = await gateway().request(ReviewSessionsDocument, { first: PAGE, after });
      if (closed) return;
      add(page.sessions.edges.map((e) => e.node));
      after = page.sessions.pageInfo.endCursor ?? after;
      more.hidden = !page.sessions.pageInfo.hasNextPage;
      if (!page.sessions.pageInfo.hasNextPage) break;
    }
    more.disabled = false;
  }

  const fail = (e: unknown) => { if (!closed) root.dispatchEvent(new CustomEvent('view-error', { detail: e, bubbles: true })); };
  more.addEventListener('click', () => { loadPages(1).catch(fail); });

  (async () => {
    const gw = gateway();
    // The cursor first, the sessions second: whatever settles after they were read is delivered.
    const { latestSettlementCursor } = await gw.request(ReviewLatestSettlementCursorDocument, {});
    await loadPages(1);
    if (closed) return;
    root.replaceChildren(h('h1', {}, 'Sessions'), h('div', { class: 'session-tools' }, search, count), notice,
      nodes.size ? rootsList : h('p', { class: 'muted' }, 'No sessions yet.'), more);
    // The newest sessions' journals, after what was read: their badges follow seals as they happen.
    for (const n of [...nodes.values()].slice(0, FOLLOWED)) {
      stops.push(sessionEventStream(n.s.id, n.s.eventsCursor, (ev) => {
        if (!ev.type.startsWith('session.')) return;
        gw.request(ReviewSessionStatusDocument, { id: n.s.id }).then(({ session: s }) => {
          if (s) n.row.querySelector('.session-status')?.replaceChildren(statusBadge(s.status));
        }, () => {});
      }));
    }
    // The rest of the first pages after the newest are shown (search covers them as they come).
    if (!more.hidden) loadPages(FIRST_PAGES - 1).catch(fail);
    stops.push(settlementStream(null, latestSettlementCursor, (ev: ReviewSettlementsSubscription['executionSettled']) => {
      const s = ev.execution?.session;
      const n = nodes.get(ev.sessionID);
      if (n && s) {
        n.row.querySelector('.session-status')?.replaceChildren(statusBadge(s.status));
        n.row.querySelector('.last-settled-slot')?.replaceChildren(lastSettledEl(s.lastSettledExecution));
        n.row.classList.remove('flash');
        void n.row.offsetWidth; // restart the highlight animation
        n.row.classList.add('flash');
      } else {
        notice.hidden = false;
        notice.replaceChildren('New settlements in sessions not shown here. ', link(`#/?t=${Date.now()}`, 'Show newest'));
      }
    }));
  })().catch(fail);
  return () => { closed = true; for (const s of stops) s(); };
}
