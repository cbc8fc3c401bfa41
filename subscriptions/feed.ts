import type { PgBus } from './bus.js';
import { whenAvailable } from '../db/connection.js';
import type { Logger } from 'pino';
import { Wake } from '../domain/wake.js';
import type { Notice, Topic } from '../domain/notices.js';

const BATCH = 1000;
/** Deliveries handed out per event-loop turn before the feed lets the loop go round (see poke). */
const TURN_DELIVERIES = 1000;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface FeedOptions<T = unknown> {
  /** Called when the last subscriber left (the owner may drop the feed). */
  onIdle?: () => void;
  /**
   * Safety net: while the feed has subscribers it also reads the log this often, whatever the bus
   * says (a listening connection that died silently is only noticed by TCP keepalive). 0 = off.
   */
  pollMs?: number;
  /**
   * The cursor a notice of the feed's topic says the log has reached (every row up to it is visible),
   * when its notices carry one: a wake-up for a cursor the feed has already read past is dropped, and
   * wake-ups during a read ask for one more read only if the read did not reach their cursor.
   */
  noticeCursor?: (n: Notice) => number | undefined;
  /**
   * The rows a notice of the feed's topic carries, when it carries them: every row after cursor
   * `after` up to the last one's, committed (see `offer`).
   */
  noticeRows?: (n: Notice) => { after: number; rows: T[] } | undefined;
}

/**
 * A shared, ordered reader of one log (the settlement log, or one session's journal) for this
 * instance. It keeps a high-water cursor and, whenever the bus says something committed (or the
 * listening connection came back, or the safety poll fires), reads every row past it, in order, and
 * hands each row to every live subscriber. One query per wake-up per instance, however many
 * subscribers; wake-ups that arrive while a read is running are coalesced into one more read.
 *
 * The log's cursor must follow commit order (a row visible at cursor c implies every row below c is
 * visible), which the settlement clock and the per-session journal seq both guarantee; so reading
 * `cursor > hw` never skips a row.
 */
export class Feed<T> {
  private hw = 0;
  private subs = new Set<(row: T) => void>();
  private running = false;
  private again = false;
  /** The highest cursor wake-ups during the running read asked for (see `wake`). */
  private wanted = 0;
  private active = false;
  private pending = 0;
  private offBus: (() => void) | null = null;
  private offResync: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private ready: Promise<void> | null = null;
  /** Rows read from the database by this feed (tests and the benchmark look at it). */
  reads = 0;

  constructor(
    private bus: PgBus,
    private log: Logger,
    private topic: Topic,
    private read: (after: number, limit: number) => Promise<T[]>,
    private cursorOf: (row: T) => number,
    private head: () => Promise<number>,
    private opts: FeedOptions<T> = {},
  ) {}

  get subscribers(): number { return this.subs.size; }
  get cursor(): number { return this.hw; }

  /**
   * Starts following (once): the high-water mark becomes the log's head, then the bus listeners are
   * installed and one read runs, which covers anything that committed between the two.
   */
  private start(): Promise<void> {
    this.ready ??= (async () => {
      const head = await this.head();
      this.hw = Math.max(this.hw, head);
      const { noticeCursor: cursorOf, noticeRows: rowsOf } = this.opts;
      this.offBus = this.bus.on(this.topic, (n) => {
        const given = rowsOf?.(n);
        if (given) this.offer(given.rows, given.after);
        else if (cursorOf) this.wake(cursorOf(n));
        else this.poke();
      });
      this.offResync = this.bus.onResync(() => this.poke());
      const poll = this.opts.pollMs ?? 5_000;
      if (poll > 0) {
        this.timer = setInterval(() => this.poke(), poll);
        this.timer.unref();
      }
      this.active = true;
      this.poke();
    })().catch((e) => {
      this.ready = null;
      throw e;
    });
    return this.ready;
  }

  /** Adds a live subscriber; resolves with the cursor after which it will receive every row. */
  async add(fn: (row: T) => void): Promise<{ from: number; remove: () => void }> {
    this.pending++;
    try {
      await this.start();
    } catch (e) {
      this.pending--;
      this.closeIfIdle();
      throw e;
    }
    this.pending--;
    // Synchronous with the dispatch loop: every row above `from` is handed to fn.
    this.subs.add(fn);
    let removed = false;
    return {
      from: this.hw,
      remove: () => {
        if (removed) return;
        removed = true;
        this.subs.delete(fn);
        this.closeIfIdle();
      },
    };
  }

  private closeIfIdle() {
    if (this.subs.size > 0 || this.pending > 0 || !this.ready) return;
    this.offBus?.();
    this.offResync?.();
    if (this.timer) clearInterval(this.timer);
    this.offBus = this.offResync = null;
    this.timer = null;
    this.active = false;
    this.ready = null;
    this.opts.onIdle?.();
  }

  /**
   * A wake-up saying the log has reached `cursor` (every row up to it visible): nothing to do if the
   * feed has read that far; during a read, one more read only if that read ends below it. Without a
   * cursor, as `poke`.
   */
  wake(cursor?: number): void {
    if (cursor === undefined || !Number.isFinite(cursor)) return this.poke();
    if (!this.active || cursor <= this.hw) return;
    if (this.running) { this.wanted = Math.max(this.wanted, cursor); return; }
    this.poke();
  }

