import { badge, h, link, time } from './dom.js';
import type { CommentSide, Layout, LineComments } from './diff/render.js';

/**
 * Review comments on a changeset (issue 50), GitHub-like: a "+" in the gutter of every line of a diff opens a composer
 * under it (shift-click or drag from another line: several lines), a button on each file card comments on the file,
 * and a box above the files on the whole changeset. Threads show under their line (author, time, body, state),
 * resolved ones folded; open ones have a checkbox, and "Send N comments to the agent" makes them the session's next
 * prompt. A sent comment reads "answered by execution #N" once the execution it started began, linked to that
 * execution's changeset of the same file. Comments and answers arrive live on the session's event stream.
 *
 * The page reads and writes through `CommentsApi` (comments-api.ts: the public API through client/).
 */
export type ChangesetKind = 'EXECUTION' | 'RANGE' | 'DRIFT';
export interface ChangesetRef { kind: ChangesetKind; executionID: string; fromExecutionID: string | null }

export interface ReviewComment {
  id: string;
  state: 'OPEN' | 'RESOLVED';
  body: string;
  author: { tokenID: string | null; role: string };
  anchor: {
    kind: ChangesetKind; executionID: string; fromExecutionID: string | null;
    path: string | null; side: CommentSide | null; line: number | null; startLine: number | null; quote: string | null;
  };
  createdAt: string;
  resolvedAt: string | null;
  sentAt: string | null;
  answeredBy: { id: string; sequence: number } | null;
}

export interface NewComment { path: string | null; side: CommentSide | null; line: number | null; startLine: number | null; body: string; idempotencyKey: string }

/** A typed error of the API (a result union's error member), as the page shows it. */
export interface ApiError { _tag: string; message: string; anchorReason?: unknown; reason?: unknown; capability?: unknown }

export interface CommentsApi {
  /** The session's events cursor, read before the comments so the stream after it misses nothing. */
  cursor(): Promise<string | null>;
  list(): Promise<ReviewComment[]>;
  add(c: NewComment): Promise<ReviewComment>;
  resolve(id: string): Promise<ReviewComment>;
  reopen(id: string): Promise<ReviewComment>;
  send(ids: string[]): Promise<{ execution: { id: string; sequence: number }; comments: ReviewComment[] }>;
  /** The session's events after `cursor`: `onEvent` gets each one's type. Returns the function that stops it. */
  follow(cursor: string, onEvent: (type: string) => void): () => void;
}

/** Thrown by CommentsApi: a typed error of the API, kept whole for the page to say. */
export class CommentError extends Error {
  constructor(readonly error: ApiError) { super(error.message); }
}

/** A typed error in a reviewer's words (the API's own message follows it). */
const SAID: Record<string, string> = {
  SessionSealedError: 'The session is sealed: nothing more can be sent to its agent.',
  SessionBusyError: 'The agent is busy: an execution of this session is running. Send the comments when it has settled.',
  UnsupportedError: 'This session\'s host cannot take a prompt from the gateway (it does not support PROMPT).',
  HostUnavailableError: 'No host can carry the prompt out now (none is connected for this session, its lease expired, or it failed to start).',
  CommandTimeoutError: 'The host did not start the prompt in time: the comments stay open and can be sent again.',
  CommentAnchorError: 'The comment cannot be anchored there.',
  CommentNotFoundError: 'The comment does not exist (or this token may not see it).',
  InvalidRequestError: 'The gateway refused the request.',
};

/** An error of a comment action as the page shows it: what it means, then the gateway's words. */
export function errorText(e: unknown): { tag: string; text: string } {
  if (e instanceof CommentError) {
    const said = SAID[e.error._tag];
    const detail = [e.error.anchorReason, e.error.reason, e.error.capability].filter((x) => typeof x === 'string').join(', ');
    return { tag: e.error._tag, text: `${said ? `${said} ` : ''}${e.error._tag}${detail ? ` (${detail})` : ''}: ${e.error.message}` };
  }
  const m = e instanceof Error ? e.message : String(e);
  // A role that may not write comments (a reader) is refused before anything runs: said plainly.
  const errors = (e as { errors?: { extensions?: { code?: unknown } }[] } | null)?.errors;
  if (Array.isArray(errors) && errors.some((x) => x?.extensions?.code === 'FORBIDDEN')) {
    return { tag: 'FORBIDDEN', text: `This token may not write review comments (a plugin or admin token may): ${m}` };
  }
  return { tag: 'Error', text: m };
}

