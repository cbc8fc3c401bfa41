import { randomBytes } from 'node:crypto';
import { listenerFor, type Sql } from '../db/connection.js';
import { CHANNEL, noticeSql, parseNotice, topicOf, type Notice, type Topic } from '../domain/notices.js';
import type { Logger } from 'pino';

type Listener = (n: Notice) => void;

/**
 * The instance's one LISTEN connection, as a typed event target: topic -> listeners. Notifications
 * only say "something committed at cursor X"; readers re-read the rows themselves. After the
 * listening connection is lost and comes back, every `onResync` listener runs so readers catch up
 * from the database: a dropped connection loses no event.
 *
 * postgres.js keeps LISTEN on a dedicated connection (no idle timeout); when that connection closes
 * (pg_terminate_backend, network, server restart) it reconnects, issues LISTEN again and calls the
 * `onlisten` callback again: that second and later call is our resync signal. The resync runs only
 * after LISTEN is in place again, so anything committed before it is read by the catch-up and
 * anything after it is notified.
 */
export class PgBus {
  private topics = new Map<Topic, Set<Listener>>();
  private resync = new Set<() => void>();
  private connects = 0;
  private stopped = false;
  private unlisten: (() => Promise<void>) | null = null;
  private generation = 0;
  private pinger: NodeJS.Timeout | null = null;
  private pinging = false;
  private lastPong = Date.now();
  private readonly id = randomBytes(6).toString('hex');
  /** How many times the listening connection came back (tests look at it). */
  resyncs = 0;
  /** How many times the bus had to subscribe anew because its pings stopped coming back. */
  relistens = 0;
  /** LISTEN is in place on the current connection (from its `onlisten` to its loss). */
  private listening = false;
  /**
   * Bumped whenever notifications may have been missed (the listening connection closed, a resync,
   * a relisten, a gap between pongs): what was derived from notifications before is not to be trusted.
   */
  healthEpoch = 0;

  /** The client whose one connection LISTENs; replaced when its pings stop coming back. */
  private listener: Sql | null = null;

