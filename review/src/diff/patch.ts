/**
 * Unified patches as the gateway renders them (one file's `diff --git` text): parsed into hunks,
 * and the unchanged stretches between them ("gaps"), which the page fills from the stored text of
 * the file (Snapshot.text) when the reader expands context. Pure functions: no DOM.
 */
export type LineKind = 'ctx' | 'del' | 'add';
export interface Line { kind: LineKind; text: string; old: number | null; new: number | null; noNewline?: boolean }
export interface Hunk {
  oldStart: number; oldLines: number; newStart: number; newLines: number;
  /** The text after the second @@ (a function name, when the differ found one). */
  section: string;
  lines: Line[];
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$/;

export function parsePatch(patch: string): Hunk[] {
  const hunks: Hunk[] = [];
  let cur: Hunk | null = null;
  let o = 0;
  let n = 0;
  for (const raw of patch.split('\n')) {
    const m = HEADER.exec(raw);
    if (m) {
      cur = { oldStart: +m[1], oldLines: m[2] === undefined ? 1 : +m[2], newStart: +m[3], newLines: m[4] === undefined ? 1 : +m[4], section: m[5] ?? '', lines: [] };
      hunks.push(cur);
      o = cur.oldStart;
      n = cur.newStart;
      continue;
    }
    if (!cur) continue;
    if (raw.startsWith('diff --git ')) { cur = null; continue; }
    const c = raw[0];
    if (c === ' ') cur.lines.push({ kind: 'ctx', text: raw.slice(1), old: o++, new: n++ });
    else if (c === '-') cur.lines.push({ kind: 'del', text: raw.slice(1), old: o++, new: null });
    else if (c === '+') cur.lines.push({ kind: 'add', text: raw.slice(1), old: null, new: n++ });
    else if (c === '\\') { const last = cur.lines[cur.lines.length - 1]; if (last) last.noNewline = true; }
  }
  return hunks;
}

/** Lines of a file's text, 1-based by index + 1 (a final newline ends the last line, it starts none). */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** New-side lines before a hunk, and the old side's. (A hunk of 0 lines on a side starts after its start line.) */
const newBefore = (h: Hunk) => (h.newLines === 0 ? h.newStart : h.newStart - 1);
const oldBefore = (h: Hunk) => (h.oldLines === 0 ? h.oldStart : h.oldStart - 1);

/**
 * The unchanged new-side lines [from, to] before hunk `index` (index = hunks.length: after the last
 * one, `to` being the file's last line, null while the text is not known), and `delta` = old - new
 * line number over that stretch.
 */
export interface Gap { index: number; from: number; to: number | null; delta: number }

/** Lines of context the gateway renders around a change (domain/changesets.ts CONTEXT). */
export const PATCH_CONTEXT = 3;

export function gaps(hunks: Hunk[]): Gap[] {
  const out: Gap[] = [];
  let from = 1;
  let delta = 0;
  for (let i = 0; i < hunks.length; i++) {
    const h = hunks[i];
    out.push({ index: i, from, to: newBefore(h), delta: oldBefore(h) - newBefore(h) });
    from = newBefore(h) + h.newLines + 1;
    delta = oldBefore(h) + h.oldLines - (newBefore(h) + h.newLines);
  }
  if (hunks.length) {
    // Fewer context lines after the last change than the gateway renders: the file ends there.
    const lines = hunks[hunks.length - 1].lines;
    let trailing = 0;
    while (trailing < lines.length && lines[lines.length - 1 - trailing].kind === 'ctx') trailing++;
    out.push({ index: hunks.length, from, to: trailing < PATCH_CONTEXT ? from - 1 : null, delta });
  }
  return out;
}

/**
 * Whether the text agrees with every line the patch shows of that side (context and, for the new
 * side, additions): expanded context is only offered when the stored text is the patch's own.
 */
export function textMatches(hunks: Hunk[], lines: string[], side: 'old' | 'new'): boolean {
  for (const h of hunks) {
    for (const l of h.lines) {
      const at = side === 'new' ? l.new : l.old;
      if (at == null) continue;
      if (lines[at - 1] !== l.text) return false;
    }
  }
  return true;
}

/**
 * The header of the block of lines shown from hunk `first` to hunk `last` once context was expanded: `above` lines
 * shown just above `first`, `below` just below `last` (every gap between them fully shown). Unexpanded, it is the
 * hunk's own header; expanded to line 1 it starts at 1 ("@@ -1,40 +1,40 @@").
 */
export function blockHeader(first: Hunk, last: Hunk, above: number, below: number): string {
  const side = (before: (h: Hunk) => number, lines: (h: Hunk) => number) => {
    const from = before(first) + 1 - above;
    const count = before(last) + lines(last) + below - from + 1;
    return `${count === 0 ? from - 1 : from},${count}`;
  };
  const header = `@@ -${side(oldBefore, (h) => h.oldLines)} +${side(newBefore, (h) => h.newLines)} @@`;
  return first.section ? `${header} ${first.section}` : header;
}

/** Context lines of a gap's stretch [from, to] (new-side numbers), numbered on both sides. */
export function contextLines(lineAt: (n: number) => string, gap: Gap, from: number, to: number): Line[] {
  const out: Line[] = [];
  for (let n = from; n <= to; n++) out.push({ kind: 'ctx', text: lineAt(n), old: n + gap.delta, new: n });
  return out;
}
