import hljs from 'highlight.js/lib/core';
import { h } from '../dom.js';
import { blockHeader, contextLines, gaps, type Gap, type Hunk, type Line } from './patch.js';
import { hideWhitespace, markRanges, wordChanges } from './words.js';

/**
 * highlight.js's core with its languages loaded on demand (each its own small chunk, fetched from the
 * gateway when a file of that language is first drawn), so the page's bundle carries none of them.
 */
const LANGUAGES: Record<string, () => Promise<{ default: Parameters<typeof hljs.registerLanguage>[1] }>> = {
  bash: () => import('highlight.js/lib/languages/bash'),
  c: () => import('highlight.js/lib/languages/c'),
  cpp: () => import('highlight.js/lib/languages/cpp'),
  css: () => import('highlight.js/lib/languages/css'),
  go: () => import('highlight.js/lib/languages/go'),
  ini: () => import('highlight.js/lib/languages/ini'),
  java: () => import('highlight.js/lib/languages/java'),
  javascript: () => import('highlight.js/lib/languages/javascript'),
  json: () => import('highlight.js/lib/languages/json'),
  markdown: () => import('highlight.js/lib/languages/markdown'),
  python: () => import('highlight.js/lib/languages/python'),
  rust: () => import('highlight.js/lib/languages/rust'),
  sql: () => import('highlight.js/lib/languages/sql'),
  typescript: () => import('highlight.js/lib/languages/typescript'),
  xml: () => import('highlight.js/lib/languages/xml'),
  yaml: () => import('highlight.js/lib/languages/yaml'),
};
const loading = new Map<string, Promise<boolean>>();

/** Loads a file's language (once); false when it has none or the load failed (then the code is plain text). */
export function loadLanguageOf(path: string): Promise<boolean> {
  const lang = languageOf(path);
  if (!lang) return Promise.resolve(false);
  let p = loading.get(lang);
  if (!p) {
    p = LANGUAGES[lang]().then((m) => { hljs.registerLanguage(lang, m.default); return true; }, () => false);
    loading.set(lang, p);
  }
  return p;
}

const BY_EXT: Record<string, string> = {
  ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript', js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript',
  json: 'json', css: 'css', scss: 'css', html: 'xml', xml: 'xml', svg: 'xml', vue: 'xml', md: 'markdown', py: 'python', sh: 'bash', bash: 'bash',
  zsh: 'bash', go: 'go', rs: 'rust', yml: 'yaml', yaml: 'yaml', sql: 'sql', c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', hpp: 'cpp', java: 'java',
  toml: 'ini', ini: 'ini', cfg: 'ini',
};

export function languageOf(path: string): string | null {
  const ext = /\.([^./]+)$/.exec(path)?.[1]?.toLowerCase();
  return (ext && BY_EXT[ext]) || null;
}

/** One line's code, highlighted line by line (highlight.js escapes the text it returns). */
function codeSpan(text: string, lang: string | null): HTMLElement {
  const span = h('span', { class: 'code-text' });
  if (lang && text.length < 2_000 && hljs.getLanguage(lang)) span.innerHTML = hljs.highlight(text, { language: lang, ignoreIllegals: true }).value;
  else span.textContent = text;
  return span;
}

/** A whole file's text, its lines numbered and highlighted: "view file". */
export function fileTable(text: string, path: string): HTMLElement {
  const lang = languageOf(path);
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return h('table', { class: 'diff file-text' },
    h('colgroup', {}, h('col', { class: 'c-num' }), h('col', { class: 'c-code' })),
    h('tbody', {}, ...lines.map((l, i) => h('tr', { class: 'ln' },
      h('td', { class: 'num' }, String(i + 1)), h('td', { class: 'code', 'data-kind': 'ctx' }, codeSpan(l, lang))))));
}

export type Layout = 'split' | 'unified';
const SIGN: Record<Line['kind'], string> = { ctx: ' ', del: '-', add: '+' };

/** What a rendered file needs to expand its context: the text of the file by new-side line number, loaded on first use. */
export interface ExpandSource { lines(): Promise<((n: number) => string) & { count: number } | null> }

/** A line of a diff by side and number, as its permalink names it: "L12" the old side's line 12, "R12" the new side's. */
export type LineAnchor = `${'L' | 'R'}${number}`;

export function isLineAnchor(s: string | null | undefined): s is LineAnchor {
  return !!s && /^[LR][1-9]\d*$/.test(s);
}