  constructor(private sql: Sql, private log: Logger, private pingMs = 2_000) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.listen();
    if (this.pingMs > 0) {
      this.pinger = setInterval(() => void this.ping(), this.pingMs);
      this.pinger.unref();
    }
  }

  /**
   * (Re)subscribes. Each subscription is a generation: callbacks of an older one are ignored, so a
   * re-subscription never dispatches twice.
   */
  private async listen(): Promise<void> {
    const gen = ++this.generation;
    this.listener ??= listenerFor(this.sql);
    const listener = this.listener;
    const sub = await listener.listen(
      CHANNEL,
      (payload) => {
        if (this.stopped || gen !== this.generation) return;
        const n = parseNotice(payload);
        if (!n) return;
        if (n.k === 'ping') {
          if (n.b === this.id) {
            const now = Date.now();
            if (now - this.lastPong > 2 * this.pingMs) this.healthEpoch++; // a gap: not known healthy meanwhile
            this.lastPong = now;
          }
          return;
        }
        this.dispatch(topicOf(n), n);
        this.dispatch('*', n);
      },
      () => {
        if (gen !== this.generation) return;
        this.lastPong = Date.now();
        this.listening = true;
        // Runs on the first LISTEN and again after every reconnect.
        if (this.connects++ > 0 && !this.stopped) this.fireResync();
      },
    );
    this.unlisten = sub.unlisten;
    this.watchClose(listener);
  }

  /**
   * Notices at once that the listening connection closed (postgres.js re-subscribes on its own and
   * calls `onlisten` again, but has no hook for the loss itself). Uses postgres.js internals (the
   * dedicated client behind `listen`); if they change, the pings still notice within two periods.
   */
  private watchClose(listener: Sql) {
    const inner = (listener as unknown as { listen?: { sql?: { options?: { onclose?: (...a: unknown[]) => unknown } } } }).listen?.sql;
    const o = inner?.options;
    if (!o || (o as { gwWatched?: boolean }).gwWatched) return;
    (o as { gwWatched?: boolean }).gwWatched = true;
    const original = o.onclose;
    o.onclose = (...a: unknown[]) => {
      if (this.listener === listener) this.lost();
      return original?.(...a);
    };
  }

  /** Notifications may be missed from now until LISTEN is in place again. */
  private lost() {
    if (this.listening && !this.stopped) this.log.warn('bus: the listening connection was lost');
    this.listening = false;
    this.healthEpoch++;
  }

  /**
   * Known to hear every notification: LISTEN in place and the last self-ping came back within two
   * periods. Without pings (pingMs 0) the bus is never known healthy.
   */
  get healthy(): boolean {
    return !this.stopped && this.listening && this.pingMs > 0 && Date.now() - this.lastPong <= 2 * this.pingMs;
  }

  private fireResync() {
    this.resyncs++;
    this.log.info({ resyncs: this.resyncs }, 'bus: listening again; readers catch up from the database');
    this.healthEpoch++;
    for (const fn of [...this.resync]) {
      try { fn(); } catch (err) { this.log.error({ err }, 'bus: a resync reader failed'); /* its own failure: the others run */ }
    }
  }

  /**
   * Liveness of the listening connection: the bus notifies itself every `pingMs`. postgres.js
   * re-subscribes after its listening connection drops, but a re-subscription that fails (the new
   * connection refused or killed at once) is dropped silently and the instance would never hear of
   * a commit again. When no ping of ours came back for three periods, subscribe anew and let every
   * reader catch up from the database.
   */
  private async ping(): Promise<void> {
    if (this.stopped || this.pinging) return;
    this.pinging = true;
    try {
      if (Date.now() - this.lastPong > 3 * this.pingMs) {
        // A fresh client: postgres.js keeps at most one LISTEN connection per client, and a client
        // whose re-subscription failed never tries again.
        this.relistens++;
        this.log.warn({ relistens: this.relistens }, 'bus: no ping came back for three periods; listening anew');
        this.lost();
        this.lastPong = Date.now();
        const old = this.listener;
        this.listener = null;
        old?.end({ timeout: 0 }).catch((err) => this.log.debug({ err }, 'bus: the old listening client did not end cleanly'));
        await withTimeout(this.listen(), 3 * this.pingMs);
        this.fireResync();
      }
      await this.sql`SELECT ${noticeSql(this.sql, { k: 'ping', b: this.id })}`;
    } catch (err) {
      this.log.warn({ err }, 'bus: ping failed (the database is away?); the next ping tries again');
    } finally {
      this.pinging = false;
    }
  }

  /**
   * Stops dispatching. (postgres.js hands out a new unlisten handle at each reconnect, so the one
   * from start() may be stale; the LISTEN connection itself ends with the pool.)
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.lost();
    if (this.pinger) clearInterval(this.pinger);
    this.pinger = null;
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
    const l = this.listener;
    this.listener = null;
    await l?.end({ timeout: 1 }).catch(() => {});
  }

  private dispatch(topic: Topic, n: Notice) {
    const set = this.topics.get(topic);
    if (!set) return;
    for (const fn of [...set]) {
      try { fn(n); } catch (err) { this.log.error({ err, topic }, 'bus: a listener failed'); /* its own failure: the others run */ }
    }
  }

  on(topic: Topic, fn: Listener): () => void {
    let set = this.topics.get(topic);
    if (!set) this.topics.set(topic, (set = new Set()));
    set.add(fn);
    return () => {
      set!.delete(fn);
      if (set!.size === 0 && this.topics.get(topic) === set) this.topics.delete(topic);
    };
  }

  onResync(fn: () => void): () => void {
    this.resync.add(fn);
    return () => this.resync.delete(fn);
  }

  /** Test hook: pretend the connection came back. */
  simulateResync() { this.healthEpoch++; for (const fn of [...this.resync]) fn(); }
}

export { topicOf };

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timed out')), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}
