import {
  ReviewDriftDocument, ReviewDriftFileDocument, ReviewSessionChangesDocument, ReviewSessionChangesFileDocument,
  type ReviewChangesetFactsFragment,
} from '../../../client/index.js';
import { gateway } from '../api.js';
import { h, link, loading, setTitle, statusBadge, time } from '../dom.js';
import { changeTotals, coverageBanner } from './coverage.js';
import { boundaryText, startComments } from './execution.js';
import type { ReviewComments } from '../comments.js';
import { FilesView, type ChangesSource, type FileEntry, type LineOrigins } from './files.js';
import { blameHref, byLine, originMark, promptsOf, type LineRun, type Origin } from './attribution.js';

export const rangeHref = (sessionID: string, from: string, to: string, path?: string) =>
  `#/session/${sessionID}/changes/${from}/${to}${path ? `/file/${encodeURIComponent(path)}` : ''}`;
export const driftHref = (executionID: string, path?: string) =>
  `#/execution/${executionID}/drift${path ? `/file/${encodeURIComponent(path)}` : ''}`;

/** An execution of the range whose own changeset is not complete; with, on a range's page, its own coverage (why). */
interface Incomplete {
  id: string; sequence: number; status: string;
  changeset?: { coverage: { __typename: string; omissions?: { path: string; reason: string }[]; reason?: string; detail?: string } };
}

const OMISSION_WORDS: Record<string, string> = {
  IGNORED: 'ignored', SIZE: 'over the size limit', BINARY: 'binary', TRUNCATED: 'patch too large', CAPTURE_LIMIT: 'not scanned',
};
const BOUNDARY_WORDS: Record<string, string> = {
  BOUNDARY_UNAVAILABLE: 'a boundary was not captured', EXPIRED: 'its snapshots expired', NOT_SETTLED: 'still running',
};

/**
 * Why an execution's own changeset is not complete, in words: its omissions ("build.log ignored"), or why it has
 * none (a boundary not captured, expired, running); never its status, which says nothing of coverage.
 */
export function incompleteCause(e: Incomplete): string {
  const c = e.changeset?.coverage;
  if (c?.__typename === 'CoverageOmitted' && c.omissions) {
    const shown = c.omissions.slice(0, 3).map((o) => `${o.path === '.' ? 'the capture' : o.path} ${OMISSION_WORDS[o.reason] ?? o.reason}`);
    return shown.join(', ') + (c.omissions.length > 3 ? ` and ${c.omissions.length - 3} more` : '');
  }
  if (c?.__typename === 'CoverageUnavailable') {
    const detail = (c.detail ?? '').replace(/^[A-Z_]+: /, '');
    return detail || (BOUNDARY_WORDS[c.reason ?? ''] ?? c.reason ?? 'unavailable');
  }
  return e.status === 'RUNNING' ? 'still running' : 'no changeset recorded';
}

function incompleteNote(list: Incomplete[]): HTMLElement | null {
  if (!list.length) return null;
  return h('section', { class: 'incomplete-note', role: 'note' },
    h('strong', {}, `${list.length} execution${list.length === 1 ? '' : 's'} of the range ${list.length === 1 ? 'has' : 'have'} no complete changeset of ${list.length === 1 ? 'its' : 'their'} own: `),
    ...list.flatMap((e, i) => [i ? '; ' : '', link(`#/execution/${e.id}`, `#${e.sequence}`), ' ',
      h('span', { class: 'incomplete-cause', 'data-execution': e.id }, incompleteCause(e))]),
    h('span', { class: 'muted' }, '. The range below is exactly what its coverage says; what those executions changed cannot all be told apart from the rest.'));
}

/** A file patch's attribution as the marks of its lines. */
export function lineOrigins(a: { removedLines: LineRun[]; addedLines: LineRun[] } | null | undefined): LineOrigins | null {
  if (!a) return null;
  const del = byLine(a.removedLines);
  const add = byLine(a.addedLines);
  return {
    del: (n) => { const o = del.get(n); return o ? originMark(o, null, true) : null; },
    add: (n) => { const o = add.get(n); return o ? originMark(o, null, true) : null; },
  };
}