export interface DiffOptions {
  /** Shows removed and added lines that differ only in whitespace as one unchanged line. */
  hideWhitespace?: boolean;
  /** A click on a line number: the page makes it the file's permalink. */
  onLine?: (anchor: LineAnchor) => void;
  /** Review comments: a "+" on every line of the patch, and the rows the page puts under lines after each drawing. */
  comments?: LineComments;
  /** Who changed a removed (by its old number) or added line (by its new one): a mark drawn at the line's start. */
  origin?: (kind: 'del' | 'add', line: number) => HTMLElement | null;
}

/** A side of a diff as review comments name it. */
export type CommentSide = 'OLD' | 'NEW';

/**
 * What a diff needs for review comments: `add` is called by a line's "+" (a click; shift-click or a drag from another
 * line of the same side: `from` is the other end), and `decorate` after each drawing of the table (its layout
 * changed, context was expanded...) to put the threads and composers back under their lines.
 */
export interface LineComments {
  add(side: CommentSide, line: number, opts: { shift: boolean; from: number | null }): void;
  decorate(body: HTMLTableSectionElement, layout: Layout): void;
}

const STEP = 20;

/**
 * One file's diff as a table (unified or split), with a row between hunks, before the first and
 * after the last that shows the hunk header and expands the unchanged lines around it from the
 * file's stored text: ↑ the lines just above the next hunk, ↓ those just below the previous one.
 */
export class DiffTable {
  readonly el = h('div', { class: 'diff-table-wrap' });
  private readonly gaps: Gap[];
  private readonly top: number[];
  private readonly bottom: number[];
  private lineAt: (((n: number) => string) & { count: number }) | null = null;
  private unavailable = false;
  private readonly lang: string | null;
  private target: LineAnchor | null = null;
  private hideWhitespace: boolean;

  constructor(private hunks: Hunk[], path: string, private layout: Layout, private source: ExpandSource | null, private readonly opts: DiffOptions = {}) {
    this.gaps = gaps(hunks);
    this.top = this.gaps.map(() => 0);
    this.bottom = this.gaps.map(() => 0);
    this.lang = languageOf(path);
    this.hideWhitespace = !!opts.hideWhitespace;
    this.wireComments();
    this.render();
  }

  setLayout(l: Layout) { this.layout = l; this.render(); }

  setHideWhitespace(on: boolean) { this.hideWhitespace = on; this.render(); }

  /** Marks one line as the permalink's (null: none). */
  setTarget(anchor: LineAnchor | null) {
    this.target = anchor;
    this.markTarget();
  }

  /**
   * Shows a permalink's line, expanding the unchanged stretch it lies in when the diff does not show it, and marks it.
   * Returns its row, or null when the file has no such line to show.
   */
  async reveal(anchor: LineAnchor): Promise<HTMLElement | null> {
    this.target = anchor;
    if (!this.row(anchor) && this.source && !this.unavailable) {
      if (!this.lineAt) {
        const l = await this.source.lines();
        if (l) this.lineAt = l; else this.unavailable = true;
      }
      const n = Number(anchor.slice(1));
      const i = this.gaps.findIndex((g) => {
        const at = anchor[0] === 'R' ? n : n - g.delta;
        const to = g.to ?? this.lineAt?.count ?? 0;
        return at >= g.from && at <= to;
      });
      if (i >= 0 && this.lineAt) this.top[i] += this.remaining(i) ?? 0;
    }
    this.render();
    return this.row(anchor);
  }

  private row(anchor: LineAnchor): HTMLElement | null {
    return this.el.querySelector<HTMLElement>(`td.num[data-line="${anchor}"]`)?.closest('tr') ?? null;
  }

  private markTarget() {
    for (const tr of this.el.querySelectorAll('tr.target')) tr.classList.remove('target');
    if (this.target) this.row(this.target)?.classList.add('target');
  }

  private remaining(i: number): number | null {
    const g = this.gaps[i];
    const to = g.to ?? (this.lineAt ? this.lineAt.count : null);
    if (to === null) return null;
    return Math.max(0, to - g.from + 1 - this.top[i] - this.bottom[i]);
  }

  private async expand(i: number, dir: 'up' | 'down' | 'all') {
    if (!this.lineAt && !this.unavailable && this.source) {
      const l = await this.source.lines();
      if (l) this.lineAt = l; else this.unavailable = true;
    }
    if (!this.lineAt) { this.render(); return; }
    const left = this.remaining(i) ?? 0;
    if (dir === 'all') this.top[i] += left;
    else if (dir === 'down') this.top[i] += Math.min(STEP, left);
    else this.bottom[i] += Math.min(STEP, left);
    this.render();
  }

