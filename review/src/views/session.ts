import {
  ReviewContinuityDocument, ReviewJobsDocument, ReviewLatestSettlementCursorDocument, ReviewMessagesDocument,
  ReviewSessionDocument, ReviewSessionStatusDocument,
  type ReviewExecutionRowFragment, type ReviewJobsQuery, type ReviewMessagesQuery, type ReviewSessionQuery,
} from '../../../client/index.js';
import { gateway } from '../api.js';
import { badge, duration, h, link, loading, setTitle, statusBadge, time } from '../dom.js';
import { sessionEventStream, settlementStream } from '../live.js';
import { driftHref, rangeHref } from './range.js';
import { groupTurns, promptLine, sessionMessages, type Turn, type TurnMessages } from '../turns.js';
import { SessionComments } from './session-comments.js';

type Session = NonNullable<ReviewSessionQuery['session']>;
type MessageNode = NonNullable<ReviewMessagesQuery['session']>['messages']['edges'][number]['node'];
type JobNode = NonNullable<ReviewJobsQuery['session']>['jobs']['edges'][number]['node'];

const COVERAGE_LABEL: Record<string, [string, string]> = {
  CoverageComplete: ['complete', 'ok'],
  CoverageOmitted: ['omissions', 'warn'],
  CoverageUnavailable: ['unavailable', 'bad'],
};

export function coverageChip(typename: string): HTMLElement {
  const [label, kind] = COVERAGE_LABEL[typename] ?? [typename, 'muted'];
  return badge(`coverage: ${label}`, kind);
}

async function continuityBadge(executionID: string): Promise<HTMLElement> {
  const { continuity: c } = await gateway().request(ReviewContinuityDocument, { executionID });
  if (c.__typename === 'ContinuityContinuous') return badge('continuous', 'ok', 'A checkpoint taken at this execution still holds.');
  if (c.__typename === 'ContinuityBroken') {
    const cause = c.cause ? ` by #${c.cause.sequence}` : '';
    return badge(`broken: ${c.reason}${cause}`, 'bad', 'A checkpoint taken at this execution no longer holds.');
  }
  return badge(`unknown: ${c.reason}`, 'warn', c.detail);
}

function executionRow(e: ReviewExecutionRowFragment): HTMLElement {
  const cont = h('td', { class: 'continuity', 'data-label': 'Continuity' }, h('span', { class: 'muted' }, '…'));
  continuityBadge(e.id).then((b) => cont.replaceChildren(b), () => cont.replaceChildren(badge('continuity: error', 'muted')));
  return h('tr', { class: 'execution-row', 'data-execution': e.id, 'data-sequence': e.sequence },
    h('td', { 'data-label': 'Seq' }, link(`#/execution/${e.id}`, `#${e.sequence}`)),
    h('td', { 'data-label': 'Status' }, statusBadge(e.status), e.interruptReason ? h('span', { class: 'interrupt' }, ` (${e.interruptReason})`) : null,
      e.error ? h('div', { class: 'exec-error' }, e.errorName ? `${e.errorName}: ` : '', e.error) : null),
    h('td', { 'data-label': 'Trigger' }, e.trigger),
    h('td', { 'data-label': 'Started' }, time(e.startedAt)),
    h('td', { 'data-label': 'Settled' }, time(e.settledAt)),
    h('td', { 'data-label': 'Duration' }, duration(e.startedAt, e.settledAt)),
    usageCell(e),
    cont,
    h('td', { class: 'changeset', 'data-label': 'Changeset' }, changesetSummary(e)));
}

/**
 * The row's changeset: its counts, or "unknown" and why when its coverage is unavailable (a count of zero would
 * claim the execution changed nothing). The execution's page names the exact reason.
 */
function changesetSummary(e: ReviewExecutionRowFragment): (HTMLElement | string)[] {
  const cs = e.changeset;
  if (cs.coverage.__typename === 'CoverageUnavailable') {
    const why = e.status === 'RUNNING' ? 'it has not settled yet' : 'a boundary snapshot is missing or expired';
    return [h('a', { href: `#/execution/${e.id}`, class: 'changes-unknown' }, 'unknown'), ' ', h('span', { class: 'muted why' }, `(${why})`), ' ',
      coverageChip(cs.coverage.__typename)];
  }
  return [link(`#/execution/${e.id}`, `${cs.fileCount} file${cs.fileCount === 1 ? '' : 's'}`), ' ',
    h('span', { class: 'add' }, `+${cs.additions}`), ' ', h('span', { class: 'del' }, `−${cs.deletions}`), ' ',
    coverageChip(cs.coverage.__typename)];
}

