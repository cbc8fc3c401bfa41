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
} as const;
export type Kind = keyof typeof PREFIX;

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
let lastMs = 0;
let counter = 0;

/**
 * Ascending IDs: 11 hex digits of milliseconds and 3 of a per-millisecond counter (so IDs made in the
 * same millisecond by one process still sort in creation order), then 12 random base62 characters.
 */
export function newId(kind: Kind): string {
  const now = Date.now();
  if (now === lastMs) counter++;
  else { lastMs = now; counter = 0; }
  const stamp = now.toString(16).padStart(11, '0') + (counter & 0xfff).toString(16).padStart(3, '0');
  const bytes = randomBytes(12);
  let rand = '';
  for (const b of bytes) rand += ALPHABET[b % 62];
  return `${PREFIX[kind]}_${stamp}${rand}`;
}

const ID_SHAPE = /^[a-z]{3}_[0-9A-Za-z]{1,64}$/;

/** True when `id` is shaped like an ID of this kind (the prefix is checked, not existence). */
export function isId(kind: Kind, id: unknown): id is string {
  return typeof id === 'string' && ID_SHAPE.test(id) && id.startsWith(PREFIX[kind] + '_');
}

export function kindOf(id: string): Kind | null {
  if (!ID_SHAPE.test(id)) return null;
  const p = id.slice(0, 3);
  for (const [k, v] of Object.entries(PREFIX)) if (v === p) return k as Kind;
  return null;
}