  private gapRow(i: number, cols: number): HTMLElement | null {
    const rest = this.remaining(i);
    const last = i === this.hunks.length;
    const hunk = this.hunks[i];
    if (!last && rest === 0 && i > 0) return null;
    if (last && (rest === 0 || (rest === null && (!this.source || this.unavailable)))) return null;
    const buttons: HTMLElement[] = [];
    if (this.source && !this.unavailable && rest !== 0) {
      const b = (dir: 'up' | 'down' | 'all', label: string, title: string) =>
        h('button', { type: 'button', class: `expand expand-${dir}`, title, 'aria-label': title, onclick: () => { void this.expand(i, dir); } }, label);
      if (rest !== null && rest <= STEP && !last && i > 0) buttons.push(b('all', '↕', `Expand all ${rest} unchanged lines`));
      else {
        if (i > 0) buttons.push(b('down', '↓', `Expand ${STEP} lines below the hunk above`));
        if (!last) buttons.push(b('up', '↑', `Expand ${STEP} lines above this hunk`));
      }
    }
    const info = hunk ? this.header(i) : '';
    const note = this.unavailable ? h('span', { class: 'muted expand-unavailable' }, ' (the stored text of this file is not available: no context to expand)') : null;
    if (!buttons.length && !info && !note) return null;
    return h('tr', { class: 'gap-row', 'data-gap': i },
      h('td', { class: 'gap-buttons', colspan: this.layout === 'split' ? 1 : 2 }, ...buttons),
      h('td', { class: 'hunk-info', colspan: cols - (this.layout === 'split' ? 1 : 2) }, info, note));
  }

  /**
   * The header above hunk i, of every line shown until the next header: the hunk, the context expanded around it,
   * and the hunks after it whose gaps were expanded away (their rows, and so their headers, are gone).
   */
  private header(i: number): string {
    let j = i;
    while (j + 1 < this.hunks.length && this.remaining(j + 1) === 0) j++;
    return blockHeader(this.hunks[i], this.hunks[j], this.bottom[i], this.top[j + 1]);
  }

