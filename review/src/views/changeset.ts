import { Diff2HtmlUI } from 'diff2html/lib-esm/ui/js/diff2html-ui-slim.js';
import { ReviewChangesetDocument, ReviewFilePatchDocument, ReviewLatestSettlementCursorDocument, type ReviewChangesetQuery } from '../../../client/index.js';
import { gateway } from '../api.js';
import { badge, bytes, duration, h, link, loading, statusBadge, time } from '../dom.js';
import { settlementStream } from '../live.js';

type Execution = NonNullable<ReviewChangesetQuery['execution']>;
type FileChange = Execution['changeset']['files'][number];
type Omission = { path: string; reason: string; detail: string };
type Layout = 'side-by-side' | 'line-by-line';

export function fileHref(executionID: string, path: string): string {
  return `#/execution/${executionID}/file/${encodeURIComponent(path)}`;
}

const STATUS_LETTER: Record<string, string> = { ADDED: 'A', MODIFIED: 'M', DELETED: 'D' };

/** The omissions that concern one file: on its path, or on a directory containing it. */
function omissionsOf(path: string, omissions: Omission[]): Omission[] {
  return omissions.filter((o) => o.path === path || o.path === '.' || path.startsWith(`${o.path}/`));
}

function coverageBanner(e: Execution): HTMLElement {
  const c = e.changeset.coverage;
  if (c.__typename === 'CoverageComplete') {
    return h('section', { class: 'coverage coverage-complete', 'data-coverage': 'COMPLETE', role: 'status' },
      h('h2', {}, '✔ Coverage complete'),
      h('p', {}, c.fileCount === 0
        ? 'Both boundaries were captured and nothing was left out: this execution changed nothing.'
        : `Both boundaries were captured and nothing was left out: the ${c.fileCount} changed file${c.fileCount === 1 ? ' is' : 's are'} all shown below.`));
  }
  if (c.__typename === 'CoverageOmitted') {
    const byReason = new Map<string, number>();
    for (const o of c.omissions) byReason.set(o.reason, (byReason.get(o.reason) ?? 0) + 1);
    return h('section', { class: 'coverage coverage-omitted', 'data-coverage': 'OMITTED', role: 'alert' },
      h('h2', {}, `⚠ Coverage incomplete: ${c.omissions.length} omission${c.omissions.length === 1 ? '' : 's'}`),
      h('p', {}, 'The changes below are real, but some evidence is missing. What was left out, and why: ',
        ...[...byReason].map(([r, n]) => badge(`${r} × ${n}`, 'warn'))),
      h('div', { class: 'omissions-scroll' }, h('table', { class: 'omissions' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Path'), h('th', {}, 'Reason'), h('th', {}, 'Detail'))),
        h('tbody', {}, ...c.omissions.map((o) => h('tr', { class: 'omission', 'data-reason': o.reason, 'data-path': o.path },
          h('td', {}, h('code', {}, o.path)), h('td', {}, badge(o.reason, 'warn')), h('td', {}, o.detail)))))));
  }
  if (c.__typename === 'CoverageUnavailable') {
    return h('section', { class: 'coverage coverage-unavailable', 'data-coverage': 'UNAVAILABLE', role: 'alert' },
      h('h2', {}, `✖ Coverage unavailable: ${c.reason}`),
      h('p', {}, c.detail || 'The gateway cannot say what this execution changed.'));
  }
  return h('section', { class: 'coverage' }, 'Unknown coverage');
}

function snapshotFacts(label: string, s: { id: string; capturedAt: string; fileCount: number; byteSize: number }): HTMLElement {
  return h('div', { class: `snapshot snapshot-${label.toLowerCase()}` },
    h('h3', {}, label),
    h('code', { class: 'snapshot-id' }, s.id), h('br'),
    'captured ', time(s.capturedAt), h('br'),
    `${s.fileCount} files · ${bytes(s.byteSize)}`);
}

function boundaryView(e: Execution): HTMLElement {
  const b = e.boundary;
  if (b.__typename === 'SnapshotBoundary') {
    return h('section', { class: 'boundary', 'data-boundary': 'SNAPSHOT' }, snapshotFacts('Start', b.start), snapshotFacts('End', b.end));
  }
  if (b.__typename === 'BoundaryUnavailable') {
    return h('section', { class: 'boundary boundary-unavailable', 'data-boundary': 'UNAVAILABLE' },
      h('strong', {}, `Boundary unavailable: ${b.reason}`), ' ', h('span', {}, b.detail));
  }
  return h('section', { class: 'boundary' });
}

/**
 * An execution's frozen changeset: coverage first, the boundary, the file list, and one file's diff
 * at a time (its patch fetched with Changeset.file(path) when opened, then kept).
 */
export class ChangesetView {
  private execution: Execution | null = null;
  private current: string | null = null;
  private patches = new Map<string, Promise<{ patch: string | null; binary: boolean } | null>>();
  private fileList = h('ol', { class: 'files', role: 'listbox', 'aria-label': 'Changed files' });
  private diffPane = h('section', { class: 'diff-pane', tabindex: '-1' });
  private closed = false;
  private stopLive = () => {};
  private layout: Layout;
  private readonly onKey = (ev: KeyboardEvent) => this.key(ev);

  constructor(private root: HTMLElement, readonly executionID: string, path: string | null) {
    const saved = localStorage.getItem('gateway.review.layout') as Layout | null;
    this.layout = saved ?? (window.innerWidth < 900 ? 'line-by-line' : 'side-by-side');
    root.replaceChildren(loading());
    document.addEventListener('keydown', this.onKey);
    this.load(path).catch((e) => root.dispatchEvent(new CustomEvent('view-error', { detail: e, bubbles: true })));
  }

  close() {
    this.closed = true;
    this.stopLive();
    document.removeEventListener('keydown', this.onKey);
  }

  private async load(path: string | null) {
    // A running execution has no changeset yet: the page reloads it when it settles (cursor read first).
    const { latestSettlementCursor } = await gateway().request(ReviewLatestSettlementCursorDocument, {});
    const { execution: e } = await gateway().request(ReviewChangesetDocument, { id: this.executionID });
    if (this.closed) return;
    if (e?.status === 'RUNNING') {
      this.stopLive = settlementStream(e.session.id, latestSettlementCursor, (ev) => {
        if (ev.executionID !== this.executionID) return;
        this.stopLive();
        this.load(path ?? this.current).catch((x) => this.root.dispatchEvent(new CustomEvent('view-error', { detail: x, bubbles: true })));
      });
    }
    if (!e) {
      this.root.replaceChildren(h('nav', { class: 'crumbs' }, link('#/', 'Sessions')), h('p', { class: 'error-box' }, `No execution ${this.executionID} (or not visible to this token).`));
      return;
    }
    this.execution = e;
    const cs = e.changeset;
    const omissions: Omission[] = cs.coverage.__typename === 'CoverageOmitted' ? cs.coverage.omissions : [];
    this.fileList.replaceChildren(...cs.files.map((f) => this.fileItem(f, omissionsOf(f.path, omissions))));
    const toggle = h('div', { class: 'layout-toggle', role: 'group', 'aria-label': 'Diff layout' },
      ...(['side-by-side', 'line-by-line'] as Layout[]).map((l) => h('button', {
        type: 'button', 'data-layout': l, 'aria-pressed': String(this.layout === l),
        onclick: () => this.setLayout(l),
      }, l === 'side-by-side' ? 'Side by side' : 'Inline')));
    this.root.replaceChildren(
      h('nav', { class: 'crumbs' }, link('#/', 'Sessions'), ' › ', link(`#/session/${e.session.id}`, e.session.title || e.session.id), ' › ', `Execution #${e.sequence}`),
      h('h1', {}, statusBadge(e.status), ` Execution #${e.sequence}`, h('span', { class: 'muted' }, ` · ${e.trigger} · `, time(e.startedAt), ` · ${duration(e.startedAt, e.settledAt)}`)),
      coverageBanner(e),
      boundaryView(e),
      h('div', { class: 'totals' },
        h('strong', { class: 'file-count' }, `${cs.fileCount} file${cs.fileCount === 1 ? '' : 's'} changed`), ' ',
        h('span', { class: 'add' }, `+${cs.additions}`), ' ', h('span', { class: 'del' }, `−${cs.deletions}`),
        h('span', { class: 'spacer' }), h('span', { class: 'muted keys' }, 'j / k: next / previous file (↓ / ↑ in the list)'), toggle),
      cs.files.length
        ? h('div', { class: 'review-split' }, h('nav', { class: 'file-nav' }, this.fileList), this.diffPane)
        : h('p', { class: 'muted' }, cs.coverage.__typename === 'CoverageUnavailable' ? 'No files can be shown.' : 'No files changed.'));
    const first = path && cs.files.some((f) => f.path === path) ? path : cs.files[0]?.path ?? null;
    if (path && first !== path) this.diffPane.replaceChildren(h('p', { class: 'error-box' }, `${path} did not change in this execution.`));
    else if (first) await this.select(first, { scroll: !!path });
  }

  private fileItem(f: FileChange, omissions: Omission[]): HTMLElement {
    const marks = [
      f.binary ? badge('binary', 'muted') : null,
      ...omissions.map((o) => badge(o.reason === 'CAPTURE_LIMIT' && o.path === '.' ? 'partial capture' : `omitted: ${o.reason}`, 'warn', o.detail)),
    ];
    return h('li', { class: 'file', role: 'option', 'data-path': f.path, 'data-status': f.status, 'aria-selected': 'false' },
      h('a', { href: fileHref(this.executionID, f.path) },
        h('span', { class: `file-status fs-${f.status.toLowerCase()}`, title: f.status }, STATUS_LETTER[f.status] ?? '?'),
        h('span', { class: 'file-path' }, f.path),
        h('span', { class: 'file-stat' }, h('span', { class: 'add' }, `+${f.additions}`), ' ', h('span', { class: 'del' }, `−${f.deletions}`)),
        ...marks));
  }

  private patch(path: string) {
    let p = this.patches.get(path);
    if (!p) {
      p = gateway().request(ReviewFilePatchDocument, { id: this.executionID, path }).then((r) => r.execution?.changeset.file ?? null);
      p.catch(() => this.patches.delete(path));
      this.patches.set(path, p);
    }
    return p;
  }

  /** Opens one file (called by the router for #/execution/<id>/file/<path>). */
  async select(path: string, opts: { scroll?: boolean } = {}) {
    const e = this.execution;
    if (!e) return;
    const f = e.changeset.files.find((x) => x.path === path);
    if (!f) return;
    this.current = path;
    for (const li of this.fileList.children) {
      const on = (li as HTMLElement).dataset.path === path;
      li.setAttribute('aria-selected', String(on));
      li.classList.toggle('selected', on);
      if (on && opts.scroll !== false) (li as HTMLElement).scrollIntoView({ block: 'nearest' });
    }
    const omissions = omissionsOf(path, e.changeset.coverage.__typename === 'CoverageOmitted' ? e.changeset.coverage.omissions : []);
    const head = h('div', { class: 'diff-head' },
      h('span', { class: `file-status fs-${f.status.toLowerCase()}` }, STATUS_LETTER[f.status]), ' ',
      h('code', { class: 'diff-path' }, f.path), ' ',
      h('span', { class: 'add' }, `+${f.additions}`), ' ', h('span', { class: 'del' }, `−${f.deletions}`), ' ',
      link(fileHref(this.executionID, f.path), '#'));
    this.diffPane.replaceChildren(head, loading('Loading the patch…'));
    this.diffPane.dataset.path = path;
    const file = await this.patch(path);
    if (this.current !== path || this.closed) return;
    const body = h('div', { class: 'diff-body' });
    if (file?.patch) {
      new Diff2HtmlUI(body, file.patch, {
        outputFormat: this.layout,
        drawFileList: false,
        matching: 'lines',
        highlight: true,
        fileContentToggle: false,
        stickyFileHeaders: false,
        synchronisedScroll: true,
        colorScheme: 'light' as any, // the page's own palette is light
      }).draw();
    } else {
      const why = omissions.filter((o) => o.path === path);
      body.append(h('div', { class: 'not-rendered', 'data-not-rendered': f.binary ? 'binary' : 'omitted' },
        h('strong', {}, f.binary ? 'Binary file: its content is not rendered.' : 'This file\'s patch was not rendered.'),
        ...why.map((o) => h('p', {}, badge(o.reason, 'warn'), ' ', o.detail)),
        !why.length && !f.binary ? h('p', {}, 'See the coverage omissions above.') : null));
    }
    this.diffPane.replaceChildren(head, body);
    // Prefetch the next file so j feels instant.
    const i = e.changeset.files.indexOf(f);
    const next = e.changeset.files[i + 1];
    if (next) void this.patch(next.path).catch(() => {});
  }

  private setLayout(l: Layout) {
    this.layout = l;
    localStorage.setItem('gateway.review.layout', l);
    this.root.querySelectorAll('.layout-toggle button').forEach((b) => b.setAttribute('aria-pressed', String((b as HTMLElement).dataset.layout === l)));
    if (this.current) void this.select(this.current, { scroll: false });
  }

  private key(ev: KeyboardEvent) {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const t = ev.target as HTMLElement | null;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const files = this.execution?.changeset.files ?? [];
    if (!files.length) return;
    // j / k anywhere on the page; the arrow keys while the file list has the focus (elsewhere they scroll).
    const arrows = !!t && this.fileList.contains(t);
    const step = ev.key === 'j' || (arrows && ev.key === 'ArrowDown') ? 1 : ev.key === 'k' || (arrows && ev.key === 'ArrowUp') ? -1 : 0;
    if (!step) return;
    ev.preventDefault();
    const i = files.findIndex((f) => f.path === this.current);
    const next = files[Math.min(files.length - 1, Math.max(0, i + step))];
    if (!next || next.path === this.current) return;
    history.replaceState(null, '', fileHref(this.executionID, next.path));
    void this.select(next.path).then(() => {
      if (arrows) this.fileList.querySelector<HTMLElement>(`li[data-path="${CSS.escape(next.path)}"] a`)?.focus();
    });
  }
}
