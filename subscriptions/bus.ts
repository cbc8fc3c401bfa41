import type { Sql } from '../db/connection.js';
import { CHANNEL, type Notice } from '../domain/journal.js';

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
  private topics = new Map<string, Set<Listener>>();
  private resync = new Set<() => void>();
  private connects = 0;
  private stopped = false;
  private unlisten: (() => Promise<void>) | null = null;
  /** How many times the listening connection came back (tests look at it). */
  resyncs = 0;

  constructor(private sql: Sql) {}

  async start(): Promise<void> {
    this.stopped = false;
    const sub = await this.sql.listen(
      CHANNEL,
      (payload) => {
        if (this.stopped) return;
        let n: Notice;
        try { n = JSON.parse(payload); } catch { return; }
        if (!n || typeof n !== 'object') return;
        this.dispatch(topicOf(n), n);
        this.dispatch('*', n);
      },
      () => {
        // Runs on the first LISTEN and again after every reconnect.
        if (this.connects++ > 0 && !this.stopped) {
          this.resyncs++;
          for (const fn of [...this.resync]) {
            try { fn(); } catch { /* one reader's failure is its own */ }
          }
        }
      },
    );
    this.unlisten = sub.unlisten;
  }

  /**
   * Stops dispatching. (postgres.js hands out a new unlisten handle at each reconnect, so the one
   * from start() may be stale; the LISTEN connection itself ends with the pool.)
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
  }

  private dispatch(topic: string, n: Notice) {
    const set = this.topics.get(topic);
    if (!set) return;
    for (const fn of [...set]) {
      try { fn(n); } catch { /* a listener's failure is its own */ }
    }
  }

  on(topic: string, fn: Listener): () => void {
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
  simulateResync() { for (const fn of [...this.resync]) fn(); }
}

export function topicOf(n: Notice): string {
  const k = (n as { k: string }).k as Notice['k'] | 'q';
  switch (k) {
    case 'j': return `journal:${(n as { s: string }).s}`;
    case 's': return 'settlements';
    case 't': return 'tokens';
    case 'q': return 'settlements:staged'; // a settlement was staged; the sequencer gives it a position
    default: return `other:${k}`;
  }
}
