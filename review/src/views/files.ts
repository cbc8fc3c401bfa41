import { badge, h } from '../dom.js';
import { parsePatch, splitLines, textMatches } from '../diff/patch.js';
import { DiffTable, fileTable, isLineAnchor, loadLanguageOf, type Layout, type LineAnchor } from '../diff/render.js';
import type { ReviewComments } from '../comments.js';

export interface FileEntry {
  path: string; status: string; additions: number; deletions: number; binary: boolean;
  /** RENAMED: the path it had before, and how similar the two contents are (percent; 100: the same). */
  previousPath?: string | null; similarity?: number | null;
}
export interface Omission { path: string; reason: string; detail: string }

/** Where a stacked changeset reads its patches and the texts of its two sides (an execution, a range, a drift). */
export interface ChangesSource {
  /** Names the changeset for the viewed marks kept in localStorage. */
  key: string;
  files: FileEntry[];
  omissions: Omission[];
  patch(path: string): Promise<{ patch: string | null; binary: boolean; lines?: LineOrigins | null } | null>;
  text(side: 'old' | 'new', path: string): Promise<string | null>;
  href(path: string): string;
  /** The changeset's review comments: a "+" on every line, a comment button on each file, the threads. */
  comments?: ReviewComments;
  /** Who changed each file (marks for its header: "#2", "outside edit"), where the changeset spans several (a range). */
  fileMarks?(path: string): HTMLElement[];
  /** The file's blame view (the file at the changeset's end; a deleted one at its start). */
  blameHref?(file: FileEntry): string | null;
}

/** Who removed each `-` line (by its old number) and last changed each `+` line (by its new one) of a file's patch: a mark each. */
export interface LineOrigins { del: (line: number) => HTMLElement | null; add: (line: number) => HTMLElement | null }

const STATUS_LETTER: Record<string, string> = { ADDED: 'A', MODIFIED: 'M', DELETED: 'D', RENAMED: 'R' };

/** A renamed file's badge: how much of it stayed. */
function renameBadge(f: FileEntry): HTMLElement | null {
  if (f.status !== 'RENAMED') return null;
  return f.similarity === 100
    ? badge('renamed · content unchanged', 'rename', `Moved from ${f.previousPath}: the same bytes`)
    : badge(`renamed · ${f.similarity}% similar`, 'rename', `Moved from ${f.previousPath}; ${f.similarity}% of the content is the same (git's similarity index): only the differences are shown`);
}
const LAYOUT_KEY = 'gateway.review.layout';
const WHITESPACE_KEY = 'gateway.review.hide-whitespace';

/** A file's link naming one line of its diff: the file's own link, then ?line=L12 (old side) or R12 (new side). */
export function lineHref(fileHref: string, anchor: LineAnchor): string {
  return `${fileHref}?line=${anchor}`;
}

/**
 * The file tree's order, which the stack and j / k follow too: level by level, folders before files, names in the
 * gateway's (byte) order.
 */
export function treeOrder(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const xDir = i < x.length - 1;
    const yDir = i < y.length - 1;
    if (x[i] === y[i] && xDir === yDir) continue;
    if (xDir !== yDir) return xDir ? -1 : 1;
    return x[i] < y[i] ? -1 : 1;
  }
  return 0;
}

/** The omissions that concern one file: on its path, or on a directory containing it. */
export function omissionsOf(path: string, omissions: Omission[]): Omission[] {
  return omissions.filter((o) => o.path === path || o.path === '.' || path.startsWith(`${o.path}/`));
}

function storedLayout(): Layout {
  const saved = localStorage.getItem(LAYOUT_KEY);
  if (saved === 'split' || saved === 'unified') return saved;
  return window.innerWidth < 900 ? 'unified' : 'split';
}

