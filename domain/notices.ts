import type postgres from 'postgres';
import type { Db } from '../db/connection.js';

/**
 * The notice catalogue: every notification the gateway sends on its one channel, its kind, its fields
 * and the bus topic it is dispatched on. Notices carry IDs and cursors, never content; a listener
 * re-reads the rows (but for the settlement head notice, which carries the pass's rows when they fit:
 * anyone who may NOTIFY on the channel may write the log too). They are sent inside the transaction
 * that made the change, so Postgres delivers them only after its commit.
 *
 * Producers: `notify` / `noticeSql` below for everything sent from TypeScript, and three PL/pgSQL
 * functions of the migrations (`gateway_token_notice`, kind `t`; `sequence_settlements_locked`, kind `s`;
 * `settlement_positioned_at_commit`, kind `q`), which test/notices.test.ts checks against this catalogue.
 */
export const CHANNEL = 'gateway_events';

/** A settlement row as the sequencer writes it into JSON (keys as its columns; `settled_at` as text). */
export interface PositionedJson { id: number; pos: number; session_id: string; execution_id: string; status: string; directory: string; settled_at: string }

export type Notice =
  /** Journal event of session `s` at seq `q` (domain/events/commit.ts). */
  | { k: 'j'; s: string; q: number }
  /**
   * The settlement log's head moved to position `p` (the sequencer, migrations 005 and 055), with the
   * rows of the pass that moved it (`r`: positions after the previous head up to `p`), or null when
   * they did not fit in a notification.
   */
  | { k: 's'; p: number; r: PositionedJson[] | null }
  /** A settlement was staged and its commit could not position it: the sequencer does (domain/settlements.ts). */
  | { k: 'q' }
  /** Token `id` was revoked or changed (trigger of migration 010). */
  | { k: 't'; id: string }
  /** Host `h` has a new command (domain/commands.ts, domain/host-requests.ts). */
  | { k: 'c'; h: string }
  /** Host request `id` was answered (domain/host-requests.ts). */
  | { k: 'r'; id: string }
  /**
   * Host `h` asked to renew its lease and the database could not take the renewal (domain/hosts.ts): the host is
   * alive, and every instance's lease sweep counts its lease from then (server/gateway.ts).
   */
  | { k: 'h'; h: string }
  /** The bus's own liveness ping, sent by bus `b` to itself (subscriptions/bus.ts). */
  | { k: 'ping'; b: string };

export type NoticeKind = Notice['k'];
export type NoticeOf<K extends NoticeKind> = Extract<Notice, { k: K }>;
type FieldsOf<K extends NoticeKind> = Exclude<keyof NoticeOf<K>, 'k'>;

/** The fields of each kind, in the order producers write them. */
export const NOTICE_FIELDS: { readonly [K in NoticeKind]: readonly FieldsOf<K>[] } = {
  j: ['s', 'q'], s: ['p', 'r'], q: [], t: ['id'], c: ['h'], r: ['id'], h: ['h'], ping: ['b'],
};

/** Bus topics: what a listener subscribes to (`*`: every notice). */
export type Topic =
  | `journal:${string}` | 'settlements' | 'settlements:staged' | 'tokens' | 'commands' | 'replies' | 'renewals' | 'ping' | '*';

export const COMMAND_TOPIC = 'commands' satisfies Topic;
export const REPLY_TOPIC = 'replies' satisfies Topic;

export function topicOf(n: Notice): Topic {
  switch (n.k) {
    case 'j': return `journal:${n.s}`;
    case 's': return 'settlements';
    case 'q': return 'settlements:staged';
    case 't': return 'tokens';
    case 'c': return COMMAND_TOPIC;
    case 'r': return REPLY_TOPIC;
    case 'h': return 'renewals';
    case 'ping': return 'ping';
  }
}

/** A notice received from the channel, checked against the catalogue (anything else is dropped). */
export function parseNotice(payload: string): Notice | null {
  let n: unknown;
  try { n = JSON.parse(payload); } catch { return null; }
  if (!n || typeof n !== 'object') return null;
  const k = (n as { k?: unknown }).k;
  if (typeof k !== 'string' || !(k in NOTICE_FIELDS)) return null;
  for (const f of NOTICE_FIELDS[k as NoticeKind]) if (!(f in n)) return null;
  return n as Notice;
}

/** A notice whose field values may be SQL expressions of the statement it is part of (e.g. `seq`). */
export type NoticeExpr<N extends Notice = Notice> = N extends Notice ? { [F in keyof N]: F extends 'k' ? N[F] : N[F] | postgres.Fragment } : never;

function isFragment(v: unknown): v is postgres.Fragment {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** The `pg_notify(…)` call of a notice, as an SQL expression to put into a statement. */
export function noticeSql(db: Db, n: NoticeExpr): postgres.Fragment {
  const k = n.k as NoticeKind;
  let args = db`${k}::text`;
  for (const f of NOTICE_FIELDS[k] as readonly string[]) {
    const v = (n as Record<string, unknown>)[f];
    const value = isFragment(v) ? v : typeof v === 'number' ? db`${v}::bigint` : db`${String(v)}::text`;
    args = db`${args}, ${f}::text, ${value}`;
  }
  return db`pg_notify(${CHANNEL}, json_build_object('k', ${args})::text)`;
}

/** Sends a notice (delivered at the commit of `db`'s transaction; at once outside one). One round trip. */
export async function notify(db: Db, n: Notice): Promise<void> {
  await db`SELECT ${noticeSql(db, n)}`;
}