/**
 * Makes `nodes` the children of `parent`, touching nothing when they already are: a live update must not move a
 * composer being typed in (moving a focused element blurs it, and the keys typed next would go nowhere). When they
 * do move, the focus and the selection of a text field among them are put back.
 */
export function setChildren(parent: Element, nodes: Node[]): void {
  const now = parent.childNodes;
  if (now.length === nodes.length && nodes.every((n, i) => now[i] === n)) return;
  const active = document.activeElement;
  const field = active instanceof HTMLTextAreaElement || active instanceof HTMLInputElement ? active : null;
  const kept = field && nodes.some((n) => n.contains(field)) ? { start: field.selectionStart, end: field.selectionEnd } : null;
  parent.replaceChildren(...nodes);
  if (field && kept && field.isConnected && document.activeElement !== field) {
    field.focus({ preventScroll: true });
    try { field.setSelectionRange(kept.start, kept.end); } catch { /* a checkbox has no selection */ }
  }
}

function newKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Where a comment is: "line 12 (new)", "lines 10–12 (old)", "whole file", "whole changeset". */
export function anchorLabel(a: Pick<ReviewComment['anchor'], 'path' | 'side' | 'line' | 'startLine'>): string {
  if (a.line == null) return a.path == null ? 'whole changeset' : 'whole file';
  const side = a.side === 'OLD' ? 'old' : 'new';
  return a.startLine != null && a.startLine !== a.line ? `lines ${a.startLine}–${a.line} (${side})` : `line ${a.line} (${side})`;
}

interface Composer {
  key: string;
  path: string | null;
  side: CommentSide | null;
  line: number | null;
  startLine: number | null;
  el: HTMLElement;
  text: HTMLTextAreaElement;
  label: HTMLElement;
  idempotencyKey: string;
}

interface FileHooks {
  /** The drawn diff's rows are to be decorated again (the comments or composers changed). */
  redecorate(): void;
  /** Whether the file's diff is drawn (or known to have none): line comments not placed in it are listed on the file. */
  drawn(): boolean;
}

/** The comments of one changeset page (an execution's, a range's, a drift's). */
export class ReviewComments {
  readonly el: HTMLElement;
  private comments: ReviewComment[] = [];
  private readonly selected = new Set<string>();
  private readonly composers = new Map<string, Composer>();
  private readonly files = new Map<string, FileHooks>();
  private readonly fileBoxes = new Map<string, HTMLElement>();
  /** The line threads a file's drawn diff placed at its last decoration. */
  private readonly placed = new Map<string, Set<string>>();
  /** The last "+" pressed (a shift-click on another line of the same side extends it). */
  private lastPlus: { path: string; side: CommentSide; line: number } | null = null;
  private readonly counts = h('span', { class: 'comment-counts muted' });
  private readonly threads = h('div', { class: 'changeset-threads' });
  private readonly sendButton = h('button', { type: 'button', class: 'send-comments', disabled: true }, 'Send 0 comments to the agent');
  private readonly selectAll = h('button', { type: 'button', class: 'select-open' }, 'Select all open');
  private readonly sendStatus = h('div', { class: 'send-status', role: 'status' });
  private stop = () => {};
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private loaded = false;

  constructor(private readonly api: CommentsApi, private readonly hrefOf: (executionID: string, path: string | null) => string) {
    this.sendButton.addEventListener('click', () => { void this.send(); });
    this.selectAll.addEventListener('click', () => {
      for (const c of this.comments) if (this.sendable(c)) this.selected.add(c.id);
      this.refresh();
    });
    const changesetComposer = this.composer(null, null, null, null);
    this.el = h('section', { class: 'review-comments', 'aria-label': 'Review comments' },
      h('h2', {}, 'Review comments ', this.counts),
      h('div', { class: 'send-bar' },
        h('span', { class: 'muted' }, 'Open comments you select become the agent\'s next prompt: '),
        this.selectAll, this.sendButton, this.sendStatus),
      this.threads,
      changesetComposer.el);
  }

