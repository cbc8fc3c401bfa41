import { diffArrays, diffWordsWithSpace } from 'diff';
import type { Line } from './patch.js';

/** A stretch [start, end) of a line's text that changed within the line. */
export type Range = [number, number];

/** Lines longer than this are not compared word by word (the cost grows with the product of the lengths). */
const MAX_LENGTH = 2_000;
/** Below this share of unchanged text two lines are different lines, not one edited: marking words would be noise. */
const MIN_COMMON = 0.4;

/**
 * Word-level changes within an edited line: each run of removed lines is paired, in order, with the run of added
 * lines that follows it, and each pair compared word by word (whitespace kept as its own tokens). Returns, for each
 * line of a pair similar enough to be one line edited, the stretches of its text that changed: removed words on
 * the removed line, added ones on the added line.
 */
export function wordChanges(lines: Line[]): Map<Line, Range[]> {
  const out = new Map<Line, Range[]>();
  for (let i = 0; i < lines.length;) {
    if (lines[i].kind !== 'del') { i++; continue; }
    const dels: Line[] = [];
    const adds: Line[] = [];
    while (i < lines.length && lines[i].kind === 'del') dels.push(lines[i++]);
    while (i < lines.length && lines[i].kind === 'add') adds.push(lines[i++]);
    for (let k = 0; k < Math.min(dels.length, adds.length); k++) {
      const pair = changedWords(dels[k].text, adds[k].text);
      if (!pair) continue;
      out.set(dels[k], pair.old);
      out.set(adds[k], pair.new);
    }
  }
  return out;
}

/** The changed stretches of two versions of one line, or null when they are too different (or too long) to pair. */
export function changedWords(before: string, after: string): { old: Range[]; new: Range[] } | null {
  if (before === after || before.length > MAX_LENGTH || after.length > MAX_LENGTH) return null;
  const old: Range[] = [];
  const neu: Range[] = [];
  let o = 0;
  let n = 0;
  let common = 0;
  for (const part of diffWordsWithSpace(before, after)) {
    const len = part.value.length;
    if (part.removed) { old.push([o, o + len]); o += len; }
    else if (part.added) { neu.push([n, n + len]); n += len; }
    else { o += len; n += len; common += len; }
  }
  if (common < MIN_COMMON * Math.max(before.length, after.length)) return null;
  return { old, new: neu };
}

const withoutSpace = (text: string) => text.replace(/\s+/g, '');

/**
 * A hunk's lines with whitespace changes hidden (git diff -w): within each run of removed lines and the added lines
 * after it, a removed line and an added one that differ only in whitespace become one unchanged line (the new text,
 * both numbers); what remains removed or added is a change beyond whitespace.
 */
export function hideWhitespace(lines: Line[]): Line[] {
  const out: Line[] = [];
  for (let i = 0; i < lines.length;) {
    if (lines[i].kind === 'ctx') { out.push(lines[i++]); continue; }
    const dels: Line[] = [];
    const adds: Line[] = [];
    while (i < lines.length && lines[i].kind === 'del') dels.push(lines[i++]);
    while (i < lines.length && lines[i].kind === 'add') adds.push(lines[i++]);
    let d = 0;
    let a = 0;
    for (const part of diffArrays(dels, adds, { comparator: (x, y) => withoutSpace(x.text) === withoutSpace(y.text) })) {
      const n = part.count ?? part.value.length;
      if (part.removed) { out.push(...dels.slice(d, d + n)); d += n; }
      else if (part.added) { out.push(...adds.slice(a, a + n)); a += n; }
      else {
        for (let k = 0; k < n; k++) out.push({ ...adds[a + k], kind: 'ctx', old: dels[d + k].old });
        d += n;
        a += n;
      }
    }
  }
  return out;
}

/**
 * Wraps the stretches `ranges` of an element's text in <mark class="cls">, across the elements syntax highlighting
 * made (each text node is split where a stretch starts or ends).
 */
export function markRanges(el: HTMLElement, ranges: Range[], cls: string): void {
  if (!ranges.length) return;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let t = walker.nextNode(); t; t = walker.nextNode()) texts.push(t as Text);
  let offset = 0;
  for (const text of texts) {
    const start = offset;
    const end = offset + text.data.length;
    offset = end;
    // The stretches of this node, from its end back to its start, so splitting keeps the earlier offsets valid.
    const inside = ranges.filter(([a, b]) => a < end && b > start).reverse();
    for (const [a, b] of inside) {
      const from = Math.max(a, start) - start;
      const to = Math.min(b, end) - start;
      let piece = text;
      if (to < piece.data.length) piece.splitText(to);
      if (from > 0) piece = piece.splitText(from);
      const mark = document.createElement('mark');
      mark.className = cls;
      piece.replaceWith(mark);
      mark.append(piece);
    }
  }
}
