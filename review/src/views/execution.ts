import {
  ReviewChangesetDocument, ReviewFilePatchDocument, ReviewLatestSettlementCursorDocument, ReviewSessionPromptsDocument,
  ReviewSnapshotTextDocument, ReviewTimelineDocument,
  type ReviewChangesetQuery, type ReviewSessionPromptsQuery, type ReviewTimelineMessageFragment, type ReviewTimelineQuery,
} from '../../../client/index.js';
import { gateway } from '../api.js';
import { badge, duration, h, link, loading, setTitle, statusBadge, time } from '../dom.js';
import { settlementStream } from '../live.js';
import { changeTotals, coverageBanner, snapshotFacts } from './coverage.js';
import { FilesView, type ChangesSource, type Omission } from './files.js';
import { driftHref, rangeHref } from './range.js';
import { blameHref } from './attribution.js';
import { promptLine, turnOf, type Turn } from '../turns.js';
import { ReviewComments, type ChangesetRef } from '../comments.js';
import { commentsApi } from '../comments-api.js';

type Execution = NonNullable<ReviewChangesetQuery['execution']>;
type Job = NonNullable<ReviewTimelineQuery['execution']>['jobs']['edges'][number]['node'];
type Part = ReviewTimelineMessageFragment['parts'][number];

export function fileHref(executionID: string, path: string): string {
  return `#/execution/${executionID}/file/${encodeURIComponent(path)}`;
}

/** An execution's changeset page, at one of its files (null: the whole changeset): where a comment's answer is. */
export function answerHref(executionID: string, path: string | null): string {
  return path == null ? `#/execution/${executionID}` : fileHref(executionID, path);
}

/** The review comments of a changeset page, started (loaded, then live); a failure is the view's error. */
export function startComments(root: HTMLElement, sessionID: string, ref: ChangesetRef): ReviewComments {
  const c = new ReviewComments(commentsApi(sessionID, ref), answerHref);
  c.start().catch((e) => root.dispatchEvent(new CustomEvent('view-error', { detail: e, bubbles: true })));
  return c;
}

/** The stored text of a file at an execution's start or end boundary (Snapshot.text). */
export async function boundaryText(executionID: string, atEnd: boolean, path: string): Promise<string | null> {
  const { execution } = await gateway().request(ReviewSnapshotTextDocument, { of: executionID, atEnd, path });
  const b = execution?.boundary;
  if (!b || b.__typename !== 'SnapshotBoundary') return null;
  return (atEnd ? b.end?.text : b.start?.text) ?? null;
}

/** What interrupted an execution, in a reviewer's words (Execution.interruptReason). */
const INTERRUPTED_BY: Record<string, string> = {
  USER: 'Interrupted by the user.',
  SEAL: 'Interrupted by the seal: the session was sealed while it ran.',
  SUPERSEDED: 'Superseded by a new prompt: interrupted before it finished.',
  SHUTDOWN: 'Interrupted by its host shutting down.',
};

/** Why an execution did not succeed (its status, error, error name and interrupt reason), under its title; null when it did or still runs. */
function outcomeBanner(e: Execution): HTMLElement | null {
  let said: string;
  if (e.status === 'FAILED') said = 'Failed.';
  else if (e.status === 'INTERRUPTED') said = (e.interruptReason && INTERRUPTED_BY[e.interruptReason]) || 'Interrupted (no reason was recorded).';
  else if (e.status === 'ABANDONED') said = 'Abandoned: its host was lost (its lease lapsed) before the execution settled.';
  else return null;
  const error = e.error || e.errorName
    ? h('div', { class: 'outcome-error' }, e.errorName ? h('code', { class: 'error-name' }, e.errorName) : '', e.errorName && e.error ? ': ' : '', e.error ?? '')
    : e.status === 'FAILED' ? h('div', { class: 'outcome-error muted' }, 'The host reported no error message.') : null;
  return h('div', { class: `outcome outcome-${e.status.toLowerCase()}`, 'data-outcome': e.status, 'data-reason': e.interruptReason ?? null },
    h('strong', {}, said), error);
}

