import type { PgBus } from './bus.js';

/**
 * A shared, ordered reader of one log (the settlement log, or one session's journal) for this
 * instance. It keeps a high-water cursor and, whenever the bus says something committed (or the
 * listening connection came back), reads every row past it, in order, and hands each row to every
 * live subscriber. One query per wake-up per instance, however many subscribers.
 */
export class Feed<T> {
  private hw = 0;
  private subs = new Set<(row: T) => void>();
  private running: Promise<void> | null = null;
  private again = false;
  private offBus: (() => void) | null = null;
  private offResync: (() => void) | null = null;
  private ready: Promise<void> | null = null;

  constructor(
    private bus: PgBus,
    private topic: string,
    private read: (after: number, limit: number) => Promise<T[]>,
    private cursorOf: (row: T) => number,
    private head: () => Promise<number>,
    private onIdle: () => void = () => {},
  ) {}

  /** Starts following (once): the high-water mark is the log's head at that moment. */
  private start(): Promise<void> {
    this.ready ??= (async () => {
      this.offBus = this.bus.on(this.topic, () => this.poke());
      this.offResync = this.bus.onResync(() => this.poke());
      this.hw = await this.head();
      this.poke();
    })();
    return this.ready;
  }

  /** Adds a live subscriber; resolves with the cursor from which it will receive every row. */
  async add(fn: (row: T) => void): Promise<{ from: number; remove: () => void }> {
    await this.start();
    this.subs.add(fn);
    return {
      from: this.hw,
      remove: () => {
        this.subs.delete(fn);
        if (this.subs.size === 0) this.close();
      },
    };
  }

  private close() {
    this.offBus?.();
    this.offResync?.();
    this.offBus = this.offResync = null;
    this.ready = null;
    this.onIdle();
  }

  poke(): void {
    if (this.running) { this.again = true; return; }
    this.running = (async () => {
      do {
        this.again = false;
        for (;;) {
          let rows: T[];
          try { rows = await this.read(this.hw, 1000); } catch { this.again = true; await new Promise((r) => setTimeout(r, 200)); break; }
          for (const r of rows) {
            this.hw = this.cursorOf(r);
            for (const fn of [...this.subs]) fn(r);
          }
          if (rows.length < 1000) break;
        }
      } while (this.again && this.ready);
      this.running = null;
    })();
  }
}

/**
 * One subscriber's stream: replay from `after` (under its own access rights), then live rows from the
 * shared feed, with no gap and no duplicate (rows at or below the last delivered cursor are dropped).
 * A subscriber that falls too far behind is switched back to reading from the database.
 */
export async function* resumable<T>(opts: {
  feed: Feed<T>;
  after: number | null;
  cursorOf: (row: T) => number;
  replay: (after: number, limit: number) => Promise<T[]>;
  accept: (row: T) => boolean;
  signal?: { aborted: boolean; onAbort(fn: () => void): void; dispose?(): void };
}): AsyncGenerator<T> {
  const MAX_QUEUE = 10_000;
  let queue: T[] = [];
  let overflow = false;
  let wake: (() => void) | null = null;
  const { from, remove } = await opts.feed.add((row) => {
    if (queue.length >= MAX_QUEUE) { queue = []; overflow = true; }
    else queue.push(row);
    wake?.();
  });
  opts.signal?.onAbort(() => wake?.());
  let last = opts.after ?? from;
  const replayFrom = async function* () {
    for (;;) {
      const rows = await opts.replay(last, 500);
      for (const r of rows) {
        last = opts.cursorOf(r);
        if (opts.accept(r)) yield r;
      }
      if (rows.length < 500) return;
    }
  };
  try {
    if (opts.after !== null) yield* replayFrom();
    for (;;) {
      if (opts.signal?.aborted) return;
      if (overflow) {
        overflow = false;
        queue = [];
        yield* replayFrom();
        continue;
      }
      const r = queue.shift();
      if (r === undefined) {
        await new Promise<void>((res) => (wake = res));
        wake = null;
        continue;
      }
      const c = opts.cursorOf(r);
      if (c <= last) continue;
      last = c;
      if (opts.accept(r)) yield r;
    }
  } finally {
    remove();
    opts.signal?.dispose?.();
  }
}