const n = (x: number | null | undefined) => (x == null ? null : x.toLocaleString('en-US'));

/** Tokens and cost as the host reported them (Execution.usage), and the model; counts it did not report are left out. */
function usageCell(e: ReviewExecutionRowFragment): HTMLElement {
  const u = e.usage;
  const model = e.model ? h('div', { class: 'muted model' }, `${e.model.providerID}/${e.model.modelID}`) : null;
  if (!u) return h('td', { class: 'usage', 'data-label': 'Tokens / cost', 'data-usage': 'none' }, h('span', { class: 'muted', title: 'The host reported no usage for this execution' }, 'not reported'), model);
  const counts = [
    [u.inputTokens, 'in'], [u.outputTokens, 'out'], [u.reasoningTokens, 'reasoning'], [u.cacheReadTokens, 'cache read'], [u.cacheWriteTokens, 'cache write'],
  ].filter(([v]) => v != null).map(([v, label]) => `${n(v as number)} ${label}`);
  return h('td', { class: 'usage', 'data-label': 'Tokens / cost', 'data-usage': 'reported' },
    h('div', { class: 'tokens' }, counts.length ? counts.join(' · ') : '—'),
    u.cost == null ? null : h('div', { class: 'cost' }, `$${u.cost.toFixed(4)}`),
    model);
}

/** Below an execution (newest first): what changed in the worktree between the one before it and it, when anything did. */
function driftRow(e: ReviewExecutionRowFragment): HTMLElement | null {
  const d = e.driftBefore;
  if (!d || (d.fileCount === 0 && d.coverage.__typename !== 'CoverageUnavailable')) return null;
  const unknown = d.coverage.__typename === 'CoverageUnavailable';
  return h('tr', { class: `drift-row${unknown ? ' drift-unknown' : ''}`, 'data-drift-before': e.sequence },
    h('td', { colspan: 9 },
      unknown
        ? h('span', { class: 'muted' }, `Between #${e.sequence - 1} and #${e.sequence}: whether the worktree changed outside the agent is unknown (a boundary is missing or expired).`)
        : [h('strong', {}, '⚠ Changed outside any execution'), ` between #${e.sequence - 1} and #${e.sequence}: `,
          link(driftHref(e.id), `${d.fileCount} file${d.fileCount === 1 ? '' : 's'}`), ' ',
          h('span', { class: 'add' }, `+${d.additions}`), ' ', h('span', { class: 'del' }, `−${d.deletions}`)]));
}

function executionRows(rows: ReviewExecutionRowFragment[]): HTMLElement[] {
  return rows.flatMap((e) => [executionRow(e), driftRow(e)].filter((x): x is HTMLElement => !!x));
}

const TRIGGER_WORDS: Record<string, string> = {
  SYNTHETIC: 'Started by the host (SYNTHETIC trigger), not by a prompt',
  COMMAND: 'Started by a command (COMMAND trigger)',
  RESUME: 'Resumed by its host (RESUME trigger)',
};

/** A turn's heading row: the prompt that started it (or what did), its executions, and its combined changes one click away. */
function turnHead(sessionID: string, t: Turn): HTMLElement {
  const first = t.executions[0];
  const last = t.executions[t.executions.length - 1];
  const n = t.executions.length;
  const span = n === 1 ? `#${first.sequence}` : `#${first.sequence}–#${last.sequence}`;
  const said = promptLine(t.prompt);
  const what = t.prompt
    ? h('span', { class: 'turn-prompt', title: t.prompt.text }, '“', said || '(a prompt without text)', '”', t.prompt.retracted ? ' (retracted)' : '')
    : !t.startKnown
      ? h('span', { class: 'muted' }, 'continues a turn of older executions (load them below)')
      : h('span', { class: 'muted' }, TRIGGER_WORDS[t.trigger] ?? 'No prompt was recorded for it');
  return h('tr', { class: 'turn-head', 'data-turn': first.id },
    h('td', { colspan: 9 },
      h('strong', {}, `Turn ${span}`), ' · ', what, ' · ',
      h('span', { class: 'turn-size' }, `${n} execution${n === 1 ? '' : 's'}`), ' · ',
      h('a', { class: 'turn-changes', href: rangeHref(sessionID, first.id, last.id),
        title: n === 1 ? 'This execution\'s changes' : `What the turn changed, from the start of #${first.sequence} to the end of #${last.sequence}` },
      n === 1 ? 'Changes of the turn' : `Combined changes of the turn (#${first.sequence}–#${last.sequence})`, ' →')));
}

