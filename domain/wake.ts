/**
 * The one wait primitive of the waits that are woken by notifications (never by polling): the seal
 * (domain/seal.ts), replies to host requests (domain/host-requests.ts), a host's command stream
 * (schema/commands.ts) and the resumable subscriber streams (subscriptions/feed.ts).
 *
 * A Wake is a latch: `poke()` (a notice, a resync of the listening connection, an abort, or the
 * owner itself) sets it; `take()` reads and clears it; `wait(ms)` resolves as soon as it is set, at
 * once when it already is. The loop that uses it is always
 *
 *     for (;;) { wake.take(); <read the state>; <done? return>; await wake.wait(left); }
 *
 * so a wake that arrives while the state is being read (after `take()`, before `wait()`) is not
 * lost: it leaves the latch set and the wait returns at once. Listeners are installed when the Wake
 * is made, before the first read: nothing that commits after that read can be missed.
 */

/** What a wait needs of the instance's notification bus (subscriptions/bus.ts PgBus). */
export interface WakeBus {
  on(topic: string, fn: (notice: any) => void): () => void;
  onResync(fn: () => void): () => void;
}

/** Why a wait returned: the latch is set, the time given passed, the wait's signal aborted, or the Wake was closed. */
export type WakeReason = 'woken' | 'deadline' | 'aborted' | 'closed';

export interface WakeOptions {
  /** Notices on `topic` wake (those `accept` accepts, when given); so does every resync of the bus. */
  bus?: WakeBus;
  topic?: string;
  accept?: (notice: any) => boolean;
  /** Its abort wakes the wait (and every later wait returns `aborted`). */
  signal?: AbortSignal;
  /** Starts set: the first wait returns at once. */
  set?: boolean;
}

/** The longest a timer can be (setTimeout fires at once beyond it). */
const MAX_TIMER = 2 ** 31 - 1;

export class Wake {
  private latch: boolean;
  private waiters = new Set<() => void>();
  private offs: (() => void)[] = [];
  private closedFlag = false;

  constructor(private opts: WakeOptions = {}) {
    this.latch = opts.set ?? false;
    const { bus, topic, accept, signal } = opts;
    if (bus) {
      if (topic) this.offs.push(bus.on(topic, (n) => { if (!accept || accept(n)) this.poke(); }));
      this.offs.push(bus.onResync(() => this.poke()));
    }
    if (signal) {
      const onAbort = () => this.poke();
      signal.addEventListener('abort', onAbort);
      this.offs.push(() => signal.removeEventListener('abort', onAbort));
    }
  }

  /** Sets the latch and ends every pending wait. */
  poke(): void {
    this.latch = true;
    this.release();
  }

  /** Whether the latch was set since the last take; clears it. Call before reading what a wake may change. */
  take(): boolean {
    const was = this.latch;
    this.latch = false;
    return was;
  }

  /** Whether the latch is set (without clearing it). */
  get isSet(): boolean { return this.latch; }

  get closed(): boolean { return this.closedFlag; }

  /**
   * Resolves when the latch is set (at once if it already is), after `ms` (none: no deadline), when
   * the signal aborts, or when the Wake is closed. Does not clear the latch.
   */
  wait(ms?: number): Promise<WakeReason> {
    const now = this.reason();
    if (now) return Promise.resolve(now);
    if (ms !== undefined && ms <= 0) return Promise.resolve('deadline');
    return new Promise<WakeReason>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        this.waiters.delete(done);
        clearTimeout(timer);
        resolve(this.reason() ?? 'deadline');
      };
      this.waiters.add(done);
      if (ms !== undefined) timer = setTimeout(done, Math.min(Math.max(1, Math.ceil(ms)), MAX_TIMER));
    });
  }

  /** Removes the listeners and ends every pending and later wait with `closed`. Idempotent. */
  close(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    for (const off of this.offs.splice(0)) off();
    this.release();
  }

  private reason(): WakeReason | null {
    if (this.closedFlag) return 'closed';
    if (this.opts.signal?.aborted) return 'aborted';
    return this.latch ? 'woken' : null;
  }

  private release() {
    if (this.waiters.size === 0) return;
    for (const w of [...this.waiters]) w();
  }
}