/** Before the execution's own changes: what changed in the worktree since the previous execution ended, outside the agent. */
function driftBanner(e: Execution): HTMLElement | null {
  const d = e.driftBefore;
  if (!d) return null;
  if (d.coverage.__typename === 'CoverageUnavailable') {
    return h('section', { class: 'drift-banner drift-unknown', 'data-drift': 'UNAVAILABLE', role: 'note' },
      `Whether the worktree changed between execution #${e.sequence - 1} and this one is unknown: a boundary is missing or expired.`);
  }
  if (d.fileCount === 0) return null;
  return h('section', { class: 'drift-banner', 'data-drift': 'CHANGED', role: 'alert' },
    h('h2', {}, `⚠ Changed outside any execution before this one: ${d.fileCount} file${d.fileCount === 1 ? '' : 's'}`),
    h('p', {}, `Between the end of execution #${e.sequence - 1} and the start of #${e.sequence} the worktree changed while no execution of this session ran (the user, another tool): `,
      h('span', { class: 'add' }, `+${d.additions}`), ' ', h('span', { class: 'del' }, `−${d.deletions}`), '. These changes are not in the diff below. ',
      link(driftHref(e.id), 'Review the drift →')));
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

/** A tool call's shell command (Bash, OpenCode's bash, a job's command), else its input as JSON. */
function commandOf(input: unknown): string | null {
  if (input && typeof input === 'object') {
    const c = (input as Record<string, unknown>).command ?? (input as Record<string, unknown>).cmd;
    if (typeof c === 'string') return c;
    return JSON.stringify(input);
  }
  return input == null ? null : String(input);
}

function pre(text: string, cls: string): HTMLElement {
  return h('pre', { class: cls }, text);
}

/** Long outputs fold; short ones show. */
function foldable(label: string, text: string, cls: string): HTMLElement {
  const lines = text.split('\n').length;
  return h('details', { class: `fold ${cls}`, open: lines <= 12 && text.length <= 1500 }, h('summary', {}, `${label} · ${lines} line${lines === 1 ? '' : 's'}`), pre(text, 'output'));
}

function jobFacts(j: Job): HTMLElement {
  return h('span', { class: 'job-facts', 'data-job': j.id },
    'job ', statusBadge(j.status), j.exitCode == null ? null : h('span', { class: 'exit' }, ` exit ${j.exitCode} `),
    j.background ? badge('background', 'muted') : null, j.restored ? badge('restored', 'muted') : null,
    h('span', { class: 'muted' }, ` ${duration(j.startedAt, j.completedAt)}`));
}

interface Entry { at: number; order: number; el: HTMLElement }

/** The execution as a reader follows it: the prompt, what the assistant said and reasoned, each tool call with its job. */
function timeline(e: Execution, messages: ReviewTimelineMessageFragment[], prompt: ReviewTimelineMessageFragment | null, jobs: Job[]): HTMLElement {
  const unmatched = new Set(jobs);
  const entries: Entry[] = [];
  let order = 0;
  const at = (iso: string | null | undefined, fallback: number) => (iso ? new Date(iso).getTime() : fallback);
  const partEl = (m: ReviewTimelineMessageFragment, p: Part): HTMLElement | null => {
    const retracted = !!m.retraction;
    switch (p.__typename) {
      case 'TextPart': {
        const isPrompt = m.role === 'USER' || m.origin === 'PROMPT';
        return h('li', { class: `tl tl-${isPrompt ? 'prompt' : 'text'}${retracted ? ' retracted' : ''}`, 'data-part': p.id, 'data-message': m.id },
          h('div', { class: 'tl-head' }, h('strong', {}, isPrompt ? 'Prompt' : m.role === 'ASSISTANT' ? 'Assistant' : m.role.toLowerCase()),
            h('span', { class: 'muted' }, ` · ${m.origin} · `, time(m.createdAt)),
            p.correctedAt && !retracted ? badge(`corrected · rev ${p.revision}`, 'warn', `Corrected at ${p.correctedAt}`) : null,
            retracted ? badge('retracted', 'bad', m.retraction!.reason ?? '') : null),
          pre(p.text, 'text'));
      }
      case 'ReasoningPart':
        return h('li', { class: 'tl tl-reasoning', 'data-part': p.id },
          h('details', { class: 'fold' }, h('summary', {}, h('strong', {}, 'Reasoning'), h('span', { class: 'muted' }, ` · ${p.reasoning.split('\n')[0].slice(0, 120)}`),
            p.startedAt && p.endedAt ? h('span', { class: 'muted' }, ` · ${duration(p.startedAt, p.endedAt)}`) : null),
          pre(p.reasoning, 'text reasoning')));
      case 'ToolPart': {
        const command = commandOf(p.input);
        const job = command ? [...unmatched].find((j) => j.command === command) : undefined;
        if (job) unmatched.delete(job);
        return h('li', { class: 'tl tl-tool', 'data-part': p.id },
          h('div', { class: 'tl-head' }, badge(p.tool, 'tool'), p.title ? h('span', {}, ` ${p.title} `) : ' ',
            p.status ? h('span', { class: 'tool-status' }, p.status) : null,
            p.startedAt ? h('span', { class: 'muted duration' }, ` · ${duration(p.startedAt, p.endedAt)}`) : null,
            job ? [' · ', jobFacts(job)] : null),
          command ? pre(command, 'command') : null,
          p.output ? foldable('output', p.output, 'tool-output') : null);
      }
      case 'FilePart':
        return h('li', { class: 'tl tl-file', 'data-part': p.id }, badge('file', 'muted'), ' ', h('code', {}, p.path), p.mime ? ` (${p.mime})` : '');
      default:
        return null;
    }
  };
  const add = (m: ReviewTimelineMessageFragment, beforeStart: boolean) => {
    for (const p of [...m.parts].sort((a, b) => a.index - b.index)) {
      const el = partEl(m, p);
      if (!el) continue;
      if (beforeStart) el.append(h('p', { class: 'muted note' }, 'Sent before the execution began.'));
      // The gateway's clock orders messages and jobs; the host's part times only show durations.
      entries.push({ at: at(m.createdAt, 0), order: order++, el });
    }
  };
  if (prompt) add(prompt, true);
  for (const m of messages) add(m, false);
  // Jobs no tool call ran (a host that reports jobs only): at their start, with their command.
  for (const j of unmatched) {
    entries.push({ at: at(j.startedAt, 0), order: order++, el: h('li', { class: 'tl tl-job', 'data-job': j.id },
      h('div', { class: 'tl-head' }, badge(j.kind.toLowerCase(), 'tool'), h('span', {}, ` ${j.title} · `), jobFacts(j)),
      j.command ? pre(j.command, 'command') : null) });
  }
  // Stable by time, ties in the order the parts were read (a message's parts keep their order).
  entries.sort((a, b) => a.at - b.at || a.order - b.order);
  void e;
  return h('ol', { class: 'timeline' }, ...entries.map((x) => x.el),
    entries.length ? null : h('li', { class: 'muted' }, 'No messages or jobs were recorded for this execution.'));
}

/** Every message and job of an execution (pages of 100), and the prompt sent just before it for one that carries none of its own. */
async function timelineData(e: Execution) {
  const gw = gateway();
  const messages: ReviewTimelineMessageFragment[] = [];
  const jobs: Job[] = [];
  let mAfter: string | null = null;
  let jAfter: string | null = null;
  let moreM = true;
  let moreJ = true;
  while (moreM || moreJ) {
    const r: ReviewTimelineQuery = await gw.request(ReviewTimelineDocument, { id: e.id, messagesAfter: mAfter, jobsAfter: jAfter });
    const x = r.execution;
    if (!x) break;
    if (moreM) { messages.push(...x.messages.edges.map((m) => m.node)); moreM = x.messages.pageInfo.hasNextPage; mAfter = x.messages.pageInfo.endCursor ?? null; }
    if (moreJ) { jobs.push(...x.jobs.edges.map((j) => j.node)); moreJ = x.jobs.pageInfo.hasNextPage; jAfter = x.jobs.pageInfo.endCursor ?? null; }
  }
  let prompt: ReviewTimelineMessageFragment | null = null;
  // A prompt sent outside any execution is shown on the execution that answered it: one that recorded something
  // of its own (a message or a job) and no prompt. An execution that recorded nothing (interrupted before it
  // began, say) answered no prompt: the last one before it belongs to an earlier execution, never carried forward.
  const recorded = messages.length > 0 || jobs.length > 0;
  if (recorded && !messages.some((m) => m.origin === 'PROMPT' || m.role === 'USER')) {
    const started = new Date(e.startedAt).getTime();
    let after: string | null = null;
    // Oldest first: the last prompt outside any execution that came before this one started.
    for (let page = 0; page < 20; page++) {
      const { session }: ReviewSessionPromptsQuery = await gw.request(ReviewSessionPromptsDocument, { id: e.session.id, after });
      if (!session) break;
      let past = false;
      for (const { node } of session.messages.edges) {
        if (new Date(node.createdAt).getTime() > started) { past = true; break; }
        if (!node.execution && (node.origin === 'PROMPT' || node.role === 'USER')) prompt = node;
        else if (node.execution && node.execution.id !== e.id) prompt = null; // a prompt answered by an earlier execution
      }
      if (past || !session.messages.pageInfo.hasNextPage) break;
      after = session.messages.pageInfo.endCursor ?? null;
    }
  }
  return { messages, jobs, prompt };
}

/**
 * Above the timeline of an execution that is one of several a prompt started (an OpenCode turn: one execution per
 * step): the turn's prompt, its executions (this one marked) and its combined changes one click away.
 */
function turnBar(e: Execution, t: Turn | null): HTMLElement | null {
  if (!t || t.executions.length < 2) return null;
  const first = t.executions[0];
  const last = t.executions[t.executions.length - 1];
  const step = t.executions.findIndex((x) => x.id === e.id) + 1;
  const said = promptLine(t.prompt);
  return h('section', { class: 'turn-bar', 'data-turn': first.id, 'data-step': step, role: 'note' },
    h('strong', {}, `Step ${step} of ${t.executions.length} of a turn`),
    ...(t.prompt ? [' started by the prompt ', h('span', { class: 'turn-prompt', title: t.prompt.text }, '“', said || '(no text)', '”'),
      ...(first.id === e.id ? [] : [' (sent before ', link(`#/execution/${first.id}`, `#${first.sequence}`), ')'])]
      : [!t.startKnown ? ' that began before the executions read' : ` started by ${first.trigger}`]),
    h('span', { class: 'turn-steps' }, ': ', ...t.executions.flatMap((x, i) => [i ? ' · ' : '',
      x.id === e.id ? h('strong', { class: 'turn-step current', 'data-execution': x.id }, `#${x.sequence}`)
        : link(`#/execution/${x.id}`, `#${x.sequence}`), ' ', statusBadge(x.status)])),
    ' · ', h('a', { class: 'turn-changes', href: rangeHref(e.session.id, first.id, last.id) },
      `Combined changes of the turn (#${first.sequence}–#${last.sequence}) →`));
}

export function executionSource(e: Execution, comments?: ReviewComments): ChangesSource {
  const cs = e.changeset;
  const patches = new Map<string, Promise<{ patch: string | null; binary: boolean } | null>>();
  return {
    key: `execution.${e.id}`,
    files: cs.files,
    omissions: cs.coverage.__typename === 'CoverageOmitted' ? cs.coverage.omissions : [],
    patch(path) {
      let p = patches.get(path);
      if (!p) {
        p = gateway().request(ReviewFilePatchDocument, { id: e.id, path }).then((r) => r.execution?.changeset.file ?? null);
        p.catch(() => patches.delete(path));
        patches.set(path, p);
      }
      return p;
    },
    text: (side, path) => boundaryText(e.id, side === 'new', path),
    href: (path) => fileHref(e.id, path),
    comments,
    blameHref: (f) => blameHref(e.session.id, e.id, f.status === 'DELETED' ? 'START' : 'END', f.path),
  };
}

/**
 * An execution's page: what it was asked, what the assistant said, reasoned and ran (each tool call
 * with its job), then every file it changed, stacked, each diff loaded as it scrolls into view.
 */
export class ExecutionView {
  private files: FilesView | null = null;
  private comments: ReviewComments | null = null;
  private closed = false;
  private stopLive = () => {};

  constructor(private root: HTMLElement, readonly executionID: string, path: string | null, private readonly line: string | null = null) {
    root.replaceChildren(loading());
    this.load(path).catch((e) => this.fail(e));
  }

  private fail(e: unknown) {
    if (!this.closed) this.root.dispatchEvent(new CustomEvent('view-error', { detail: e, bubbles: true }));
  }

  close() {
    this.closed = true;
    this.stopLive();
    this.files?.destroy();
    this.comments?.close();
  }

  /** Opens one file, at one line of its diff (called by the router for #/execution/<id>/file/<path>[?line=R12]). */
  select(path: string, line: string | null = null) {
    if (this.files?.has(path)) this.files.focus(path, line);
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
        this.files?.destroy();
        this.comments?.close();
        this.load(path).catch((x) => this.fail(x));
      });
    }
    if (!e) {
      this.root.replaceChildren(h('nav', { class: 'crumbs' }, link('#/', 'Sessions')), h('p', { class: 'error-box' }, `No execution ${this.executionID} (or not visible to this token).`));
      return;
    }
    setTitle(`Execution #${e.sequence}`, e.session.title || e.session.id);
    const cs = e.changeset;
    const tl = h('section', { class: 'timeline-section' }, h('h2', {}, 'Timeline'), loading());
    const totals = changeTotals(cs);
    let filesEl: HTMLElement;
    const missing = path && !cs.files.some((f) => f.path === path) ? h('p', { class: 'error-box' }, `${path} did not change in this execution.`) : null;
    // Comments on a settled execution's changeset (a running one has none yet).
    this.comments = e.status === 'RUNNING' ? null : startComments(this.root, e.session.id, { kind: 'EXECUTION', executionID: e.id, fromExecutionID: null });
    if (cs.files.length) {
      this.files = new FilesView(executionSource(e, this.comments ?? undefined), missing ? null : path, this.line);
      filesEl = this.files.el;
    } else {
      filesEl = h('div', {}, this.comments?.el ?? null,
        h('p', { class: 'muted' }, cs.coverage.__typename === 'CoverageUnavailable' ? 'No files can be shown.' : 'No files changed.'));
    }
    this.root.replaceChildren(
      h('nav', { class: 'crumbs' }, link('#/', 'Sessions'), ' › ', link(`#/session/${e.session.id}`, e.session.title || e.session.id), ' › ', `Execution #${e.sequence}`),
      h('h1', {}, statusBadge(e.status), ` Execution #${e.sequence}`, h('span', { class: 'muted' }, ` · ${e.trigger} · `, time(e.startedAt), ` · ${duration(e.startedAt, e.settledAt)}`)),
      outcomeBanner(e) ?? '',
      driftBanner(e) ?? '',
      coverageBanner(cs.coverage),
      boundaryView(e),
      tl,
      h('section', { class: 'changes-section' }, h('h2', { id: 'files' }, 'Files changed'), totals, missing, filesEl));
    const [data, turn] = await Promise.all([timelineData(e), turnOf(e.session.id, e.id).catch(() => null)]);
    if (this.closed) return;
    tl.replaceChildren(h('h2', {}, 'Timeline'), turnBar(e, turn) ?? '', timeline(e, data.messages, data.prompt, data.jobs));
    // The timeline above moved the file a deep link opened: back to it.
    if (path && !missing) this.files?.focus(path, this.line);
  }
}

export type { Omission };
