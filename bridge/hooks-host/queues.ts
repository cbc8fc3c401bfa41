// The order of a host's work: one queue per agent session (a hook's work runs after the earlier hooks' of the
// same session, never concurrently with it), and a wake-up for waits on processes (woken early when a launcher
// reports a PID or an exit).
export class SessionQueues {
  private readonly queues = new Map<string, Promise<unknown>>();
  constructor(private readonly log: (m: string) => void) {}

  enqueue<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(key) ?? Promise.resolve();
    const p = prev.then(fn, fn);
    this.queues.set(key, p.catch((e) => this.log(`session ${key}: ${e?.stack ?? e}`)));
    return p;
  }

  /** Resolves when every queued task of every session has run (tests: after the agent exited). */
  async settled(): Promise<void> {
    for (;;) {
      const qs = [...this.queues.values()];
      await Promise.allSettled(qs);
      if ([...this.queues.values()].every((q, i) => q === qs[i]) && this.queues.size === qs.length) return;
    }
  }
}

export class Waker {
  private waiters: (() => void)[] = [];
  /** Resolves after `ms`, or at the next `wake()`. */
  wait(ms: number): Promise<void> {
    return new Promise<void>((r) => { const t = setTimeout(r, ms); this.waiters.push(() => { clearTimeout(t); r(); }); });
  }
  wake() { this.waiters.splice(0).forEach((w) => w()); }
}
