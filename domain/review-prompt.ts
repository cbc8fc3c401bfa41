/**
 * The prompt a set of review comments becomes when it is sent to the session's agent (sendReviewComments):
 * the one place its format is defined (documented in docs/api.md, "Review comments"). Stable: agents and
 * their hosts may rely on it.
 *
 *   Review comments on your changes (N):
 *
 *   1. path/to/file.ts, line 12 (new):
 *      > the quoted line(s), each prefixed with "> "
 *      The comment body.
 *
 *   2. path/to/other.ts (whole file):
 *      The comment body.
 *
 *   3. (whole changeset):
 *      The comment body.
 *
 * A line on the OLD side reads `line 12 (old)`; a multi-line anchor `lines 10–12 (new)` (an en dash). Every
 * line below an item's head is indented by three spaces (the body's own lines too). The comments come in the
 * order given; the text ends with one newline.
 */
export interface PromptComment {
  path: string | null;
  side: 'OLD' | 'NEW' | null;
  line: number | null;
  startLine: number | null;
  quote: string | null;
  body: string;
}

const INDENT = '   ';

/** Where a comment is anchored, as its item's head says it (without the number and the colon). */
export function anchorLabel(c: Pick<PromptComment, 'path' | 'side' | 'line' | 'startLine'>): string {
  if (c.path === null) return '(whole changeset)';
  if (c.line === null) return `${c.path} (whole file)`;
  const side = c.side === 'OLD' ? 'old' : 'new';
  const lines = c.startLine !== null && c.startLine !== c.line ? `lines ${c.startLine}\u2013${c.line}` : `line ${c.line}`;
  return `${c.path}, ${lines} (${side})`;
}

/** Splits text into lines (a final newline ends the last line; it adds no empty one). */
function linesOf(text: string): string[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function formatReviewPrompt(comments: readonly PromptComment[]): string {
  const items = comments.map((c, i) => {
    const out = [`${i + 1}. ${anchorLabel(c)}:`];
    if (c.quote !== null && c.line !== null) for (const l of linesOf(c.quote)) out.push(`${INDENT}> ${l}`);
    for (const l of linesOf(c.body)) out.push(l === '' ? '' : `${INDENT}${l}`);
    return out.join('\n');
  });
  return `Review comments on your changes (${comments.length}):\n\n${items.join('\n\n')}\n`;
}
