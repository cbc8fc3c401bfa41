import { randomBytes } from 'node:crypto';

/** The ID prefixes of the OpenCode ecosystem; every public ID is `<prefix>_<26 chars>`. */
export const PREFIX = {
  session: 'ses',
  execution: 'exe',
  message: 'msg',
  part: 'prt',
  job: 'job',
  host: 'hst',
  snapshot: 'snp',
  token: 'tok',
  command: 'cmd',
  admission: 'adm',
  comment: 'cmt',
} as const;
export type Kind = keyof typeof PREFIX;

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
let lastMs = 0;
let counter = 0;

/** The kinds of rows that belong to one session: their IDs carry it (`sessionOf`). */
export const SESSION_KINDS = ['execution', 'message', 'part', 'job', 'snapshot', 'command', 'admission', 'comment'] as const;
export type SessionKind = (typeof SESSION_KINDS)[number];

/** 11 hex digits of milliseconds and 3 of a per-millisecond counter (IDs made in the same millisecond by
 *  one process still sort in creation order), then `n` random base62 characters. */
function stamped(n: number): string {
  const now = Date.now();
  if (now === lastMs) counter++;
  else { lastMs = now; counter = 0; }
  const stamp = now.toString(16).padStart(11, '0') + (counter & 0xfff).toString(16).padStart(3, '0');
  const bytes = randomBytes(n);
  let rand = '';
  for (const b of bytes) rand += ALPHABET[b % 62];
  return stamp + rand;
}

/** The 26 characters after a session ID's prefix. */
const SESSION_BODY = 26;
/** What a session row's ID adds after its session's body: its own stamp and 4 random characters. */
const OWN = 18;

/**
 * A new ID. Sessions, hosts and tokens: `<prefix>_` then 26 ascending characters (stamp, 12 random).
 * A row of a session (execution, message, part, job, snapshot, command, admission, review comment) carries its
 * session: `<prefix>_<the session ID's 26 characters><18 of its own>`. So an ID alone names the
 * session's shard on a cluster distributed by session (docs/citus.md), and IDs of one session still
 * sort in creation order.
 */
export function newId(kind: Exclude<Kind, SessionKind>): string;
export function newId(kind: SessionKind, sessionID: string): string;
export function newId(kind: Kind, sessionID?: string): string {
  if ((SESSION_KINDS as readonly string[]).includes(kind)) {
    if (!sessionID || !isId('session', sessionID)) throw new Error(`newId(${kind}) needs its session's ID, got ${String(sessionID)}`);
    const body = sessionID.slice(4);
    // A session ID of another shape (one made before IDs carried sessions is the same shape) cannot be
    // embedded: such rows get an ID of their own, found through their session_id column instead.
    if (body.length === SESSION_BODY) return `${PREFIX[kind]}_${body}${stamped(OWN - 14)}`;
  }
  return `${PREFIX[kind]}_${stamped(12)}`;
}

/**
 * The session a session row's ID carries, or null for an ID made before IDs carried their session (its
 * row is then found by ID alone). Says nothing about existence.
 */
export function sessionOf(id: string): string | null {
  if (typeof id !== 'string' || id.length !== 4 + SESSION_BODY + OWN || !ID_SHAPE.test(id)) return null;
  if (!SESSION_PREFIXES.has(id.slice(0, 3))) return null;
  return `ses_${id.slice(4, 4 + SESSION_BODY)}`;
}

const ID_SHAPE = /^[a-z]{3}_[0-9A-Za-z]{1,64}$/;
/** Prefix to kind, and the prefixes of session kinds: looked up for every ID a page reads. */
const KIND_OF_PREFIX = new Map<string, Kind>(Object.entries(PREFIX).map(([k, v]) => [v, k as Kind]));
const SESSION_PREFIXES = new Set<string>(SESSION_KINDS.map((k) => PREFIX[k]));

/** True when `id` is shaped like an ID of this kind (the prefix is checked, not existence). */
export function isId(kind: Kind, id: unknown): id is string {
  return typeof id === 'string' && ID_SHAPE.test(id) && id.startsWith(PREFIX[kind] + '_');
}

export function kindOf(id: string): Kind | null {
  if (!ID_SHAPE.test(id)) return null;
  return KIND_OF_PREFIX.get(id.slice(0, 3)) ?? null;
}