/** Per-file "viewed" marks of one changeset, kept in the browser. */
class ViewedMarks {
  private readonly storageKey: string;
  private readonly set: Set<string>;
  constructor(key: string) {
    this.storageKey = `gateway.review.viewed.${key}`;
    let paths: string[] = [];
    try { paths = JSON.parse(localStorage.getItem(this.storageKey) ?? '[]'); } catch { /* unreadable: none */ }
    this.set = new Set(Array.isArray(paths) ? paths : []);
  }
  has(p: string) { return this.set.has(p); }
  get size() { return this.set.size; }
  toggle(p: string, on: boolean) {
    if (on) this.set.add(p); else this.set.delete(p);
    if (this.set.size) localStorage.setItem(this.storageKey, JSON.stringify([...this.set]));
    else localStorage.removeItem(this.storageKey);
  }
}

/** At most this many patch requests at a time: files scrolled past quickly do not queue a storm. */
const PARALLEL = 4;

interface Card {
  file: FileEntry;
  el: HTMLElement;
  body: HTMLElement;
  /** Within the body: the diff, and the whole file ("View file"), one of them shown. */
  diff: HTMLElement;
  view: HTMLElement;
  toggle: HTMLButtonElement;
  viewed: HTMLInputElement;
  treeItem: HTMLElement;
  state: 'idle' | 'queued' | 'loading' | 'done';
  table: DiffTable | null;
  collapsed: boolean;
  /** The permalink's line, shown once the diff is drawn. */
  line: LineAnchor | null;
  /** The whole file shown instead of its diff ("View file"), and the button that toggles it. */
  viewing: boolean;
  viewButton: HTMLButtonElement | null;
}

/**
 * All files of a changeset stacked (GitHub's "Files changed"): one header per file with collapse and
 * a "viewed" mark, the diff of each file loaded when it scrolls near the viewport
 * (IntersectionObserver), context expanded from the stored texts, and a file tree with a filter.
 */
export class FilesView {
  readonly el: HTMLElement;
  private readonly cards = new Map<string, Card>();
  /** The changeset's files in the tree's order. */
  private readonly files: FileEntry[];
  private readonly order: Card[] = [];
  private readonly marks: ViewedMarks;
  private readonly observer: IntersectionObserver;
  private layout = storedLayout();
  private hideWhitespace = localStorage.getItem(WHITESPACE_KEY) === '1';
  private inFlight = 0;
  private readonly queue: Card[] = [];
  private readonly progress = h('span', { class: 'viewed-progress' });
  private readonly filter = h('input', { type: 'search', class: 'tree-filter', placeholder: 'Filter files…', 'aria-label': 'Filter files' });
  private readonly onKey = (ev: KeyboardEvent) => this.key(ev);
  private closed = false;

  constructor(private readonly src: ChangesSource, focus: string | null = null, line: string | null = null) {
    this.marks = new ViewedMarks(src.key);
    this.observer = new IntersectionObserver((entries) => {
      for (const en of entries) {
        if (!en.isIntersecting) continue;
        const card = this.cards.get((en.target as HTMLElement).dataset.path!);
        if (card) this.want(card);
      }
    }, { rootMargin: '1200px 0px' });
    const stack = h('div', { class: 'file-stack' });
    this.files = [...src.files].sort((a, b) => treeOrder(a.path, b.path));
    for (const f of this.files) {
      const card = this.card(f);
      stack.append(card.el);
      this.observer.observe(card.el);
    }
    const tree = this.tree();
    this.filter.addEventListener('input', () => this.applyFilter());
    const layoutToggle = h('div', { class: 'layout-toggle', role: 'group', 'aria-label': 'Diff layout' },
      ...(['split', 'unified'] as Layout[]).map((l) => h('button', {
        type: 'button', 'data-layout': l, 'aria-pressed': String(this.layout === l), onclick: () => this.setLayout(l),
      }, l === 'split' ? 'Split' : 'Unified')));
    const collapseAll = h('button', { type: 'button', class: 'collapse-all', onclick: () => this.collapseAll() }, 'Collapse all');
    const whitespace = h('input', { type: 'checkbox', class: 'hide-whitespace' });
    whitespace.checked = this.hideWhitespace;
    whitespace.addEventListener('change', () => this.setHideWhitespace(whitespace.checked));
    this.el = h('div', { class: 'files-view' },
      src.comments?.el ?? null,
      h('div', { class: 'files-toolbar' }, this.progress, h('span', { class: 'spacer' }),
        h('span', { class: 'muted keys' }, 'j / k: next / previous file'),
        h('label', { class: 'whitespace-toggle', title: 'Show removed and added lines that differ only in whitespace as unchanged (git diff -w)' }, whitespace, ' Hide whitespace'),
        collapseAll, layoutToggle),
      h('div', { class: 'changes-split' },
        h('details', { class: 'tree-box', open: window.innerWidth >= 800 }, h('summary', {}, `Files (${src.files.length})`),
          h('div', { class: 'tree-inner' }, this.filter, tree)),
        stack));
    this.updateProgress();
    document.addEventListener('keydown', this.onKey);
    if (focus) queueMicrotask(() => this.focus(focus, line));
  }

