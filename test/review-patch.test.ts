import { describe, expect, it } from 'vitest';
import { blockHeader, contextLines, gaps, parsePatch, splitLines, textMatches } from '../review/src/diff/patch.js';
import { changedWords, hideWhitespace, wordChanges } from '../review/src/diff/words.js';

/** The review page's patch reading (review/src/diff/patch.ts): hunks, the gaps between them, exact context. */
describe('review patch reading', () => {
  const patch = [
    'diff --git a/f.txt b/f.txt', '--- a/f.txt', '+++ b/f.txt',
    '@@ -2,3 +2,3 @@ fn', ' two', '-three', '+THREE', ' four',
    '@@ -9,2 +8,0 @@', '-nine', '-ten',
    '@@ -14,3 +12,4 @@', ' fourteen', ' fifteen', ' sixteen', '+end',
    '\\ No newline at end of file', '',
  ].join('\n');
  const before = Array.from({ length: 16 }, (_, i) => ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen'][i]);
  const after = [...before];
  after[2] = 'THREE';
  after.splice(8, 2);
  after.push('end');

  it('numbers every line on its sides and marks a missing final newline', () => {
    const hs = parsePatch(patch);
    expect(hs.map((x) => [x.oldStart, x.oldLines, x.newStart, x.newLines, x.section])).toEqual([[2, 3, 2, 3, 'fn'], [9, 2, 8, 0, ''], [14, 3, 12, 4, '']]);
    expect(hs[0].lines).toEqual([
      { kind: 'ctx', text: 'two', old: 2, new: 2 }, { kind: 'del', text: 'three', old: 3, new: null },
      { kind: 'add', text: 'THREE', old: null, new: 3 }, { kind: 'ctx', text: 'four', old: 4, new: 4 },
    ]);
    expect(hs[1].lines.map((l) => [l.old, l.new])).toEqual([[9, null], [10, null]]);
    expect(hs[2].lines.at(-1)).toEqual({ kind: 'add', text: 'end', old: null, new: 15, noNewline: true });
  });

  it('finds the unchanged stretches between hunks (a pure deletion included) and fills them with the exact lines', () => {
    const hs = parsePatch(patch);
    const g = gaps(hs);
    // new 1; 5-8 (old 5-8); 9-11 after the deletion (old 11-13); after the last change the file ends.
    expect(g).toEqual([
      { index: 0, from: 1, to: 1, delta: 0 }, { index: 1, from: 5, to: 8, delta: 0 },
      { index: 2, from: 9, to: 11, delta: 2 }, { index: 3, from: 16, to: 15, delta: 1 },
    ]);
    const lines = splitLines(`${after.join('\n')}`);
    expect(textMatches(hs, lines, 'new')).toBe(true);
    expect(textMatches(hs, splitLines(`${before.join('\n')}\n`), 'new')).toBe(false);
    const at = (n: number) => lines[n - 1];
    expect(contextLines(at, g[2], 9, 11).map((l) => [l.old, l.new, l.text])).toEqual([[11, 9, 'eleven'], [12, 10, 'twelve'], [13, 11, 'thirteen']]);
    expect(before[10]).toBe('eleven');
  });

  it('leaves the end open when the last hunk ends with full context, and reads a file without a final newline', () => {
    const hs = parsePatch('@@ -1,4 +1,4 @@\n-a\n+b\n c\n d\n e\n');
    expect(gaps(hs).at(-1)).toEqual({ index: 1, from: 5, to: null, delta: 0 });
    expect(splitLines('x\ny')).toEqual(['x', 'y']);
    expect(splitLines('x\ny\n')).toEqual(['x', 'y']);
    expect(splitLines('')).toEqual([]);
  });

  it('writes the header of a hunk with the context expanded around it, and of hunks merged by an expanded gap', () => {
    const hs = parsePatch(patch);
    expect(blockHeader(hs[0], hs[0], 0, 0)).toBe('@@ -2,3 +2,3 @@ fn');
    expect(blockHeader(hs[1], hs[1], 0, 0)).toBe('@@ -9,2 +8,0 @@'); // a pure deletion: 0 lines after new line 8
    expect(blockHeader(hs[0], hs[0], 1, 2)).toBe('@@ -1,6 +1,6 @@ fn');
    expect(blockHeader(hs[1], hs[1], 4, 3)).toBe('@@ -5,9 +5,7 @@'); // new 5-11 around the deletion, old 5-13
    // The gaps after the first and second hunks fully shown: one block from the first hunk to the last.
    expect(blockHeader(hs[0], hs[2], 1, 0)).toBe('@@ -1,16 +1,15 @@ fn');
  });

  it('pairs removed and added lines in order and finds the words that changed within each pair', () => {
    expect(changedWords('hello, world', 'hello, world!')).toEqual({ old: [], new: [[12, 13]] });
    expect(changedWords('const a = 41;', 'const b = 41;')).toEqual({ old: [[6, 7]], new: [[6, 7]] });
    expect(changedWords('something else entirely', 'zzz qqq')).toBeNull(); // too little in common: two lines
    expect(changedWords('same', 'same')).toBeNull();
    const hs = parsePatch('@@ -1,3 +1,3 @@\n-a b\n-c d\n+a B\n+c d!\n x\n');
    const words = wordChanges(hs[0].lines);
    expect(hs[0].lines.map((l) => words.get(l) ?? null)).toEqual([[[2, 3]], [], [[2, 3]], [[3, 4]], null]);
  });

  it('hides whitespace changes: a removed and an added line equal but for whitespace become one unchanged line with both numbers', () => {
    const hs = parsePatch('@@ -1,3 +1,4 @@\n a\n-  b\n-x\n+    b\n+y\n+c\n');
    expect(hideWhitespace(hs[0].lines).map((l) => [l.kind, l.text, l.old, l.new])).toEqual([
      ['ctx', 'a', 1, 1], ['ctx', '    b', 2, 2], ['del', 'x', 3, null], ['add', 'y', null, 3], ['add', 'c', null, 4],
    ]);
  });
});
