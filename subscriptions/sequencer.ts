import type { Sql } from '../db/connection.js';
import { sequenceSettlements, type SettlementRow } from '../domain/settlements.js';
import type { PgBus } from './bus.js';
import type { Logger } from 'pino';

/**
 * Runs sequencer passes of the settlement log (see domain/settlements.ts) for this instance: on
 * every "staged" notice (a settlement whose own commit could not position it), after the listening
 * connection came back, at start and on a slow safety timer. Wake-ups during a pass are coalesced into
 * one more pass. Every instance runs one; passes of different instances and of settling commits are
 * serialised by the clock row. A busy clock is tried again as soon as the pass holding it has committed
 * (its head notice; the pass may have taken its snapshot before our row committed), or 20 ms later when
 * no head notice comes (a pass that positioned nothing sends none). A pass that finds nothing to position
 * takes no lock and writes nothing (migration 052), so the passes of the instances that were woken for a
 * settlement another instance has already positioned cost no commit and hold nothing up.
 */
export class Sequencer {
  private running = false;
  private again = false;
  private active = false;
  private offs: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  /** The last pass found the clock busy: the next head notice (the holder committed) retries at once. */
  private busy = false;
  /** A head notice came while a pass was running: if that pass finds the clock busy, it retries at once. */
  private headMoved = false;
  /** The running loop of passes (poke), while one runs. */
  private loop: Promise<void> | null = null;
  /** Callers of caughtUp waiting for a complete pass that starts after their call. */
  private waiting: { resolve: () => void; reject: (e: Error) => void }[] = [];
  passes = 0;

  /**
   * `onPositioned(rows, after)`: called when a pass of this instance has positioned (and committed)
   * `rows`, every settlement after position `after` up to the last one's: this instance's feed hands
   * them out at once, without waiting for the head notice to come back through the listening
   * connection (one more process hop, late when the machine is busy) and without reading them again.
   */
  constructor(private sql: Sql, private bus: PgBus, private log: Logger, private intervalMs = 1_000, private onPositioned?: (rows: SettlementRow[], after: number) => void) {}

  start(): void {
    this.active = true;
    this.offs.push(this.bus.on('settlements:staged', () => this.poke()));
    this.offs.push(this.bus.on('settlements', () => this.headMovedOn()));
    this.offs.push(this.bus.onResync(() => this.poke()));
    if (this.intervalMs > 0) {
      this.timer = setInterval(() => this.poke(), this.intervalMs);
      this.timer.unref();
    }
    this.poke();
  }

  /**
   * Resolves once a pass of this sequencer that started after the call has positioned every staged
   * settlement it could see: so every settlement committed before the call has its position (read your
   * writes for the `settlements` query, which itself writes nothing). Waits for a pass of another
   * instance holding the clock rather than skipping. Rejects if the sequencer stops first.
   */
  caughtUp(): Promise<void> {
    if (!this.active) return Promise.reject(new Error('the settlement sequencer is not running'));
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.poke();
    });
  }

  /** Stops running passes; resolves once the pass in flight, if any, has ended (then none runs until `start`). */
  stop(): Promise<void> {
    this.active = false;
    for (const w of this.waiting.splice(0)) w.reject(new Error('the settlement sequencer stopped'));
    for (const off of this.offs.splice(0)) off();
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    this.timer = this.retry = null;
    return this.loop ?? Promise.resolve();
  }

  /** The log's head moved (a pass committed, here or elsewhere): a pass told "busy" need not wait longer. */
  private headMovedOn(): void {
    if (this.running) { this.headMoved = true; return; }
    if (!this.busy) return;
    if (this.retry) { clearTimeout(this.retry); this.retry = null; }
    this.poke();
  }

  poke(): void {
    if (!this.active) return;
    if (this.running) { this.again = true; return; }
    this.running = true;
    const loop = (async () => {
      try {
        do {
          this.again = false;
          this.headMoved = false;
          // Waiters registered before this pass starts are served by it, once it is complete.
          const batch = this.waiting.splice(0);
          try {
            const r = await sequenceSettlements(this.sql, { wait: batch.length > 0 });
            this.passes++;
            this.busy = r.busy;
            if (r.count) {
              this.log.debug({ positions: r.count, top: r.top }, 'sequencer: settlements positioned');
              try { this.onPositioned?.(r.rows, r.top - r.count); } catch (err) { this.log.error({ err }, 'sequencer: a positioned listener failed'); }
            }
            if (r.more || r.busy) this.waiting.unshift(...batch);
            else for (const w of batch) w.resolve();
            if (r.more || (r.busy && this.headMoved)) this.again = true;
            else if (r.busy && !this.retry) {
              this.retry = setTimeout(() => { this.retry = null; this.poke(); }, 20);
              this.retry.unref();
            }
          } catch (err) {
            // A waiting query fails as it would have failed reading (e.g. the database is away).
            for (const w of batch) w.reject(err as Error);
            this.log.warn({ err }, 'sequencer pass failed (retried in 250 ms)');
            if (!this.retry && this.active) {
              this.retry = setTimeout(() => { this.retry = null; this.poke(); }, 250);
              this.retry.unref();
            }
          }
        } while (this.again && this.active);
      } finally {
        this.running = false;
      }
    })();
    this.loop = loop;
    const done = () => { if (this.loop === loop) this.loop = null; };
    loop.then(done, done);
  }
}