  /** Loads the comments and follows the session's events (comments added, resolved, sent, answered). */
  async start(): Promise<void> {
    const cursor = await this.api.cursor();
    await this.reload();
    if (this.closed || !cursor) return;
    this.stop = this.api.follow(cursor, (type) => {
      if (type.startsWith('review_comment') || type === 'execution.started') this.schedule();
      // A send refused as busy can go now: said where the refusal was.
      if (type === 'execution.settled' && this.sendStatus.dataset.error === 'SessionBusyError') {
        this.sendStatus.className = 'send-status';
        this.sendStatus.removeAttribute('data-error');
        this.sendStatus.setAttribute('role', 'status');
        this.sendStatus.replaceChildren('The agent\'s execution has settled: the selected comments can be sent now.');
      }
    });
  }

  close() {
    this.closed = true;
    this.stop();
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule() {
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.reload().catch((e) => this.el.dispatchEvent(new CustomEvent('view-error', { detail: e, bubbles: true })));
    }, 50);
  }

  /** Bumped by every answer of an action applied to the page: a list read before it is stale. */
  private version = 0;
  private reading = false;
  private again = false;

  /**
   * Reads the changeset's comments again. One read at a time (answers of concurrent reads may arrive out of order),
   * once more if events came meanwhile; a read that an action's answer overtook is discarded and made again.
   */
  private async reload() {
    if (this.reading) { this.again = true; return; }
    this.reading = true;
    try {
      do {
        this.again = false;
        const seen = this.version;
        const list = await this.api.list();
        if (this.closed) return;
        if (seen !== this.version) { this.again = true; continue; }
        this.comments = list;
        this.loaded = true;
        this.refresh();
      } while (this.again && !this.closed);
    } finally {
      this.reading = false;
    }
  }

  /** One comment as the API answered it (after an action), in place of the one the page had. */
  private upsert(c: ReviewComment) {
    this.version++;
    const i = this.comments.findIndex((x) => x.id === c.id);
    if (i >= 0) this.comments[i] = c; else this.comments.push(c);
    this.refresh();
  }

  private sendable(c: ReviewComment): boolean {
    return c.state === 'OPEN' && !c.answeredBy;
  }

  /** Draws every thread again: the changeset's, each file's, each drawn diff's. */
  private refresh() {
    for (const id of [...this.selected]) {
      const c = this.comments.find((x) => x.id === id);
      if (!c || !this.sendable(c)) this.selected.delete(id);
    }
    const open = this.comments.filter((c) => c.state === 'OPEN').length;
    this.counts.textContent = this.loaded ? `${open} open · ${this.comments.length - open} resolved` : '';
    setChildren(this.threads, this.comments.filter((c) => c.anchor.path == null).map((c) => this.thread(c)));
    this.updateSend();
    for (const [path, f] of this.files) { f.redecorate(); this.drawFileBox(path); }
  }

  private updateSend() {
    const n = this.selected.size;
    this.sendButton.textContent = `Send ${plural(n, 'comment')} to the agent`;
    this.sendButton.disabled = n === 0 || this.sending;
    this.selectAll.disabled = !this.comments.some((c) => this.sendable(c) && !this.selected.has(c.id));
  }

  private sending = false;

  private async send() {
    const ids = this.comments.filter((c) => this.selected.has(c.id)).map((c) => c.id);
    if (!ids.length) return;
    this.sending = true;
    this.updateSend();
    this.sendStatus.className = 'send-status';
    this.sendStatus.removeAttribute('data-error');
    this.sendStatus.replaceChildren(`Sending ${plural(ids.length, 'comment')} to the agent…`);
    try {
      const r = await this.api.send(ids);
      this.selected.clear();
      this.sendStatus.className = 'send-status sent';
      this.sendStatus.replaceChildren(`Sent ${plural(ids.length, 'comment')}: `,
        link(this.hrefOf(r.execution.id, null), `execution #${r.execution.sequence}`), ' started to answer them.');
      for (const c of r.comments) this.upsert(c);
    } catch (e) {
      const { tag, text } = errorText(e);
      this.sendStatus.className = 'send-status error-box';
      this.sendStatus.dataset.error = tag;
      this.sendStatus.setAttribute('role', 'alert');
      this.sendStatus.replaceChildren(text);
    } finally {
      this.sending = false;
      this.updateSend();
    }
  }

  // ---- files ----

  /** The comment button of a file card's header. */
  fileButton(path: string): HTMLButtonElement {
    return h('button', { type: 'button', class: 'comment-file', title: `Comment on the whole of ${path}`, onclick: () => this.openComposer(path, null, null, null) }, 'Comment');
  }

  /** The file's own threads (and composer), at the top of its card's body; line threads its diff cannot show are listed there too. */
  fileBox(path: string): HTMLElement {
    let box = this.fileBoxes.get(path);
    if (!box) {
      box = h('div', { class: 'file-comments', 'data-path': path });
      this.fileBoxes.set(path, box);
      this.drawFileBox(path);
    }
    return box;
  }

  /** A file card registers its diff (drawn or not) so the comments can redraw it. */
  attach(path: string, hooks: FileHooks) {
    this.files.set(path, hooks);
    hooks.redecorate();
    this.drawFileBox(path);
  }

  /** A file's diff was drawn without lines (binary, not rendered, renamed only): its line comments are listed on the file. */
  refreshFile(path: string) { this.drawFileBox(path); }

  private drawFileBox(path: string) {
    const box = this.fileBoxes.get(path);
    if (!box) return;
    const drawn = this.files.get(path)?.drawn() ?? false;
    const placed = this.placed.get(path) ?? new Set<string>();
    const mine = this.comments.filter((c) => c.anchor.path === path && (c.anchor.line == null || (drawn && !placed.has(c.id))));
    const composer = this.composers.get(this.keyOf(path, null, null));
    setChildren(box, [...mine.map((c) => this.thread(c, c.anchor.line != null)), ...(composer ? [composer.el] : [])]);
    box.hidden = !mine.length && !composer;
  }

  /** What a file's diff needs: its "+" and its threads under their lines. */
  lines(path: string): LineComments {
    return {
      add: (side, line, { shift, from }) => {
        let start = from;
        const last = this.lastPlus;
        if (shift && last && last.path === path && last.side === side && last.line !== line) start = last.line;
        if (start != null && start !== line) {
          // Several lines: the composer moves under the last one, keeping what was typed on the first.
          const typed = last ? this.composers.get(this.keyOf(path, side, last.line)) : undefined;
          const text = typed && typed.startLine == null ? typed.text.value : '';
          if (typed && typed.startLine == null) this.closeComposer(typed);
          const c = this.openComposer(path, side, Math.max(start, line), Math.min(start, line));
          if (text && !c.text.value) c.text.value = text;
          this.lastPlus = null;
          return;
        }
        this.lastPlus = { path, side, line };
        this.openComposer(path, side, line, null);
      },
      decorate: (body, layout) => this.decorate(path, body, layout),
    };
  }

  private decorate(path: string, body: HTMLTableSectionElement, layout: Layout) {
    for (const tr of body.querySelectorAll('tr.comment-range')) tr.classList.remove('comment-range');
    const placed = new Set<string>();
    // Under each row, what belongs to its lines: threads oldest first, then an open composer.
    const rows = new Map<HTMLElement, { OLD: HTMLElement[]; NEW: HTMLElement[] }>();
    const rowOf = (side: CommentSide, line: number) =>
      body.querySelector<HTMLElement>(`td.num[data-line="${side === 'OLD' ? 'L' : 'R'}${line}"]`)?.closest('tr') ?? null;
    const put = (side: CommentSide, line: number, el: HTMLElement) => {
      const tr = rowOf(side, line);
      if (!tr) return false;
      let slot = rows.get(tr);
      if (!slot) rows.set(tr, (slot = { OLD: [], NEW: [] }));
      slot[side].push(el);
      return true;
    };
    for (const c of this.comments) {
      const a = c.anchor;
      if (a.path !== path || a.line == null || !a.side) continue;
      if (put(a.side, a.line, this.thread(c))) placed.add(c.id);
    }
    for (const c of this.composers.values()) {
      if (c.path !== path || c.line == null || !c.side) continue;
      put(c.side, c.line, c.el);
      // The lines a multi-line composer is about, marked.
      if (c.startLine != null) for (let n = c.startLine; n <= c.line; n++) rowOf(c.side, n)?.classList.add('comment-range');
    }
    // The rows already under their lines are kept (only their cells' children set): what is being typed stays put.
    const keep = new Set<Element>();
    for (const [tr, slot] of rows) {
      let row = tr.nextElementSibling;
      if (!row?.classList.contains('comment-row')) {
        row = layout === 'split'
          ? h('tr', { class: 'comment-row' }, h('td', { class: 'comment-cell', colspan: 2, 'data-side': 'OLD' }), h('td', { class: 'comment-cell', colspan: 2, 'data-side': 'NEW' }))
          : h('tr', { class: 'comment-row' }, h('td', { class: 'comment-cell', colspan: 3 }));
        tr.after(row);
      }
      keep.add(row);
      const cells = row.children;
      if (layout === 'split') { setChildren(cells[0], slot.OLD); setChildren(cells[1], slot.NEW); } else setChildren(cells[0], [...slot.OLD, ...slot.NEW]);
    }
    for (const row of body.querySelectorAll('tr.comment-row')) if (!keep.has(row)) row.remove();
    const before = this.placed.get(path);
    this.placed.set(path, placed);
    if (!before || before.size !== placed.size || [...placed].some((id) => !before.has(id))) this.drawFileBox(path);
  }

  // ---- composers ----

  private keyOf(path: string | null, side: CommentSide | null, line: number | null): string {
    return `${path ?? ''}\u0000${side ?? ''}\u0000${line ?? ''}`;
  }

  private composer(path: string | null, side: CommentSide | null, line: number | null, startLine: number | null): Composer {
    const key = this.keyOf(path, side, line);
    const what = path == null ? 'the whole changeset' : line == null ? 'the whole file' : anchorLabel({ path, side, line, startLine });
    const text = h('textarea', { class: 'comment-text', rows: path == null ? 2 : 3, 'aria-label': `Comment on ${what}`,
      placeholder: path == null ? 'Comment on the whole changeset…' : 'Leave a comment…' });
    const label = h('div', { class: 'composer-label muted' }, `Commenting on ${what}`);
    const error = h('div', { class: 'comment-error error-box', role: 'alert', hidden: true });
    const submit = h('button', { type: 'submit', class: 'comment-submit' }, path == null ? 'Comment on the changeset' : 'Comment');
    const cancel = path == null ? null : h('button', { type: 'button', class: 'comment-cancel' }, 'Cancel');
    const el = h('form', { class: 'comment-composer', 'data-path': path ?? null, 'data-side': side ?? null, 'data-line': line ?? null, 'data-start-line': startLine ?? null },
      label, text, error, h('div', { class: 'composer-actions' }, submit, cancel));
    const c: Composer = { key, path, side, line, startLine, el, text, label, idempotencyKey: newKey() };
    el.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      submit.disabled = true;
      error.hidden = true;
      try {
        const made = await this.api.add({ path, side, line, startLine, body: text.value, idempotencyKey: c.idempotencyKey });
        text.value = '';
        c.idempotencyKey = newKey();
        if (path != null) this.closeComposer(c, false);
        this.upsert(made);
      } catch (e) {
        const { tag, text: said } = errorText(e);
        error.dataset.error = tag;
        error.textContent = said;
        error.hidden = false;
      } finally {
        submit.disabled = false;
      }
    });
    text.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); el.requestSubmit(); }
      if (ev.key === 'Escape' && cancel) { ev.preventDefault(); this.closeComposer(c); }
    });
    cancel?.addEventListener('click', () => this.closeComposer(c));
    return c;
  }

  private openComposer(path: string, side: CommentSide | null, line: number | null, startLine: number | null): Composer {
    const key = this.keyOf(path, side, line);
    let c = this.composers.get(key);
    if (c && c.startLine !== startLine) { this.closeComposer(c, false); c = undefined; }
    if (!c) {
      c = this.composer(path, side, line, startLine);
      this.composers.set(key, c);
      this.files.get(path)?.redecorate();
      this.drawFileBox(path);
    }
    const t = c.text;
    queueMicrotask(() => { t.focus(); t.scrollIntoView({ block: 'nearest' }); });
    return c;
  }

  /** Closes a composer; `redraw` false when the caller redraws the file next. */
  private closeComposer(c: Composer, redraw = true) {
    this.composers.delete(c.key);
    c.el.remove();
    if (redraw && c.path != null) { this.files.get(c.path)?.redecorate(); this.drawFileBox(c.path); }
  }

  // ---- threads ----

  /**
   * Each comment's element, kept while the comment is unchanged: redrawing the threads (a live update, a layout
   * change) moves the same nodes, so an unfolded resolved thread stays unfolded and a reader's place is kept.
   */
  private readonly drawn = new Map<string, { key: string; el: HTMLElement }>();

  private thread(c: ReviewComment, showWhere = false): HTMLElement {
    const key = JSON.stringify([c, showWhere, this.sendable(c)]);
    const kept = this.drawn.get(c.id);
    if (kept?.key === key) {
      const box = kept.el.querySelector<HTMLInputElement>('input.send-select');
      if (box) box.checked = this.selected.has(c.id);
      return kept.el;
    }
    const el = this.draw(c, showWhere);
    this.drawn.set(c.id, { key, el });
    return el;
  }

  private draw(c: ReviewComment, showWhere: boolean): HTMLElement {
    const a = c.anchor;
    const head = h('div', { class: 'thread-head' },
      this.sendable(c) ? this.checkbox(c) : null,
      badge(c.author.role, 'role', c.author.tokenID ? `Token ${c.author.tokenID}` : 'The local administrator'),
      h('span', { class: 'muted' }, ' commented ', time(c.createdAt)),
      a.startLine != null || showWhere ? h('span', { class: 'thread-where muted' }, ` on ${anchorLabel(a)}`) : null,
      h('span', { class: 'spacer' }),
      this.progress(c),
      c.state === 'RESOLVED' ? badge('resolved', 'ok') : badge('open', 'open'));
    const quote = a.quote && (a.startLine != null || showWhere)
      ? h('pre', { class: 'comment-quote', title: 'The lines as they were when the comment was written' }, a.quote.split('\n').map((l) => `> ${l}`).join('\n'))
      : null;
    const body = h('div', { class: 'comment-body' }, c.body);
    const toggle = c.state === 'OPEN'
      ? h('button', { type: 'button', class: 'resolve', onclick: () => this.act(c, 'resolve', wrap) }, 'Resolve')
      : h('button', { type: 'button', class: 'reopen', onclick: () => this.act(c, 'reopen', wrap) }, 'Reopen');
    const actions = h('div', { class: 'thread-actions' }, toggle);
    const attrs = { class: `thread thread-${c.state.toLowerCase()}`, 'data-comment': c.id, 'data-state': c.state, 'data-side': a.side, 'data-line': a.line, 'data-start-line': a.startLine };
    let wrap: HTMLElement;
    if (c.state === 'RESOLVED') {
      // Folded, GitHub-like: who, and the body's first line.
      const first = c.body.split('\n')[0];
      wrap = h('details', attrs,
        h('summary', { class: 'thread-summary' }, badge('resolved', 'ok'), ' ', h('span', { class: 'muted' }, `${c.author.role}: `),
          first.length > 100 ? `${first.slice(0, 99)}…` : first, a.startLine != null || showWhere ? h('span', { class: 'muted' }, ` · ${anchorLabel(a)}`) : null),
        head, quote, body, actions);
    } else {
      wrap = h('div', attrs, head, quote, body, actions);
    }
    return wrap;
  }

  private checkbox(c: ReviewComment): HTMLElement {
    const box = h('input', { type: 'checkbox', class: 'send-select', 'aria-label': 'Select this comment to send it to the agent' });
    box.checked = this.selected.has(c.id);
    box.addEventListener('change', () => {
      if (box.checked) this.selected.add(c.id); else this.selected.delete(c.id);
      this.updateSend();
    });
    return h('label', { class: 'send-pick', title: 'Send to the agent' }, box);
  }

  /** Sent, waiting for the agent; or answered by an execution (its changeset of this file one click away). */
  private progress(c: ReviewComment): HTMLElement | null {
    if (c.answeredBy) {
      return h('span', { class: 'answered', 'data-execution': c.answeredBy.id }, '✔ answered by ',
        link(this.hrefOf(c.answeredBy.id, c.anchor.path), `execution #${c.answeredBy.sequence}`), ' ');
    }
    if (c.sentAt) return h('span', { class: 'sent muted' }, 'sent ', time(c.sentAt), ', waiting for the agent ');
    return null;
  }

  private async act(c: ReviewComment, what: 'resolve' | 'reopen', el: HTMLElement) {
    for (const b of el.querySelectorAll('button')) b.disabled = true;
    try {
      this.upsert(await (what === 'resolve' ? this.api.resolve(c.id) : this.api.reopen(c.id)));
    } catch (e) {
      el.querySelector('.thread-error')?.remove();
      el.append(h('div', { class: 'thread-error error-box', role: 'alert', 'data-error': errorText(e).tag }, errorText(e).text));
      for (const b of el.querySelectorAll('button')) b.disabled = false;
    }
  }
}
