import hljs from 'highlight.js/lib/core';
import { h } from '../dom.js';
import { blockHeader, contextLines, gaps, type Gap, type Hunk, type Line } from './patch.js';
import { markRanges, wordChanges } from './words.js';

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

export type Layout = 'split' | 'unified';
const SIGN: Record<Line['kind'], string> = { ctx: ' ', del: '-', add: '+' };

/** What a rendered file needs to expand its context: the text of the file by new-side line number, loaded on first use. */
export interface ExpandSource { lines(): Promise<((n: number) => string) & { count: number } | null> }

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

  constructor(private hunks: Hunk[], path: string, private layout: Layout, private source: ExpandSource | null) {
    this.gaps = gaps(hunks);
    this.top = this.gaps.map(() => 0);
    this.bottom = this.gaps.map(() => 0);
    this.lang = languageOf(path);
    this.render();
  }

  setLayout(l: Layout) { this.layout = l; this.render(); }

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

  private lineRows(lines: Line[]): HTMLElement[] {
    const rows: HTMLElement[] = [];
    const words = wordChanges(lines);
    const num = (n: number | null, side: string, kind: string) => h('td', { class: `num num-${side} num-${kind}` }, n == null ? '' : String(n));
    const code = (l: Line | null, side: string) => {
      if (!l) return h('td', { class: 'code', 'data-kind': 'empty', 'data-side': side });
      const span = codeSpan(l.text, this.lang);
      const changed = words.get(l);
      if (changed) markRanges(span, changed, l.kind === 'del' ? 'word-del' : 'word-add');
      return h('td', { class: `code${l.noNewline ? ' nonl' : ''}`, 'data-kind': l.kind, 'data-side': side, 'data-sign': SIGN[l.kind] }, span);
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
      if (at && this.top[i]) body.append(...this.lineRows(contextLines(at, g, g.from, g.from + this.top[i] - 1)));
      const row = this.gapRow(i, cols);
      if (row) body.append(row);
      const to = g.to ?? at?.count ?? 0;
      if (at && this.bottom[i]) body.append(...this.lineRows(contextLines(at, g, to - this.bottom[i] + 1, to)));
      if (i < this.hunks.length) body.append(...this.lineRows(this.hunks[i].lines));
    }
    const table = h('table', { class: `diff diff-${this.layout}` },
      this.layout === 'split'
        ? h('colgroup', {}, h('col', { class: 'c-num' }), h('col', { class: 'c-code' }), h('col', { class: 'c-num' }), h('col', { class: 'c-code' }))
        : h('colgroup', {}, h('col', { class: 'c-num' }), h('col', { class: 'c-num' }), h('col', { class: 'c-code' })),
      body);
    this.el.replaceChildren(table);
  }
}