function sourceOf(key: string, cs: ReviewChangesetFactsFragment, patch: ChangesSource['patch'], newSide: (path: string) => Promise<string | null>, href: (p: string) => string, comments?: ReviewComments,
  attribution?: { marks: (path: string) => HTMLElement[]; blame: (f: FileEntry) => string | null }): ChangesSource {
  const patches = new Map<string, ReturnType<ChangesSource['patch']>>();
  return {
    key,
    files: cs.files,
    omissions: cs.coverage.__typename === 'CoverageOmitted' ? cs.coverage.omissions : [],
    patch(path) {
      let p = patches.get(path);
      if (!p) {
        p = patch(path);
        p.catch(() => patches.delete(path));
        patches.set(path, p);
      }
      return p;
    },
    text: (side, path) => (side === 'new' ? newSide(path) : Promise.resolve(null)),
    href,
    comments,
    fileMarks: attribution?.marks,
    blameHref: attribution?.blame,
  };
}

function filesSection(cs: ReviewChangesetFactsFragment, src: ChangesSource, path: string | null, line: string | null, what: string): { el: HTMLElement; view: FilesView | null } {
  const totals = changeTotals(cs);
  const missing = path && !cs.files.some((f) => f.path === path) ? h('p', { class: 'error-box' }, `${path} did not change ${what}.`) : null;
  const view = cs.files.length ? new FilesView(src, missing ? null : path, line) : null;
  return {
    el: h('section', { class: 'changes-section' }, h('h2', {}, 'Files changed'), totals, missing,
      view ? view.el : [src.comments?.el ?? null, h('p', { class: 'muted' }, cs.coverage.__typename === 'CoverageUnavailable' ? 'No files can be shown.' : 'No files changed.')]),
    view,
  };
}

/** A page of one stacked changeset that is not an execution's own: a session's range, or the drift before an execution. */
export abstract class ChangesPage {
  protected files: FilesView | null = null;
  protected comments: ReviewComments | null = null;
  protected closed = false;
  constructor(protected root: HTMLElement, readonly key: string, path: string | null, protected readonly line: string | null) {
    root.replaceChildren(loading());
    // After the subclass's constructor has set its own fields.
    queueMicrotask(() => this.load(path).catch((e) => { if (!this.closed) root.dispatchEvent(new CustomEvent('view-error', { detail: e, bubbles: true })); }));
  }
  close() { this.closed = true; this.files?.destroy(); this.comments?.close(); }
  select(path: string, line: string | null = null) { if (this.files?.has(path)) this.files.focus(path, line); }
  protected abstract load(path: string | null): Promise<void>;
}

/** "Changes from execution #3 to #7": the start boundary of one to the end boundary of a later one. */
export class RangeView extends ChangesPage {
  constructor(root: HTMLElement, private sessionID: string, private from: string, private to: string, path: string | null, line: string | null = null) {
    super(root, `range.${sessionID}.${from}.${to}`, path, line);
  }