/**
 * The executions, newest first, grouped by turn (the executions one prompt started: src/turns.ts), each turn one
 * tbody under a heading row.
 */
function executionsTable(sessionID: string, rows: ReviewExecutionRowFragment[], prompts: TurnMessages): HTMLTableElement {
  const turns = groupTurns(rows, prompts).reverse();
  const byID = new Map(rows.map((e) => [e.id, e]));
  return h('table', { class: 'executions' },
    h('thead', {}, h('tr', {}, ...['Seq', 'Status', 'Trigger', 'Started', 'Settled', 'Duration', 'Tokens / cost', 'Continuity', 'Changeset'].map((t) => h('th', {}, t)))),
    ...turns.map((t) => h('tbody', { class: `turn${t.executions.length > 1 ? ' turn-many' : ''}`, 'data-turn': t.executions[0].id, 'data-turn-size': t.executions.length },
      turnHead(sessionID, t),
      ...executionRows([...t.executions].reverse().map((e) => byID.get(e.id)!)))));
}

/** "Changes from execution #3 to #7": two of the executions read, oldest and newest by default. */
function rangePicker(sessionID: string, rows: ReviewExecutionRowFragment[]): HTMLElement | null {
  const settled = rows.filter((e) => e.status !== 'RUNNING').sort((a, b) => a.sequence - b.sequence);
  if (settled.length < 1) return null;
  const select = (name: string, chosen: string) => h('select', { name, class: `range-${name}` },
    ...settled.map((e) => { const o = h('option', { value: e.id }, `#${e.sequence}`); o.selected = e.id === chosen; return o; }));
  const from = select('from', settled[0].id);
  const to = select('to', settled[settled.length - 1].id);
  const form = h('form', { class: 'range-picker' },
    h('strong', {}, 'Changes'), ' from the start of execution ', from, ' to the end of ', to, ' ',
    h('button', { type: 'submit' }, 'Show changes'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = rangeHref(sessionID, from.value, to.value);
  });
  return form;
}

function partView(p: MessageNode['parts'][number], retracted: boolean): HTMLElement {
  switch (p.__typename) {
    case 'TextPart':
      return h('div', { class: `part text-part${p.correctedAt ? ' corrected' : ''}`, 'data-part': p.id },
        p.correctedAt && !retracted ? badge(`corrected · rev ${p.revision}`, 'warn', `Corrected at ${p.correctedAt}`) : null,
        h('pre', { class: 'text' }, p.text));
    case 'ToolPart':
      return h('div', { class: 'part tool-part' }, badge(`tool: ${p.tool}`, 'muted'), p.status ? ` ${p.status}` : '',
        p.output ? h('details', {}, h('summary', {}, 'output'), h('pre', {}, p.output)) : null);
    case 'ReasoningPart':
      return h('div', { class: 'part reasoning-part' }, h('details', {}, h('summary', {}, 'reasoning'), h('pre', { class: 'text' }, p.reasoning)));
    case 'FilePart':
      return h('div', { class: 'part file-part' }, badge('file', 'muted'), ' ', h('code', {}, p.path), p.mime ? ` (${p.mime})` : '');
    default:
      return h('div', { class: 'part' }, (p as { __typename: string }).__typename);
  }
}

function messageView(m: MessageNode): HTMLElement {
  const retracted = !!m.retraction;
  return h('li', { class: `message role-${m.role.toLowerCase()}${retracted ? ' retracted' : ''}`, 'data-message': m.id },
    h('div', { class: 'message-head' },
      h('strong', {}, m.role), h('span', { class: 'muted' }, ` · ${m.origin}`),
      m.execution ? h('span', { class: 'muted' }, ' · ', link(`#/execution/${m.execution.id}`, `#${m.execution.sequence}`)) : null,
      ' · ', time(m.createdAt),
      m.revision > 1 ? h('span', { class: 'muted' }, ` · revision ${m.revision}`) : null,
      retracted ? badge('retracted', 'bad', `Retracted at ${m.retraction!.retractedAt}`) : null,
      retracted && m.retraction!.reason ? h('span', { class: 'retraction-reason' }, ` reason: ${m.retraction!.reason}`) : null),
    ...m.parts.map((p) => partView(p, retracted)));
}