  destroy() {
    this.closed = true;
    this.observer.disconnect();
    document.removeEventListener('keydown', this.onKey);
  }

  has(path: string) { return this.cards.has(path); }

  /**
   * Scrolls to a file, opening it (a deep link, a click in the tree); with a line (a permalink, "L12" or "R12"), to
   * that line of its diff once it is drawn, marked.
   */
  focus(path: string, line: string | null = null) {
    const card = this.cards.get(path);
    if (!card) return;
    if (card.collapsed) this.setCollapsed(card, false);
    if (card.viewing) void this.setViewing(card, false);
    for (const c of this.order) c.el.classList.toggle('focused', c === card);
    for (const c of this.order) c.treeItem.classList.toggle('selected', c === card);
    for (const c of this.order) if (c !== card) { c.line = null; c.table?.setTarget(null); }
    card.line = isLineAnchor(line) ? line : null;
    card.el.scrollIntoView({ block: 'start' });
    this.want(card);
    if (card.table) this.showLine(card);
  }

  /** The permalink's line of a drawn file: revealed (its stretch of context expanded if need be), marked, scrolled to. */
  private showLine(card: Card) {
    const line = card.line;
    if (!line || !card.table) return;
    void card.table.reveal(line).then((row) => {
      if (row && card.line === line && !this.closed) row.scrollIntoView({ block: 'center' });
    });
  }

  /** A click on a line number: the URL becomes the line's permalink, and the line is marked. */
  private linkLine(card: Card, anchor: LineAnchor) {
    history.replaceState(null, '', lineHref(this.src.href(card.file.path), anchor));
    for (const c of this.order) if (c !== card) { c.line = null; c.table?.setTarget(null); }
    card.line = anchor;
    card.table?.setTarget(anchor);
  }