  protected async load(path: string | null) {
    const { sessionID: id, from, to } = this;
    const r = await gateway().request(ReviewSessionChangesDocument, { id, from, to });
    if (this.closed) return;
    const crumbs = h('nav', { class: 'crumbs' }, link('#/', 'Sessions'), ' › ', r.session ? link(`#/session/${id}`, r.session.title || id) : id, ' › ', 'Changes');
    if (!r.session) {
      this.root.replaceChildren(crumbs, h('p', { class: 'error-box' }, `No session ${id} (or not visible to this token).`));
      return;
    }
    const c = r.session.changes;
    if (c.__typename !== 'Changeset') {
      this.root.replaceChildren(crumbs, h('p', { class: 'error-box', 'data-error': c.__typename }, `${c.__typename}: ${'message' in c ? c.message : ''}`));
      return;
    }
    const a = r.first;
    const b = r.last;
    setTitle(`Changes #${a?.sequence ?? '?'} to #${b?.sequence ?? '?'}`, r.session.title || id);
    this.comments = startComments(this.root, id, { kind: 'RANGE', executionID: to, fromExecutionID: from });
    // Who changed each file of the range: every execution and outside edit between its two ends, marked on its header.
    const changedBy = new Map<string, Origin[]>(c.files.map((f) => [f.path, ('attribution' in f ? (f as { attribution?: { changedBy: Origin[] } | null }).attribution?.changedBy : null) ?? []]));
    const src = sourceOf(this.key, c,
      (p) => gateway().request(ReviewSessionChangesFileDocument, { id, from, to, path: p }).then((x) => {
        const file = x.session?.changes.__typename === 'Changeset' ? x.session.changes.file ?? null : null;
        return file && { ...file, lines: lineOrigins(file.attribution) };
      }),
      (p) => boundaryText(to, true, p),
      (p) => rangeHref(id, from, to, p), this.comments,
      {
        marks: (p) => {
          const list = changedBy.get(p) ?? [];
          return list.length ? [h('span', { class: 'file-origins', title: 'Who changed this file in the range, oldest first' }, ...list.map((o) => originMark(o)))] : [];
        },
        blame: (f) => (f.status === 'DELETED' ? blameHref(id, from, 'START', f.path) : blameHref(id, to, 'END', f.path)),
      });
    const files = filesSection(c, src, path, this.line, 'in this range');
    this.files = files.view;
    this.root.replaceChildren(crumbs,
      h('h1', { class: 'range-title' }, `Changes from execution #${a?.sequence ?? '?'} to #${b?.sequence ?? '?'}`,
        h('span', { class: 'muted' }, ' · from the start of ', a ? link(`#/execution/${a.id}`, `#${a.sequence}`) : '?', ' (', a ? time(a.startedAt) : '—',
          ') to the end of ', b ? link(`#/execution/${b.id}`, `#${b.sequence}`) : '?', ' (', b ? time(b.settledAt) : '—', ')')),
      coverageBanner(c.coverage, 'this range'),
      incompleteNote('incompleteExecutions' in c.coverage ? c.coverage.incompleteExecutions : []) ?? '',
      files.el);
    // Each execution's mark also says the prompt it answered (its turn's), once the session's turns are read.
    void promptsOf(id).then((prompts) => {
      if (this.closed) return;
      for (const m of this.root.querySelectorAll<HTMLElement>('.origin-mark.origin-execution[data-execution]')) {
        const p = prompts.get(m.dataset.execution!);
        if (p && !m.title.includes(', answering: ')) m.title += `, answering: ${p}`;
      }
    }, () => { /* the marks keep their titles */ });
  }
}

/** What changed in the worktree between the previous execution's end and this one's start, outside the agent. */
export class DriftView extends ChangesPage {
  constructor(root: HTMLElement, readonly executionID: string, path: string | null, line: string | null = null) {
    super(root, `drift.${executionID}`, path, line);
  }

  protected async load(path: string | null) {
    const id = this.executionID;
    const { execution: e } = await gateway().request(ReviewDriftDocument, { id });
    if (this.closed) return;
    if (!e) {
      this.root.replaceChildren(h('nav', { class: 'crumbs' }, link('#/', 'Sessions')), h('p', { class: 'error-box' }, `No execution ${id} (or not visible to this token).`));
      return;
    }
    const crumbs = h('nav', { class: 'crumbs' }, link('#/', 'Sessions'), ' › ', link(`#/session/${e.session.id}`, e.session.title || e.session.id), ' › ',
      link(`#/execution/${id}`, `Execution #${e.sequence}`), ' › ', 'Drift before it');
    const title = h('h1', {}, `Changed outside any execution before #${e.sequence}`);
    setTitle(`Drift before #${e.sequence}`, e.session.title || e.session.id);
    const d = e.driftBefore;
    if (!d) {
      this.root.replaceChildren(crumbs, title, h('p', { class: 'muted' }, 'This is the session\'s first execution: there is no earlier boundary to compare with.'));
      return;
    }
    this.comments = startComments(this.root, e.session.id, { kind: 'DRIFT', executionID: id, fromExecutionID: null });
    const src = sourceOf(this.key, d,
      (p) => gateway().request(ReviewDriftFileDocument, { id, path: p }).then((x) => x.execution?.driftBefore?.file ?? null),
      (p) => boundaryText(id, false, p),
      (p) => driftHref(id, p), this.comments,
      { marks: () => [], blame: (f) => (f.status === 'DELETED' ? null : blameHref(e.session.id, id, 'START', f.path)) });
    const files = filesSection(d, src, path, this.line, 'between the two executions');
    this.files = files.view;
    this.root.replaceChildren(crumbs, title,
      h('p', { class: 'drift-explain' }, `From the end boundary of execution #${e.sequence - 1} to the start boundary of #${e.sequence}: no execution of this session ran, so these changes were made by someone or something else (the user, another tool).`),
      coverageBanner(d.coverage, 'the worktree between the two executions'),
      files.el);
  }
}