function jobRow(j: JobNode): HTMLElement {
  return h('tr', { class: 'job-row', 'data-job': j.id },
    h('td', { 'data-label': 'Kind' }, j.kind),
    h('td', { 'data-label': 'Title' }, j.title, j.command ? h('code', { class: 'command' }, j.command) : null),
    h('td', { 'data-label': 'Status' }, statusBadge(j.status), j.background ? badge('background', 'muted') : null, j.restored ? badge('restored', 'muted') : null),
    h('td', { 'data-label': 'Exit' }, j.exitCode == null ? '—' : String(j.exitCode)),
    h('td', { 'data-label': 'Execution' }, j.execution ? link(`#/execution/${j.execution.id}`, `#${j.execution.sequence}`) : '—'),
    h('td', { 'data-label': 'Started' }, time(j.startedAt)),
    h('td', { 'data-label': 'Ended' }, time(j.completedAt)));
}

function header(s: Session): HTMLElement {
  const kids = s.children.edges.map((e) => e.node);
  return h('section', { class: 'session-head' },
    h('nav', { class: 'crumbs' }, link('#/', 'Sessions'), ' › ', s.parent ? [link(`#/session/${s.parent.id}`, s.parent.title || s.parent.id), ' › '] : null),
    h('h1', {}, h('span', { id: 'session-status' }, statusBadge(s.status)), ' ', s.title || '(untitled)'),
    h('dl', { class: 'facts' },
      h('dt', {}, 'ID'), h('dd', {}, h('code', {}, s.id)),
      h('dt', {}, 'Directory'), h('dd', {}, h('code', {}, s.directory)),
      h('dt', {}, 'Created'), h('dd', {}, time(s.createdAt)),
      h('dt', { class: 'sealed-at' }, 'Sealed'), h('dd', { class: 'sealed-at' }, time(s.sealedAt)),
      kids.length ? [h('dt', {}, 'Children'), h('dd', {}, ...kids.flatMap((k, i) => [i ? ', ' : '', link(`#/session/${k.id}`, k.title || k.id), ' ', statusBadge(k.status)]),
        s.children.pageInfo.hasNextPage ? ' …' : '')] : null),
    Object.keys((s.metadata ?? {}) as object).length
      ? h('details', { class: 'metadata' }, h('summary', {}, 'Metadata'), h('pre', {}, JSON.stringify(s.metadata, null, 2)))
      : null);
}