  private lineRows(lines: Line[], expanded = false): HTMLElement[] {
    const rows: HTMLElement[] = [];
    const comments = expanded ? null : this.opts.comments ?? null;
    // GitHub's rule: a removed line is commented on its old side, an added or unchanged one on its new side.
    const plus = (l: Line, side: string): HTMLElement | null => {
      if (!comments) return null;
      const s: CommentSide = side === 'old' || (side === 'both' && l.kind === 'del') ? 'OLD' : 'NEW';
      const n = s === 'OLD' ? l.old : l.new;
      if (n == null) return null;
      const label = `Comment on line ${n}${s === 'OLD' ? ' of the old side' : ''} (shift-click or drag from another line: several lines)`;
      return h('button', { type: 'button', class: 'add-comment', 'data-side': s, 'data-line': n, title: label, 'aria-label': label });
    };
    const words = wordChanges(lines);
    const num = (n: number | null, side: 'old' | 'new', kind: string) => {
      if (n == null) return h('td', { class: `num num-${side} num-${kind}` });
      const anchor: LineAnchor = `${side === 'old' ? 'L' : 'R'}${n}`;
      const onLine = this.opts.onLine;
      return h('td', {
        class: `num num-${side} num-${kind}${onLine ? ' linkable' : ''}`, 'data-line': anchor,
        title: onLine ? (side === 'old' ? `Link to line ${n} of the old side` : `Link to line ${n}`) : null,
        onclick: onLine ? () => onLine(anchor) : null,
      }, String(n));
    };
    const code = (l: Line | null, side: string) => {
      if (!l) return h('td', { class: 'code', 'data-kind': 'empty', 'data-side': side });
      const span = codeSpan(l.text, this.lang);
      const changed = words.get(l);
      if (changed) markRanges(span, changed, l.kind === 'del' ? 'word-del' : 'word-add');
      const mark = l.kind === 'ctx' || expanded ? null : this.opts.origin?.(l.kind, (l.kind === 'del' ? l.old : l.new)!) ?? null;
      return h('td', { class: `code${l.noNewline ? ' nonl' : ''}`, 'data-kind': l.kind, 'data-side': side, 'data-sign': SIGN[l.kind] }, plus(l, side), mark, span);
    };
    if (this.layout === 'unified') {
      for (const l of lines) rows.push(h('tr', { class: `ln ln-${l.kind}` }, num(l.old, 'old', l.kind), num(l.new, 'new', l.kind), code(l, 'both')));
      return rows;
    }
    for (let i = 0; i < lines.length;) {
      const l = lines[i];
      if (l.kind === 'ctx') {
        rows.push(h('tr', { class: 'ln ln-ctx' }, num(l.old, 'old', 'ctx'), code(l, 'old'), num(l.new, 'new', 'ctx'), code(l, 'new')));
        i++;
        continue;
      }
      const dels: Line[] = [];
      const adds: Line[] = [];
      while (i < lines.length && lines[i].kind === 'del') dels.push(lines[i++]);
      while (i < lines.length && lines[i].kind === 'add') adds.push(lines[i++]);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        const d = dels[k] ?? null;
        const a = adds[k] ?? null;
        rows.push(h('tr', { class: 'ln ln-change' }, num(d?.old ?? null, 'old', d ? 'del' : 'empty'), code(d, 'old'), num(a?.new ?? null, 'new', a ? 'add' : 'empty'), code(a, 'new')));
      }
    }
    return rows;
  }

  private render() {
    const cols = this.layout === 'split' ? 4 : 3;
    const body = h('tbody', {});
    const at = this.lineAt;
    for (let i = 0; i < this.gaps.length; i++) {
      const g = this.gaps[i];
      if (at && this.top[i]) body.append(...this.lineRows(contextLines(at, g, g.from, g.from + this.top[i] - 1), true));
      const row = this.gapRow(i, cols);
      if (row) body.append(row);
      const to = g.to ?? at?.count ?? 0;
      if (at && this.bottom[i]) body.append(...this.lineRows(contextLines(at, g, to - this.bottom[i] + 1, to), true));
      if (i < this.hunks.length) {
        const lines = this.hunks[i].lines;
        body.append(...this.lineRows(this.hideWhitespace ? hideWhitespace(lines) : lines));
      }
    }
    const table = h('table', { class: `diff diff-${this.layout}` },
      this.layout === 'split'
        ? h('colgroup', {}, h('col', { class: 'c-num' }), h('col', { class: 'c-code' }), h('col', { class: 'c-num' }), h('col', { class: 'c-code' }))
        : h('colgroup', {}, h('col', { class: 'c-num' }), h('col', { class: 'c-num' }), h('col', { class: 'c-code' })),
      body);
    this.el.replaceChildren(table);
    this.body = body;
    this.markTarget();
    this.decorate();
  }

  private body: HTMLTableSectionElement | null = null;

  /** Puts the page's comment rows back under their lines (after a drawing, or when the comments changed). */
  decorate() {
    if (this.body) this.opts.comments?.decorate(this.body, this.layout);
  }

  /** Wires a "+" press, shift-click and drag over the table (once: the table's element stays, its rows are redrawn). */
  private wired = false;
  private wireComments() {
    const c = this.opts.comments;
    if (!c || this.wired) return;
    this.wired = true;
    let drag: { side: CommentSide; line: number } | null = null;
    const lineOf = (target: EventTarget | null, side: CommentSide): number | null => {
      const tr = (target as HTMLElement | null)?.closest?.('tr.ln');
      const td = tr?.querySelector<HTMLElement>(`td.num[data-line^="${side === 'OLD' ? 'L' : 'R'}"]`);
      return td ? Number(td.dataset.line!.slice(1)) : null;
    };
    this.el.addEventListener('mousedown', (ev) => {
      const b = (ev.target as HTMLElement).closest?.<HTMLElement>('button.add-comment');
      drag = b && ev.button === 0 && !ev.shiftKey ? { side: b.dataset.side as CommentSide, line: Number(b.dataset.line) } : null;
    });
    this.el.addEventListener('mouseup', (ev) => {
      const d = drag;
      drag = null;
      if (!d) return;
      const end = lineOf(ev.target, d.side);
      // Released on another line of the same side: a comment on the lines between (the click, if any, goes to no button).
      if (end != null && end !== d.line) c.add(d.side, end, { shift: false, from: d.line });
    });
    this.el.addEventListener('click', (ev) => {
      const b = (ev.target as HTMLElement).closest?.<HTMLElement>('button.add-comment');
      if (!b) return;
      ev.preventDefault();
      c.add(b.dataset.side as CommentSide, Number(b.dataset.line), { shift: ev.shiftKey, from: null });
    });
  }
}
