import {
  ReviewBlameDocument, ReviewTurnExecutionsDocument,
  type BoundarySide, type ReviewTurnExecutionsQuery, type ReviewLineOriginFragment, type ReviewLineMarkFragment,
} from '../../../client/index.js';
import { gateway } from '../api.js';
import { h, link, loading, setTitle, time } from '../dom.js';
import { fileTable, loadLanguageOf } from '../diff/render.js';
import { groupTurns, promptLine, sessionMessages, type TurnExecution } from '../turns.js';

/**
 * Who changed each line (CONTRACT section 13, `FileChange.attribution` and `Session.blame`): the marks a range's
 * files and lines carry ("#2", linked to it; "outside edit", linked to the drift), and the blame view of a file at
 * one boundary of a session (`#/session/<id>/blame/<execution>/<START|END>/<path>`).
 */

/** An origin as a page reads it: in full (an execution's agent and model: ReviewLineOrigin), or as a line's mark (ReviewLineMark). */
export type Origin = ReviewLineOriginFragment | ReviewLineMarkFragment;
export interface LineRun { start: number; count: number; origin: Origin }

export const blameHref = (sessionID: string, executionID: string, side: BoundarySide, path: string) =>
  `#/session/${sessionID}/blame/${executionID}/${side}/${encodeURIComponent(path)}`;

type FullExecution = Extract<ReviewLineOriginFragment, { __typename: 'ExecutionOrigin' }>['execution'];
const full = (o: Origin): Partial<FullExecution> => (o.__typename === 'ExecutionOrigin' ? o.execution : {});
const modelOf = (o: Origin) => { const m = full(o).model; return m ? `${m.providerID}/${m.modelID}` : null; };

/** An origin in a few words: "#2", "outside edit", "before the session", "unknown: #4 or an outside edit". */
export function originText(o: Origin): string {
  switch (o.__typename) {
    case 'ExecutionOrigin': return `#${o.execution.sequence}`;
    case 'OutsideEditOrigin': return 'outside edit';
    case 'BeforeSessionOrigin': return 'before the session';
    case 'UnknownOrigin': {
      const list = o.executions.map((e) => `#${e.sequence}`);
      if (o.outsideEdits) list.push('an outside edit');
      return `unknown: ${list.length ? list.join(' or ') : 'not captured'}`;
    }
    default: return '?';
  }
}

/** What a mark's tooltip says: the origin in full (the execution's agent and model, the drift's two executions, the unknown's cause). */
export function originTitle(o: Origin, prompt?: string | null): string {
  switch (o.__typename) {
    case 'ExecutionOrigin': {
      const e = o.execution;
      const { agent, status } = full(o);
      const facts = [agent ? `agent ${agent}` : null, modelOf(o) ? `model ${modelOf(o)}` : null, status].filter(Boolean).join(' · ');
      return `Changed by execution #${e.sequence}${facts ? ` (${facts})` : ''}${prompt ? `, answering: ${prompt}` : ''}`;
    }
    case 'OutsideEditOrigin': return `Changed outside any execution, between the end of #${o.previous.sequence} and the start of #${o.execution.sequence} (the user, another tool)`;
    case 'BeforeSessionOrigin': return 'Already there when the session\'s first execution began';
    case 'UnknownOrigin': return `Changed somewhere the snapshots cannot split (${o.reason}: ${o.detail})`;
    default: return '';
  }
}

const KIND: Record<string, string> = { ExecutionOrigin: 'execution', OutsideEditOrigin: 'outside', BeforeSessionOrigin: 'before', UnknownOrigin: 'unknown' };

/**
 * A mark: "#2" linking to the execution, "outside edit" linking to the drift, or plain text. `inLine`: a mark drawn in a
 * line of code, its words drawn by CSS from data-origin (and read by its aria-label), so the line's text stays the code's.
 */
export function originMark(o: Origin, prompt?: string | null, inLine = false): HTMLElement {
  const text = originText(o);
  const attrs = {
    class: `origin-mark origin-${KIND[o.__typename] ?? 'unknown'}${inLine ? ' in-line' : ''}`, 'data-origin': text, title: originTitle(o, prompt),
    'aria-label': inLine ? originTitle(o, prompt) : null,
  };
  const label = inLine ? null : text;
  if (o.__typename === 'ExecutionOrigin') return h('a', { ...attrs, href: `#/execution/${o.execution.id}`, 'data-execution': o.execution.id }, label);
  if (o.__typename === 'OutsideEditOrigin') return h('a', { ...attrs, href: `#/execution/${o.execution.id}/drift` }, label);
  return h('span', attrs, label);
}

/** Runs as a line-number map. */
export function byLine(runs: readonly LineRun[]): Map<number, Origin> {
  const out = new Map<number, Origin>();
  for (const r of runs) for (let i = 0; i < r.count; i++) out.set(r.start + i, r.origin);
  return out;
}