  /**
   * Rows known to be committed, in cursor order, that are every row of the log after cursor `after`
   * up to the last one's (what a sequencer pass positioned, from its own answer or its head notice).
   * When they start where the feed stands and no read is running, they are handed out as a read would
   * hand them out, without the read; otherwise they are a wake-up for the last one's cursor (the read
   * finds them). Rows at or below the feed's cursor are dropped, as from a read.
   */
  offer(rows: T[], after: number): void {
    if (!rows.length) return;
    const last = this.cursorOf(rows[rows.length - 1]);
    if (!this.active || last <= this.hw) return;
    if (this.running || after > this.hw) return this.wake(last);
    this.poke(rows);
  }

  /** Reads (and hands out) what is past the cursor; `given`: rows to hand out first instead of the first read (see `offer`). */
  poke(given?: T[]): void {
    if (!this.active) return;
    if (this.running) { this.again = true; return; }
    this.running = true;
    void (async () => {
      // The read of the rows after the batch being handed out, started while it is handed out (when
      // the batch was full, or a wake-up came meanwhile): the database works while the instance sends.
      let ahead: Promise<T[]> | null = null;
      const readAhead = (after: number) => {
        ahead = this.read(after, BATCH);
        ahead.catch(() => {}); // its failure is taken where it is awaited
      };
      try {
        do {
          this.again = false;
          for (;;) {
            let rows: T[];
            try {
              if (given) {
                rows = given;
                given = undefined;
              } else {
                const next = ahead ?? this.read(this.hw, BATCH);
                ahead = null;
                rows = await next;
                this.reads++;
              }
            } catch (err) {
              this.log.warn({ err, feed: this.topic }, 'feed read failed; retried in 200 ms');
              // Database unavailable: try again shortly (the bus will also resync when it is back).
              this.again = true;
              await new Promise((r) => setTimeout(r, 200).unref());
              break;
            }
            // Rows come in cursor order: the read ahead starts after the last of them.
            const end = rows.length ? this.cursorOf(rows[rows.length - 1]) : this.hw;
            if (rows.length === BATCH) readAhead(end);
            let handed = 0;
            for (let i = 0; i < rows.length; i++) {
              const r = rows[i];
              const c = this.cursorOf(r);
              if (c <= this.hw) continue;
              this.hw = c;
              for (const fn of this.subs) {
                try { fn(r); } catch (err) { this.log.error({ err, feed: this.topic }, 'feed: a subscriber failed'); /* its own failure */ }
              }
              // A bounded number of deliveries per event-loop turn: the subscribers' streams send what
              // they were handed (microtasks) and the sockets are written (delivery.ts uncorks them in
              // setImmediate) before the next rows are handed out, so the first rows of a large read
              // leave at once and the instance's I/O (notices, reads, pings) is not held up meanwhile.
              handed += this.subs.size;
              if (handed >= TURN_DELIVERIES && i + 1 < rows.length) {
                handed = 0;
                await nextTurn();
                // A wake-up meanwhile: its read starts now (after everything of this batch), not after the batch.
                if (this.again && !ahead) { this.again = false; readAhead(end); }
              }
            }
            if (this.wanted > this.hw) { this.again = true; }
            this.wanted = 0;
            if (!ahead && this.again) { this.again = false; readAhead(end); }
            if (!ahead) break;
          }
        } while (this.again && this.active);
      } finally {
        this.running = false;
      }
    })();
  }
}

type Abortable = (onAbort: (err: Error) => void) => () => void;

/**
 * One subscriber's stream: replay from `after` (under its own access rights), then live rows from the
 * shared feed, with no gap and no duplicate (rows at or below the last delivered cursor are dropped).
 * A subscriber that falls too far behind is switched back to reading from the database.
 *
 * Written as a plain async iterator rather than an async generator on purpose: an async generator
 * that is waiting for the next row cannot be `return()`ed until it yields again, so a client that
 * unsubscribes from a quiet stream would stay registered on the feed (and its socket's close handler
 * would hang). Here `return()` takes effect at once, and resolves a pending `next()` with done.
 *
 * Nothing is registered until the first `next()`, so an iterator that is never consumed leaks nothing.
 */
