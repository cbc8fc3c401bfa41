import type { Sql } from '../db/connection.js';
import type { Actor } from '../domain/access.js';
import { findActiveToken, tokenKey } from '../domain/tokens.js';
import type { PgBus } from '../subscriptions/bus.js';

export interface TokenCacheOptions {
  /** Most tokens kept (least recently used dropped first). Default 10,000. */
  maxEntries?: number;
  /** How long an entry is used before the database is asked again (ms). Default 60,000. */
  ttlMs?: number;
}

/**
 * The instance's authenticated bearer tokens: SHA-256 of the secret -> Actor, so a request with a known
 * token needs no database round trip. Bounded (LRU, `maxEntries`) and every entry expires after `ttlMs`.
 *
 * Guarantee: a revoked token is refused by the instance that revoked it at once, and by every other
 * instance as soon as the notification arrives (milliseconds); an instance whose LISTEN connection is
 * unhealthy does not use the cache.
 * - Every change of a token's revocation, role, scope or secret, and its deletion, sends `{k:'t', id}` on the
 *   gateway's channel (a trigger, migration 010: also for a manual UPDATE; delivered at commit); every
 *   instance drops that token's entry when it arrives. The revoking instance drops it itself right after
 *   the commit (`forget`, from the mutation), without waiting for its own notification.
 * - The cache is used only while the bus is known to hear every notification (`PgBus.healthy`: LISTEN in
 *   place, its self-pings coming back). Whenever notifications may have been missed (the listening
 *   connection closed, a resync or relisten, a gap in the pings: `PgBus.healthEpoch` moves) every entry is
 *   dropped, and nothing is cached or served from the cache until the bus is healthy again. So a lost
 *   notification keeps a revoked token usable only until the loss is noticed: at once when the connection
 *   closes, at most two ping periods when it silently stops delivering.
 * - Only successes are cached, so a token created a moment ago works at once, everywhere.
 * - A database read that began before an invalidation (a revocation notice, `forget`, a clear) is not
 *   stored when it ends: it may have read the token before the revocation committed.
 * - The TTL bounds anything that could still slip past the notices.
 */
export class TokenCache {
  private entries = new Map<string, { actor: Actor; expires: number }>();
  private keyOf = new Map<string, string>(); // tokenID -> key
  /** Bumped by every invalidation; a fill started under an older value is not stored. */
  private epoch = 0;
  /** The bus's healthEpoch the entries were filled under. */
  private busEpoch = -1;
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  /** The clock entries expire by (a test moves it past the TTL instead of waiting). */
  now: () => number = Date.now;
  /** Counters (tests and the benchmark read them). */
  readonly stats = { hits: 0, misses: 0, clears: 0 };

  constructor(private sql: Sql, private bus: PgBus, opts: TokenCacheOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.ttlMs = opts.ttlMs ?? 60_000;
    // Any notice naming a token drops it (unconfirmed: dropping is always safe).
    bus.on('tokens', (n) => { if (n.k === 't') this.forget(String(n.id)); });
    bus.onResync(() => this.clear());
  }

  get size(): number { return this.entries.size; }

  /** The active token's actor, or null (unknown, revoked, malformed). */
  async authenticate(secret: string | null | undefined): Promise<Actor | null> {
    const known = this.cached(secret);
    return known !== undefined ? known : this.lookUp(secret!);
  }

  /**
   * What `authenticate` answers when it can answer without the database: the actor of a cached token,
   * null for no or a malformed secret; undefined when the database must be asked (`authenticate`).
   * Requests with a known token are authenticated synchronously with it.
   */
  cached(secret: string | null | undefined): Actor | null | undefined {
    if (!secret || secret.length > 200) return null;
    if (!this.usable()) return undefined;
    const key = tokenKey(secret);
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= this.now()) {
      this.drop(key);
      return undefined;
    }
    this.entries.delete(key); // most recently used last
    this.entries.set(key, e);
    this.stats.hits++;
    return e.actor;
  }

  private async lookUp(secret: string): Promise<Actor | null> {
    const key = tokenKey(secret);
    this.stats.misses++;
    const cacheable = this.usable();
    const epoch = this.epoch;
    const actor = await findActiveToken(this.sql, key);
    if (actor && cacheable && this.usable() && epoch === this.epoch) this.store(key, Object.freeze(actor));
    return actor;
  }

  /** Drops the token's entry (revoked); reads in flight are not stored. */
  forget(tokenID: string): void {
    this.epoch++;
    const key = this.keyOf.get(tokenID);
    if (key !== undefined) this.drop(key);
  }

  /** Drops every entry; reads in flight are not stored. */
  clear(): void {
    this.epoch++;
    this.stats.clears++;
    this.entries.clear();
    this.keyOf.clear();
  }

  /** The bus is known healthy and has been since the entries were filled (else they are dropped). */
  private usable(): boolean {
    if (!this.bus.healthy) {
      if (this.entries.size > 0) this.clear();
      return false;
    }
    if (this.bus.healthEpoch !== this.busEpoch) {
      this.clear();
      this.busEpoch = this.bus.healthEpoch;
    }
    return true;
  }

  private store(key: string, actor: Actor) {
    const old = this.keyOf.get(actor.tokenID);
    if (old !== undefined && old !== key) this.entries.delete(old);
    this.entries.delete(key);
    this.entries.set(key, { actor, expires: this.now() + this.ttlMs });
    this.keyOf.set(actor.tokenID, key);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.drop(oldest);
    }
  }

  private drop(key: string) {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    if (this.keyOf.get(e.actor.tokenID) === key) this.keyOf.delete(e.actor.tokenID);
  }
}