/** The prompt of each execution of a session (its turn's prompt's first line), read as the session page reads turns. */
export async function promptsOf(sessionID: string): Promise<Map<string, string>> {
  const messages = sessionMessages(sessionID);
  const executions: TurnExecution[] = [];
  let after: string | null = null;
  for (let page = 0; page < 40; page++) {
    const { session }: ReviewTurnExecutionsQuery = await gateway().request(ReviewTurnExecutionsDocument, { id: sessionID, after });
    if (!session) break;
    executions.push(...session.executions.edges.map((x) => x.node));
    if (!session.executions.pageInfo.hasNextPage) break;
    after = session.executions.pageInfo.endCursor ?? null;
  }
  const out = new Map<string, string>();
  for (const t of groupTurns(executions, await messages)) {
    const p = promptLine(t.prompt, 200);
    if (p) for (const e of t.executions) out.set(e.id, p);
  }
  return out;
}

/** A file at one boundary of a session, each line with what last changed it. */
export class BlameView {
  private closed = false;
  constructor(private root: HTMLElement, private sessionID: string, private executionID: string, private side: BoundarySide, private path: string) {
    root.replaceChildren(loading());
    this.load().catch((e) => { if (!this.closed) root.dispatchEvent(new CustomEvent('view-error', { detail: e, bubbles: true })); });
  }
  close() { this.closed = true; }

  private async load() {
    const { sessionID: id, executionID, side, path } = this;
    const [r, prompts] = await Promise.all([
      gateway().request(ReviewBlameDocument, { id, path, execution: executionID, side }),
      promptsOf(id).catch(() => new Map<string, string>()),
      loadLanguageOf(path),
    ]);
    if (this.closed) return;
    const crumbs = h('nav', { class: 'crumbs' }, link('#/', 'Sessions'), ' › ', r.session ? link(`#/session/${id}`, r.session.title || id) : id, ' › ', 'Blame');
    if (!r.session) {
      this.root.replaceChildren(crumbs, h('p', { class: 'error-box' }, `No session ${id} (or not visible to this token).`));
      return;
    }
    const b = r.session.blame;
    if (b.__typename !== 'Blame') {
      this.root.replaceChildren(crumbs, h('p', { class: 'error-box', 'data-error': b.__typename }, `${b.__typename}: ${'message' in b ? b.message : ''}`));
      return;
    }
    setTitle(`Blame ${path}`, r.session.title || id);
    const e = b.execution;
    const where = side === 'END' ? 'end' : 'start';
    const other = side === 'END' ? 'START' : 'END';
    const prompt = (o: Origin) => (o.__typename === 'ExecutionOrigin' ? prompts.get(o.execution.id) ?? null : null);
    // A run's origin read as a mark; in full (its agent and model) from the file's history, where every one of them is.
    const known = new Map(b.changedBy.flatMap((o) => (o.__typename === 'ExecutionOrigin' ? [[o.execution.id, o] as const] : [])));
    const fuller = (o: Origin): Origin => (o.__typename === 'ExecutionOrigin' ? known.get(o.execution.id) ?? o : o);
    const head = [
      crumbs,
      h('h1', { class: 'blame-title' }, 'Blame ', h('code', {}, path)),
      h('p', { class: 'muted blame-where' }, `At the ${where} of `, link(`#/execution/${e.id}`, `execution #${e.sequence}`),
        b.snapshot ? [' (captured ', time(b.snapshot.capturedAt), ')'] : ' (not captured)', ' · ',
        link(blameHref(id, e.id, other, path), `at its ${side === 'END' ? 'start' : 'end'}`),
        ' · each line with the execution or outside edit that last changed it within the session, from the stored snapshots.'),
      b.changedBy.length ? h('p', { class: 'blame-history' }, 'History of the file in the session: ',
        ...b.changedBy.flatMap((o, i) => [i ? ' → ' : '', originMark(o, prompt(o))])) : null,
    ];
    const c = b.content;
    if (c.__typename !== 'BlameText') {
      this.root.replaceChildren(...head.filter((x): x is HTMLElement => !!x), h('p', { class: 'error-box blame-unavailable', 'data-reason': c.__typename === 'BlameUnavailable' ? c.reason : '' },
        c.__typename === 'BlameUnavailable' ? `No blame: ${c.reason}${c.omission ? ` (${c.omission})` : ''}: ${c.detail}` : 'No blame.'));
      return;
    }
    // The file's text as "view file" draws it, with a column of who changed each line (named at the first line of each run).
    const table = fileTable(c.text, path);
    table.classList.add('blame');
    const owners = byLine(c.runs.map((x) => ({ ...x, origin: fuller(x.origin) })));
    const runStarts = new Set(c.runs.map((x) => x.start));
    table.querySelector('colgroup')?.prepend(h('col', { class: 'c-origin' }));
    const rows = [...table.querySelectorAll('tbody tr')];
    rows.forEach((tr, i) => {
      const o = owners.get(i + 1);
      const cell = h('td', { class: `origin${runStarts.has(i + 1) ? ' run-start' : ''}`, 'data-kind': o ? KIND[o.__typename] : 'none' });
      if (o && runStarts.has(i + 1)) {
        cell.append(originMark(o, prompt(o)));
        const p = prompt(o);
        if (p) cell.append(h('span', { class: 'origin-prompt', title: p }, p));
      }
      tr.prepend(cell);
    });
    const legend = h('p', { class: 'muted blame-legend' }, `${c.lineCount} line${c.lineCount === 1 ? '' : 's'} in ${c.runs.length} run${c.runs.length === 1 ? '' : 's'}.`);
    this.root.replaceChildren(...head.filter((x): x is HTMLElement => !!x), legend, h('div', { class: 'diff-table-wrap' }, table));
  }
}