/** A session: executions newest first (live), continuity, messages with corrections and retractions, jobs. */
export function sessionView(root: HTMLElement, id: string): () => void {
  root.replaceChildren(loading());
  const stops: (() => void)[] = [];
  let closed = false;
  const fail = (e: unknown) => { if (!closed) root.dispatchEvent(new CustomEvent('view-error', { detail: e, bubbles: true })); };

  const execSection = h('section', { class: 'executions-section' }, h('h2', {}, 'Executions'), loading());
  const msgSection = h('section', { class: 'messages-section' }, h('h2', {}, 'Messages'), loading());
  const jobSection = h('section', { class: 'jobs-section' }, h('h2', {}, 'Jobs'), loading());
  // The sequence of each execution read, for the review comments' "execution #3".
  const sequences = new Map<string, number>();
  const comments = new SessionComments(id, (e) => sequences.get(e));

  let turnMessages: Awaited<ReturnType<typeof sessionMessages>> | null = null;
  async function renderExecutions(s?: Session) {
    const session = s ?? (await gateway().request(ReviewSessionDocument, { id })).session;
    if (!session || closed) return;
    const rows = session.executions.edges.map((e) => e.node);
    for (const e of rows) sequences.set(e.id, e.sequence);
    // Read once, then only what was recorded since (each settlement renders the executions again).
    const prompts = rows.length ? (turnMessages = await sessionMessages(id, turnMessages ?? undefined)) : { prompts: [], recorded: new Set<string>() };
    if (closed) return;
    let table = executionsTable(id, rows, prompts);
    let more = session.executions.pageInfo;
    const older = h('button', { type: 'button', class: 'more', hidden: !more.hasNextPage }, 'Older executions');
    older.addEventListener('click', async () => {
      older.disabled = true;
      const next = (await gateway().request(ReviewSessionDocument, { id, executionsAfter: more.endCursor })).session;
      if (!next) return;
      rows.push(...next.executions.edges.map((e) => e.node));
      for (const e of rows) sequences.set(e.id, e.sequence);
      // Regrouped: a turn the page boundary cut in two is whole again.
      const regrouped = executionsTable(id, rows, prompts);
      table.replaceWith(regrouped);
      table = regrouped;
      more = next.executions.pageInfo;
      older.hidden = !more.hasNextPage;
      older.disabled = false;
    });
    execSection.replaceChildren(h('h2', {}, 'Executions'), rangePicker(id, rows) ?? '', rows.length ? table : h('p', { class: 'muted' }, 'No executions yet.'), older);
  }

  async function renderMessages() {
    const items: MessageNode[] = [];
    let after: string | null = null;
    const list = h('ol', { class: 'messages' });
    const more = h('button', { type: 'button', class: 'more', hidden: true }, 'More messages');
    const load = async () => {
      const r = (await gateway().request(ReviewMessagesDocument, { id, after })).session;
      if (!r || closed) return;
      items.push(...r.messages.edges.map((e) => e.node));
      list.append(...r.messages.edges.map((e) => messageView(e.node)));
      after = r.messages.pageInfo.endCursor ?? after;
      more.hidden = !r.messages.pageInfo.hasNextPage;
    };
    more.addEventListener('click', () => { load().catch(fail); });
    await load();
    msgSection.replaceChildren(h('h2', {}, 'Messages'), items.length ? list : h('p', { class: 'muted' }, 'No messages.'), more);
  }

  async function renderJobs() {
    let after: string | null = null;
    const body = h('tbody', {});
    const more = h('button', { type: 'button', class: 'more', hidden: true }, 'More jobs');
    const load = async () => {
      const r = (await gateway().request(ReviewJobsDocument, { id, after })).session;
      if (!r || closed) return 0;
      body.append(...r.jobs.edges.map((e) => jobRow(e.node)));
      after = r.jobs.pageInfo.endCursor ?? after;
      more.hidden = !r.jobs.pageInfo.hasNextPage;
      return r.jobs.edges.length;
    };
    more.addEventListener('click', () => { load().catch(fail); });
    const n = await load();
    if (closed) return;
    jobSection.replaceChildren(h('h2', {}, 'Jobs'), n
      ? h('table', { class: 'jobs' },
        h('thead', {}, h('tr', {}, ...['Kind', 'Title', 'Status', 'Exit', 'Execution', 'Started', 'Ended'].map((t) => h('th', {}, t)))),
        body)
      : h('p', { class: 'muted' }, 'No jobs.'),
    more);
  }

  async function refreshStatus() {
    const s = (await gateway().request(ReviewSessionStatusDocument, { id })).session;
    if (!s || closed) return;
    root.querySelector('#session-status')?.replaceChildren(statusBadge(s.status));
    root.querySelectorAll('dd.sealed-at').forEach((d) => d.replaceChildren(time(s.sealedAt)));
  }

  // Coalesces bursts of events into one refresh of each section.
  type Part = 'status' | 'messages' | 'jobs' | 'executions' | 'comments';
  const pending = new Set<Part>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const refresh: Record<Part, () => Promise<void>> = {
    status: refreshStatus, messages: renderMessages, jobs: renderJobs, executions: () => renderExecutions(),
    comments: () => comments.refresh(),
  };
  const schedule = (what: Part) => {
    pending.add(what);
    timer ??= setTimeout(() => {
      timer = null;
      const todo = [...pending];
      pending.clear();
      for (const w of todo) refresh[w]().catch(fail);
    }, 100);
  };

  (async () => {
    const gw = gateway();
    const { latestSettlementCursor } = await gw.request(ReviewLatestSettlementCursorDocument, { sessionID: id });
    const { session } = await gw.request(ReviewSessionDocument, { id });
    if (closed) return;
    if (!session) {
      root.replaceChildren(h('nav', { class: 'crumbs' }, link('#/', 'Sessions')), h('p', { class: 'error-box' }, `No session ${id} (or not visible to this token).`));
      return;
    }
    setTitle(session.title || '(untitled)', 'Session');
    root.replaceChildren(header(session), execSection, comments.el, jobSection, msgSection);
    await renderExecutions(session);
    if (closed) return;
    stops.push(settlementStream(id, latestSettlementCursor, () => {
      renderExecutions().catch(fail);
      schedule('status');
    }));
    stops.push(sessionEventStream(id, session.eventsCursor, (ev) => {
      if (ev.type.startsWith('session.') || ev.type.startsWith('execution.')) schedule('status');
      // A seal breaks the last execution's continuity; a started or abandoned one changes the list.
      if (['session.sealed', 'execution.started', 'execution.abandoned'].includes(ev.type)) schedule('executions');
      if (ev.type.startsWith('message.') || ev.type === 'session.compacted') schedule('messages');
      if (ev.type.startsWith('job.')) schedule('jobs');
      if (ev.type.startsWith('review_comment')) schedule('comments');
    }));
    await Promise.all([renderMessages(), renderJobs(), comments.refresh()]);
  })().catch(fail);

  return () => { closed = true; if (timer) clearTimeout(timer); for (const s of stops) s(); };
}