export function resumable<T>(opts: {
  feed: Feed<T>;
  after: number | null;
  cursorOf: (row: T) => number;
  replay: (after: number, limit: number) => Promise<T[]>;
  accept: (row: T) => boolean;
  /** Registers an abort callback (e.g. token revocation); returns its disposer. */
  abortOn?: Abortable;
  maxQueue?: number;
  replayBatch?: number;
}): AsyncIterableIterator<T> & { return(): Promise<IteratorResult<T>>; takeReady(): T | undefined } {
  const MAX_QUEUE = opts.maxQueue ?? 10_000;
  const REPLAY = opts.replayBatch ?? 500;
  let queue: T[] = [];
  let head = 0; // index of the next queued row (avoids O(n) shift)
  let overflow = false;
  let needReplay = opts.after !== null;
  let out: T[] = []; // replayed rows not yet handed out
  let last = 0;
  let started: Promise<void> | null = null;
  /** init() completed: the stream is registered on the feed and `last` is set. */
  let ready = false;
  /** A `pull` is running (the fast path then stays out of its way). */
  let pulling = false;
  let closed = false;
  let failure: Error | null = null;
  const wake = new Wake();
  let remove: (() => void) | null = null;
  let disposeAbort: (() => void) | null = null;
  const DONE: IteratorResult<T> = { done: true, value: undefined };

  /**
   * A `next()` of a live stream with nothing queued, parked until the feed hands it a row: the row is
   * its answer at once, without a pull's async hops and wake-up. Anything else that needs the stream's
   * attention (an overflow, a failure, the end) hands the parked call to `pull`, as a wake-up would.
   */
  let parked: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | null = null;
  const unpark = () => {
    const p = parked;
    if (!p) return;
    parked = null;
    const r = takeReady();
    if (r !== undefined) p.resolve({ done: false, value: r });
    else startPull().then(p.resolve, p.reject);
  };
  const poke = () => { if (parked) unpark(); else wake.poke(); };
  const cleanup = () => {
    closed = true;
    queue = []; out = []; head = 0;
    remove?.(); remove = null;
    disposeAbort?.(); disposeAbort = null;
    wake.close();
    unpark();
  };

  const init = async () => {
    if (opts.abortOn) {
      disposeAbort = opts.abortOn((err) => { failure = err; cleanup(); });
    }
    if (closed) return;
    // While the database is away the stream waits for it (nothing is lost: it resumes from `last`).
    const sub = await whenAvailable(() => opts.feed.add((row) => {
      if (closed || overflow || !opts.accept(row)) return;
      if (queue.length - head >= MAX_QUEUE) { queue = []; head = 0; overflow = true; }
      else queue.push(row);
      poke();
    }), () => closed);
    remove = sub.remove;
    if (closed) { cleanup(); return; }
    last = opts.after ?? sub.from;
  };

  /** The next live row past `last` from the queue (undefined when none is queued). */
  const takeQueued = (): T | undefined => {
    while (head < queue.length) {
      const r = queue[head++];
      // Handed-out rows are not kept: a drained queue starts afresh, a long one is compacted.
      if (head === queue.length) { queue = []; head = 0; }
      else if (head > 1024 && head * 2 > queue.length) { queue = queue.slice(head); head = 0; }
      const c = opts.cursorOf(r);
      if (c <= last) continue;
      last = c;
      return r;
    }
    return undefined;
  };

  /**
   * The next row if one is at hand now and nothing else is pending (no replay, no failure, no pull
   * running): what `next()` would resolve with next, taken without waiting. Undefined otherwise.
   */
  const takeReady = (): T | undefined => {
    if (!ready || pulling || failure || closed || needReplay || overflow) return undefined;
    if (out.length) return out.shift()!;
    return takeQueued();
  };

  // Fast path of a live stream: a row at hand is handed out without the async function's hops, and
  // with none at hand the call is parked for the feed's next row (see `unpark`).
  const next = (): Promise<IteratorResult<T>> => {
    const r = takeReady();
    if (r !== undefined) return Promise.resolve({ done: false, value: r });
    if (ready && !pulling && !parked && !failure && !closed && !needReplay && !overflow && !out.length && head >= queue.length) {
      return new Promise<IteratorResult<T>>((resolve, reject) => { parked = { resolve, reject }; });
    }
    return startPull();
  };
  const startPull = (): Promise<IteratorResult<T>> => {
    pulling = true;
    const p = pull();
    void p.then(() => { pulling = false; }, () => { pulling = false; });
    return p;
  };

  const pull = async (): Promise<IteratorResult<T>> => {
    try {
      await (started ??= init());
    } catch (e) {
      cleanup();
      throw e;
    }
    ready = true;
    for (;;) {
      if (failure) { const f = failure; failure = null; throw f; }
      if (closed) return DONE;
      if (out.length) return { done: false, value: out.shift()! };
      if (needReplay || overflow) {
        if (overflow) { overflow = false; needReplay = true; queue = []; head = 0; }
        const rows = await whenAvailable(() => opts.replay(last, REPLAY), () => closed);
        if (closed) continue;
        for (const r of rows) {
          last = opts.cursorOf(r);
          if (opts.accept(r)) out.push(r);
        }
        if (rows.length < REPLAY) needReplay = false;
        continue;
      }
      const r = takeQueued();
      if (r !== undefined) return { done: false, value: r };
      // A row queued since the checks above has set the wake: this returns at once.
      await wake.wait();
      wake.take();
    }
  };

  const it = {
    next,
    takeReady,
    async return(): Promise<IteratorResult<T>> {
      cleanup();
      return DONE;
    },
    async throw(e?: unknown): Promise<IteratorResult<T>> {
      cleanup();
      throw e;
    },
    [Symbol.asyncIterator]() { return it; },
  };
  return it;
}
