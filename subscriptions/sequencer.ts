import type { Sql } from '../db/connection.js';
import { sequenceSettlements } from '../domain/settlements.js';
import type { PgBus } from './bus.js';
import { log } from '../server/logging.js';

/**
 * Runs sequencer passes of the settlement log (see domain/settlements.ts) for this instance: on
 * every "staged" notice, after the listening connection came back, at start and on a slow safety
 * timer. Wake-ups during a pass are coalesced into one more pass. Every instance runs one; passes of
 * different instances are serialised by the clock row (a busy clock is retried shortly, because the
 * pass holding it may have taken its snapshot before our row committed).
 */
export class Sequencer {
  private running = false;
  private again = false;
  private active = false;
  private offs: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  passes = 0;

  constructor(private sql: Sql, private bus: PgBus, private intervalMs = 1_000) {}

  start(): void {
    this.active = true;
    this.offs.push(this.bus.on('settlements:staged', () => this.poke()));
    this.offs.push(this.bus.onResync(() => this.poke()));
    if (this.intervalMs > 0) {
      this.timer = setInterval(() => this.poke(), this.intervalMs);
      this.timer.unref();
    }
    this.poke();
  }

  stop(): void {
    this.active = false;
    for (const off of this.offs.splice(0)) off();
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    this.timer = this.retry = null;
  }

  poke(): void {
    if (!this.active) return;
    if (this.running) { this.again = true; return; }
    this.running = true;
    void (async () => {
      try {
        do {
          this.again = false;
          try {
            const r = await sequenceSettlements(this.sql);
            this.passes++;
            if (r.count) log().debug({ positions: r.count, top: r.top }, 'sequencer: settlements positioned');
            if (r.more) this.again = true;
            else if (r.busy && !this.retry) {
              this.retry = setTimeout(() => { this.retry = null; this.poke(); }, 20);
              this.retry.unref();
            }
          } catch (err) {
            log().warn({ err }, 'sequencer pass failed (retried in 250 ms)');
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
  }
}