  /** Copies a file's path to the clipboard; where the page may not write it (not a secure context), selects it. */
  private async copyPath(card: Card, button: HTMLButtonElement) {
    const name = card.el.querySelector('.file-name')!;
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(card.file.path);
      button.textContent = 'Copied';
    } catch {
      getSelection()?.selectAllChildren(name);
      button.textContent = 'Selected: press Ctrl+C';
    }
    setTimeout(() => { button.textContent = 'Copy path'; }, 1_500);
  }

  /** "View file": the whole file as the changeset left it (as it was before, for a deleted one), instead of its diff. */
  private async setViewing(card: Card, on: boolean) {
    card.viewing = on;
    card.viewButton!.textContent = on ? 'View diff' : 'View file';
    card.viewButton!.setAttribute('aria-pressed', String(on));
    card.diff.hidden = on;
    card.view.hidden = !on;
    if (!on) { card.view.replaceChildren(); return; }
    if (card.collapsed) this.setCollapsed(card, false);
    const deleted = card.file.status === 'DELETED';
    const view = card.view;
    view.dataset.side = deleted ? 'old' : 'new';
    view.replaceChildren(h('p', { class: 'muted loading' }, 'Loading the file…'));
    let text: string | null = null;
    let failed: unknown = null;
    try { text = await this.src.text(deleted ? 'old' : 'new', card.file.path); } catch (e) { failed = e; }
    if (!card.viewing) return;
    view.replaceChildren(
      h('p', { class: 'muted file-view-note' }, deleted ? 'The file as it was before it was deleted.' : 'The whole file as it was left at the end.'),
      text != null ? fileTable(text, card.file.path)
        : h('p', { class: 'error-box' }, failed ? `The file could not be read: ${failed instanceof Error ? failed.message : String(failed)}`
          : 'The stored text of this file is not available (not captured, omitted, binary or expired).'));
  }

  private card(f: FileEntry): Card {
    const omissions = omissionsOf(f.path, this.src.omissions);
    const toggle = h('button', { type: 'button', class: 'collapse', 'aria-expanded': 'true', title: 'Collapse / expand this file' }, '▾');
    const viewed = h('input', { type: 'checkbox', class: 'viewed-box' });
    const diff = h('div', { class: 'file-diff' });
    const view = h('div', { class: 'file-view', hidden: true });
    const comments = this.src.comments;
    const body = h('div', { class: 'file-body' }, comments ? comments.fileBox(f.path) : null, diff, view);
    const copy = h('button', { type: 'button', class: 'copy-path', title: `Copy ${f.path}` }, 'Copy path');
    const viewFile = f.binary ? null : h('button', { type: 'button', class: 'view-file', 'aria-pressed': 'false',
      title: f.status === 'DELETED' ? 'The whole file as it was before it was deleted' : 'The whole file as it was left' }, 'View file');
    // Room for the diff before it loads, so the scroll position stays put as files render.
    body.style.minHeight = `${Math.min(600, 40 + 20 * (f.additions + f.deletions + 6))}px`;
    const el = h('section', { class: 'file-card', 'data-path': f.path, 'data-status': f.status },
      h('header', { class: 'file-head' }, toggle,
        h('span', { class: `file-status fs-${f.status.toLowerCase()}`, title: f.status }, STATUS_LETTER[f.status] ?? '?'),
        f.status === 'RENAMED' && f.previousPath
          ? h('a', { class: 'file-name renamed', href: this.src.href(f.path), title: `${f.previousPath} → ${f.path}` },
            h('span', { class: 'old-path' }, f.previousPath), h('span', { class: 'rename-arrow' }, ' → '), h('span', { class: 'new-path' }, f.path))
          : h('a', { class: 'file-name', href: this.src.href(f.path) }, f.path),
        renameBadge(f),
        h('span', { class: 'file-stat' }, h('span', { class: 'add' }, `+${f.additions}`), ' ', h('span', { class: 'del' }, `−${f.deletions}`)),
        f.binary ? badge('binary', 'muted') : null,
        ...omissions.map((o) => badge(o.reason === 'CAPTURE_LIMIT' && o.path === '.' ? 'partial capture' : `omitted: ${o.reason}`, 'warn', o.detail)),
        ...(this.src.fileMarks?.(f.path) ?? []),
        h('span', { class: 'spacer' }),
        copy, viewFile, this.src.blameHref?.(f) ? h('a', { class: 'blame-link button-link', href: this.src.blameHref(f)!, title: `Who last changed each line of ${f.path}` }, 'Blame') : null,
        comments ? comments.fileButton(f.path) : null,
        h('label', { class: 'viewed' }, viewed, ' Viewed')),
      body);
    const treeItem = h('li', { class: 'tree-file', 'data-path': f.path },
      h('a', { href: this.src.href(f.path), title: f.previousPath ? `${f.previousPath} → ${f.path}` : f.path },
        h('span', { class: `file-status fs-${f.status.toLowerCase()}` }, STATUS_LETTER[f.status] ?? '?'), ' ',
        h('span', { class: 'tree-name' }, f.path.split('/').pop()!)),
      h('span', { class: 'tree-check', 'aria-hidden': 'true' }, '✓'));
    const card: Card = { file: f, el, body, diff, view, toggle, viewed, treeItem, state: 'idle', table: null, collapsed: false, line: null, viewing: false, viewButton: viewFile };
    toggle.addEventListener('click', () => this.setCollapsed(card, !card.collapsed));
    copy.addEventListener('click', () => { void this.copyPath(card, copy); });
    viewFile?.addEventListener('click', () => { void this.setViewing(card, !card.viewing); });
    viewed.addEventListener('change', () => {
      this.marks.toggle(f.path, viewed.checked);
      el.classList.toggle('is-viewed', viewed.checked);
      treeItem.classList.toggle('is-viewed', viewed.checked);
      this.setCollapsed(card, viewed.checked);
      if (viewed.checked && el.getBoundingClientRect().top < 0) el.scrollIntoView({ block: 'start' });
      this.updateProgress();
    });
    if (this.marks.has(f.path)) {
      viewed.checked = true;
      el.classList.add('is-viewed');
      treeItem.classList.add('is-viewed');
      card.collapsed = true;
      body.hidden = true;
      toggle.setAttribute('aria-expanded', 'false');
      toggle.textContent = '▸';
    }
    this.cards.set(f.path, card);
    this.order.push(card);
    comments?.attach(f.path, { redecorate: () => card.table?.decorate(), drawn: () => card.state === 'done' });
    return card;
  }

  private setCollapsed(card: Card, on: boolean) {
    card.collapsed = on;
    card.body.hidden = on;
    card.toggle.setAttribute('aria-expanded', String(!on));
    card.toggle.textContent = on ? '▸' : '▾';
    if (!on) this.want(card);
  }

  private collapseAll() {
    for (const c of this.order) this.setCollapsed(c, true);
  }

  private updateProgress() {
    const n = this.src.files.filter((f) => this.marks.has(f.path)).length;
    this.progress.textContent = `${n} / ${this.src.files.length} files viewed`;
  }

  /** A card near the viewport: its patch is fetched (a few at a time) and drawn. */
  private want(card: Card) {
    if (card.state !== 'idle' || card.collapsed || card.el.hidden) return;
    card.state = 'queued';
    this.queue.push(card);
    this.pump();
  }

  private pump() {
    while (this.inFlight < PARALLEL && this.queue.length) {
      const card = this.queue.shift()!;
      card.state = 'loading';
      this.inFlight++;
      card.diff.replaceChildren(h('p', { class: 'muted loading' }, 'Loading the diff…'));
      Promise.all([this.src.patch(card.file.path), loadLanguageOf(card.file.path)]).then(([p]) => this.draw(card, p), (e) => {
        card.state = 'idle';
        card.diff.replaceChildren(h('p', { class: 'error-box' }, `The diff could not be loaded: ${e instanceof Error ? e.message : String(e)}`));
      }).finally(() => { this.inFlight--; this.pump(); });
    }
  }

  private draw(card: Card, file: { patch: string | null; binary: boolean; lines?: LineOrigins | null } | null) {
    if (this.closed) return;
    card.state = 'done';
    card.body.style.minHeight = '';
    const f = card.file;
    // A file without a diff to draw lists its line comments with its own.
    if (!file?.patch || !parsePatch(file.patch).length) queueMicrotask(() => this.src.comments?.refreshFile(f.path));
    if (!file?.patch) {
      const why = this.src.omissions.filter((o) => o.path === f.path);
      card.diff.replaceChildren(h('div', { class: 'not-rendered', 'data-not-rendered': f.binary ? 'binary' : 'omitted' },
        h('strong', {}, f.binary ? 'Binary file: its content is not rendered.' : 'This file\'s patch was not rendered.'),
        ...why.map((o) => h('p', {}, badge(o.reason, 'warn'), ' ', o.detail)),
        !why.length && !f.binary ? h('p', {}, 'See the coverage omissions above.') : null));
      return;
    }
    const hunks = parsePatch(file.patch);
    if (!hunks.length && f.status === 'RENAMED') {
      card.diff.replaceChildren(h('div', { class: 'not-rendered rename-only', 'data-not-rendered': 'renamed' },
        h('strong', {}, 'File renamed without changes.'), ' ', h('span', { class: 'muted' }, `${f.previousPath} → ${f.path}`)));
      return;
    }
    const src = this.src;
    // Unchanged lines exist only around the hunks of a modified file; they are read from its stored
    // new side, offered only when that text agrees with every line the patch shows of it.
    const expand = f.status === 'MODIFIED' || f.status === 'RENAMED' ? {
      async lines() {
        const text = await src.text('new', f.path);
        if (text == null) return null;
        const lines = splitLines(text);
        if (!textMatches(hunks, lines, 'new')) return null;
        return Object.assign((n: number) => lines[n - 1] ?? '', { count: lines.length });
      },
    } : null;
    card.table = new DiffTable(hunks, f.path, this.layout, expand, {
      hideWhitespace: this.hideWhitespace,
      onLine: (anchor) => this.linkLine(card, anchor),
      comments: this.src.comments?.lines(f.path),
      origin: file.lines ? (kind, n) => file.lines![kind](n) : undefined,
    });
    card.diff.replaceChildren(card.table.el);
    this.showLine(card);
  }

  private setHideWhitespace(on: boolean) {
    this.hideWhitespace = on;
    if (on) localStorage.setItem(WHITESPACE_KEY, '1'); else localStorage.removeItem(WHITESPACE_KEY);
    for (const c of this.order) c.table?.setHideWhitespace(on);
  }

  private setLayout(l: Layout) {
    this.layout = l;
    localStorage.setItem(LAYOUT_KEY, l);
    this.el.querySelectorAll('.layout-toggle button').forEach((b) => b.setAttribute('aria-pressed', String((b as HTMLElement).dataset.layout === l)));
    for (const c of this.order) c.table?.setLayout(l);
  }

  private tree(): HTMLElement {
    interface Dir { name: string; dirs: Map<string, Dir>; files: FileEntry[] }
    const root: Dir = { name: '', dirs: new Map(), files: [] };
    for (const f of this.files) {
      const parts = f.path.split('/');
      let d = root;
      for (const p of parts.slice(0, -1)) {
        let next = d.dirs.get(p);
        if (!next) d.dirs.set(p, (next = { name: p, dirs: new Map(), files: [] }));
        d = next;
      }
      d.files.push(f);
    }
    const list = (d: Dir): HTMLElement => h('ul', {},
      ...[...d.dirs.values()].map((sub) => {
        // a/b/c with nothing else on the way is one entry
        let name = sub.name;
        while (sub.files.length === 0 && sub.dirs.size === 1) { sub = [...sub.dirs.values()][0]; name += `/${sub.name}`; }
        return h('li', { class: 'tree-dir' }, h('details', { open: true }, h('summary', {}, `${name}/`), list(sub)));
      }),
      ...d.files.map((f) => this.cards.get(f.path)?.treeItem ?? h('li', { class: 'tree-file', 'data-path': f.path }, f.path)));
    return h('nav', { class: 'file-tree', 'aria-label': 'Changed files' }, list(root));
  }

  private applyFilter() {
    const q = this.filter.value.trim().toLowerCase();
    for (const c of this.order) {
      const show = !q || c.file.path.toLowerCase().includes(q) || !!c.file.previousPath?.toLowerCase().includes(q);
      c.el.hidden = !show;
      c.treeItem.hidden = !show;
    }
    // Directories with nothing shown are hidden too.
    const dirs = [...this.el.querySelectorAll<HTMLElement>('.file-tree li.tree-dir')].reverse();
    for (const d of dirs) d.hidden = !d.querySelector('li.tree-file:not([hidden])');
  }

  private key(ev: KeyboardEvent) {
    if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const t = ev.target as HTMLElement | null;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (ev.key !== 'j' && ev.key !== 'k') return;
    const visible = this.order.filter((c) => !c.el.hidden);
    if (!visible.length) return;
    ev.preventDefault();
    // From the focused file, else from the files' positions: j the first header below the top bar, k the last above it.
    const down = ev.key === 'j';
    const i = visible.findIndex((c) => c.el.classList.contains('focused'));
    let next: Card | undefined;
    if (i >= 0) next = visible[Math.min(visible.length - 1, Math.max(0, i + (down ? 1 : -1)))];
    else if (down) next = visible.find((c) => c.el.getBoundingClientRect().top > 56) ?? visible[visible.length - 1];
    else next = [...visible].reverse().find((c) => c.el.getBoundingClientRect().top < 40) ?? visible[0];
    history.replaceState(null, '', this.src.href(next.file.path));
    this.focus(next.file.path);
  }
}
