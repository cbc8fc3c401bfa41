import { GraphQLError } from 'graphql';

/**
 * The one cursor codec of the API: every `cursor` a client is given (connection edges, the settlement
 * log, a session's journal) is made and read here.
 *
 * A cursor is opaque to clients: base64url of `v1:<kind>:<key>`, where the kind names the list it
 * belongs to and the key is that list's ordering key (a number for positions and sequences, an ID
 * otherwise). The version lets the layout change later while cursors already handed out keep
 * working; cursors issued before versioning (`<kind>:<key>`, still held by clients that resume from
 * them) are read as version 1. A cursor of another list, or one that is not a cursor at all, is a
 * `BadCursorError` (a GraphQL error with code BAD_USER_INPUT), never an empty page.
 */

const KINDS = {
  session: { key: 'text', message: 'after is not a cursor of this list.' },
  execution: { key: 'int', message: 'after is not a cursor of this list.' },
  message: { key: 'int', message: 'after is not a cursor of this list.' },
  job: { key: 'text', message: 'after is not a cursor of this list.' },
  token: { key: 'text', message: 'after is not a cursor of this list.' },
  comment: { key: 'text', message: 'after is not a cursor of this list.' },
  settlement: { key: 'int', message: 'after is not a settlement cursor.' },
  journal: { key: 'int', message: 'after is not a session event cursor.' },
} as const;

export type CursorKind = keyof typeof KINDS;
/** The ordering key of a kind's cursor: a number (position, sequence) or a text ID. */
export type CursorKey<K extends CursorKind> = (typeof KINDS)[K]['key'] extends 'int' ? number : string;

export const CURSOR_VERSION = 1;
const PREFIX = `v${CURSOR_VERSION}:`;
const INT = /^\d{1,15}$/;

/** A cursor that is not one of this list's: bad input (BAD_USER_INPUT), with the list's kind. */
export class BadCursorError extends GraphQLError {
  constructor(readonly kind: CursorKind) {
    super(KINDS[kind].message, { extensions: { code: 'BAD_USER_INPUT' } });
    this.name = 'BadCursorError';
  }
}

export function encodeCursor<K extends CursorKind>(kind: K, key: CursorKey<K>): string {
  return Buffer.from(`${PREFIX}${kind}:${key}`).toString('base64url');
}

/** The key of a cursor of `kind`; null when there is no cursor; BadCursorError when it is not one. */
export function decodeCursor<K extends CursorKind>(kind: K, cursor: string | null | undefined): CursorKey<K> | null {
  if (cursor == null) return null;
  const key = keyOf(kind, cursor);
  if (key === null) throw new BadCursorError(kind);
  return key;
}

function keyOf<K extends CursorKind>(kind: K, cursor: string): CursorKey<K> | null {
  // base64 characters only: Buffer.from would silently skip others and read a different cursor.
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 1024 || !/^[A-Za-z0-9_+/-]+={0,2}$/.test(cursor)) return null;
  let text = Buffer.from(cursor, 'base64url').toString();
  if (text.startsWith(PREFIX)) text = text.slice(PREFIX.length);
  else if (/^v\d+:/.test(text)) return null; // a version this gateway does not know
  const i = text.indexOf(':');
  if (i < 0 || text.slice(0, i) !== kind) return null;
  const value = text.slice(i + 1);
  if (value === '') return null;
  if (KINDS[kind].key === 'int') return INT.test(value) ? (Number(value) as CursorKey<K>) : null;
  return value as CursorKey<K>;
}
