/**
 * The statements of a PostgreSQL script (a migration file), each as written, without its ending `;`. A `;` ends a
 * statement only outside comments (`--`, nested `/* *\/`), quoted strings ('…' with '' inside, E'…' with
 * backslash escapes too), quoted identifiers ("…"), dollar-quoted bodies ($$…$$, $tag$…$tag$) and parentheses,
 * as psql splits a script. Pieces that hold only comments and blanks are left out.
 *
 * Needed where a script cannot be sent whole: on a Citus coordinator, DDL on a distributed table is sent to the
 * workers as its query string, and the workers refuse one of several statements (db/migrate.ts). A SQL-standard
 * function body (BEGIN ATOMIC … END, whose statements end in `;`) is refused with an error rather than cut.
 */
export function splitStatements(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let depth = 0; // parentheses
  let code = false; // the current piece has something besides comments and blanks
  let i = 0;
  const n = text.length;
  const ident = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
  const flush = (end: number) => {
    const piece = text.slice(start, end).trim();
    if (code) {
      if (/\bBEGIN\s+ATOMIC\b/i.test(stripQuoted(piece))) throw new Error(`a BEGIN ATOMIC function body cannot be split into statements: ${piece.slice(0, 80)}`);
      out.push(piece);
    }
    code = false;
  };
  while (i < n) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '-' && next === '-') {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? n : eol + 1;
    } else if (c === '/' && next === '*') {
      let level = 1;
      i += 2;
      while (i < n && level > 0) {
        if (text[i] === '/' && text[i + 1] === '*') { level++; i += 2; } else if (text[i] === '*' && text[i + 1] === '/') { level--; i += 2; } else i++;
      }
      if (level > 0) throw new Error('an unterminated /* comment');
    } else if (c === "'") {
      const escapes = (text[i - 1] === 'E' || text[i - 1] === 'e') && !ident(text[i - 2]);
      i = closing(text, i + 1, "'", escapes);
      code = true;
    } else if (c === '"') {
      i = closing(text, i + 1, '"', false);
      code = true;
    } else if (c === '$' && !ident(text[i - 1])) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(text.slice(i, i + 64));
      if (tag) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        if (end < 0) throw new Error(`an unterminated ${tag[0]} quote`);
        i = end + tag[0].length;
      } else i++; // $1: a parameter
      code = true;
    } else if (c === ';' && depth === 0) {
      flush(i);
      start = ++i;
    } else {
      if (c === '(') depth++;
      else if (c === ')') depth = Math.max(0, depth - 1);
      if (!/\s/.test(c)) code = true;
      i++;
    }
  }
  flush(n);
  return out;
}

/** The index after the quote `q` that closes a quoted string or identifier begun before `i` (a doubled quote is one). */
function closing(text: string, i: number, q: string, backslashEscapes: boolean): number {
  while (i < text.length) {
    const c = text[i];
    if (backslashEscapes && c === '\\') i += 2;
    else if (c === q && text[i + 1] === q) i += 2;
    else if (c === q) return i + 1;
    else i++;
  }
  throw new Error(`an unterminated ${q} quote`);
}

/** The text with its quoted strings, identifiers and dollar-quoted bodies emptied, for a keyword search. */
function stripQuoted(piece: string): string {
  return piece.replace(/\$([A-Za-z_]\w*)?\$[\s\S]*?\$\1\$|'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*/g, ' ');
}
