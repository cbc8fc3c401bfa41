import type { Sql } from '../db/connection.js';
import { CHANNEL, type Notice } from '../domain/journal.js';

type Listener = (n: Notice) => void;

/**
 * The instance's one LISTEN connection, as a typed event target: topic -> listeners. Notifications
 * only say "something committed at cursor X"; readers re-read the rows themselves. After the
 * listening connection is lost and comes back, every `onResync` listener runs so readers catch up
 * from the database: a dropped connection loses no event.
 */
export class PgBus {
  private topics = new Map<string, Set<Listener>>();
  private resync = new Set<() => void>();
  private unlisten: (() => Promise<void>) | null = null;
  private connects = 0;

  constructor(private sql: Sql) {}

  async start(): Promise<void> {
    const sub = await this.sql.listen(
      CHANNEL,
      (payload) => {
        let n: Notice;
        try { n = JSON.parse(payload); } catch { return; }
        this.dispatch(topicOf(n), n);
        this.dispatch('*', n);
      },
      () => {
        // Runs on the first LISTEN and again after every reconnect.
        if (this.connects++ > 0) for (const fn of [...this.resync]) fn();
      },
    );
    this.unlisten = sub.unlisten;
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
  }

  private dispatch(topic: string, n: Notice) {
    const set = this.topics.get(topic);
    if (set) for (const fn of [...set]) fn(n);
  }

  on(topic: string, fn: Listener): () => void {
    let set = this.topics.get(topic);
    if (!set) this.topics.set(topic, (set = new Set()));
    set.add(fn);
    return () => {
      set!.delete(fn);
      if (set!.size === 0) this.topics.delete(topic);
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
  switch (n.k) {
    case 'j': return `journal:${n.s}`;
    case 's': return 'settlements';
    case 't': return 'tokens';
    default: return `other:${(n as any).k}`;
  }
}
