import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import type { Sql } from '../db/connection.js';
import type { PgBus } from './bus.js';

/**
 * Ends what a token has open (subscriptions, WebSocket connections) when the token is revoked.
 *
 * One registry per instance, keyed by token ID: a revocation notice names the token, so only the
 * watchers of that token are concerned, and the revocation is confirmed from the tokens table before
 * anything is ended (NOTIFY can be sent by any database user). Notices lost while the listening
 * connection was down are made up for by checking every watched token when it comes back.
 */
export class Revocations {
  private watchers = new Map<string, Set<() => void>>();

  constructor(private sql: Sql, bus: PgBus, private log: Logger) {
    bus.on('tokens', (n) => { if (n.k === 't') void this.check([n.id]); });
    bus.onResync(() => void this.check([...this.watchers.keys()]));
  }

  /** Calls `onRevoked` once if the token is (or becomes) revoked; returns the disposer. */
  watch(tokenID: string, onRevoked: () => void, opts: { checkNow?: boolean } = {}): () => void {
    if (tokenID === 'system') return () => {};
    let set = this.watchers.get(tokenID);
    if (!set) this.watchers.set(tokenID, (set = new Set()));
    let fired = false;
    const fn = () => { if (!fired) { fired = true; off(); onRevoked(); } };
    set.add(fn);
    const off = () => {
      set!.delete(fn);
      if (set!.size === 0 && this.watchers.get(tokenID) === set) this.watchers.delete(tokenID);
    };
    // Closes the window between authentication and registration.
    if (opts.checkNow) void this.check([tokenID]);
    return off;
  }

  get watched(): number { return this.watchers.size; }

  private async check(ids: string[]): Promise<void> {
    const mine = ids.filter((id) => this.watchers.has(id));
    if (mine.length === 0) return;
    let active: Set<string>;
    try {
      const rows = await this.sql<{ id: string }[]>`SELECT id FROM tokens WHERE id = ANY(${mine}) AND revoked_at IS NULL`;
      active = new Set(rows.map((r) => r.id));
    } catch (err) {
      this.log.warn({ err }, 'revocations: tokens not checked; the resync after reconnect checks again');
      return;
    }
    for (const id of mine) {
      if (active.has(id)) continue;
      const set = this.watchers.get(id);
      if (set) for (const fn of [...set]) fn();
    }
  }
}

export function revokedError(): GraphQLError {
  return new GraphQLError('The token of this subscription was revoked. Make a new one where the gateway runs: gateway token create --role reader (or plugin, host, admin).', { extensions: { code: 'UNAUTHENTICATED', reason: 'REVOKED' } });
}

/** `abortOn` for `resumable`: the stream ends with an UNAUTHENTICATED error when the token is revoked. */
export function revocationOf(revocations: Revocations, tokenID: string) {
  return (onAbort: (err: Error) => void) => revocations.watch(tokenID, () => onAbort(revokedError()), { checkNow: true });
}
