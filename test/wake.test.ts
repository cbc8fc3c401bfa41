import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { pino } from 'pino';
import { createTestDatabase } from './harness.js';
import { connect, type Sql } from '../db/connection.js';
import { CHANNEL, REPLY_TOPIC } from '../domain/notices.js';
import { Wake } from '../domain/wake.js';
import { PgBus } from '../subscriptions/bus.js';

/**
 * The one wait primitive (domain/wake.ts) that the seal, host-request replies, the host-command stream
 * and the resumable subscriber streams wait on: woken by notices of a real LISTEN bus and by its
 * resyncs, bounded by a deadline, ended by an abort or close, and never losing a wake that arrives
 * between the read of the state and the wait.
 */

let db: { url: string; drop(): Promise<void> };
let sql: Sql;
let bus: PgBus;

beforeAll(async () => {
  db = await createTestDatabase();
  sql = connect(db.url, { max: 2 });
  bus = new PgBus(sql, pino({ level: 'silent' }), 0);
  await bus.start();
});
afterAll(async () => {
  await bus?.stop();
  await sql?.end({ timeout: 1 });
  await db?.drop();
});

const notify = (n: object) => sql`SELECT pg_notify(${CHANNEL}, ${JSON.stringify(n)})`;

describe('Wake', () => {
  it('a committed notice on its topic wakes the wait; notices it does not accept, or of other topics, do not', async () => {
    const wake = new Wake({ bus, topic: REPLY_TOPIC, accept: (n) => n.k === 'r' && n.id === 'cmd_a' });
    try {
      const waiting = wake.wait(20_000);
      // Not accepted (another command), and another topic: the wait goes on.
      await notify({ k: 'r', id: 'cmd_b' });
      await notify({ k: 'c', h: 'hst_x' });
      // A marker on the same connection after them: once it arrives, the two were dispatched first.
      const marker = new Promise<void>((resolve) => { const off = bus.on('journal:ses_marker', () => { off(); resolve(); }); });
      await notify({ k: 'j', s: 'ses_marker', q: 1 });
      await marker;
      expect(wake.isSet).toBe(false);
      await notify({ k: 'r', id: 'cmd_a' });
      expect(await waiting).toBe('woken');
      expect(wake.take()).toBe(true);
      expect(wake.take()).toBe(false);
    } finally {
      wake.close();
    }
  });

  it('a notice inside a transaction wakes only once the transaction commits', async () => {
    const wake = new Wake({ bus, topic: 'journal:ses_w' });
    try {
      let committed = false;
      const waiting = wake.wait(20_000).then((r) => ({ r, committed }));
      await sql.begin(async (tx) => {
        await tx`SELECT pg_notify(${CHANNEL}, ${JSON.stringify({ k: 'j', s: 'ses_w', q: 1 })})`;
        await tx`SELECT pg_sleep(0.05)`;
        committed = true;
      });
      expect(await waiting).toEqual({ r: 'woken', committed: true });
    } finally {
      wake.close();
    }
  });

  it('a resync of the bus (its listening connection came back) wakes the wait', async () => {
    const wake = new Wake({ bus, topic: 'journal:ses_none' });
    try {
      const before = bus.resyncs;
      const waiting = wake.wait(30_000);
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'agent-history-gateway-listener' AND datname = current_database()`;
      expect(await waiting).toBe('woken');
      expect(bus.resyncs).toBeGreaterThan(before);
    } finally {
      wake.close();
    }
  });

  it('ends at its deadline when nothing wakes it, and at once for a deadline already past', async () => {
    const wake = new Wake({ bus, topic: 'journal:ses_quiet' });
    try {
      const t0 = performance.now();
      expect(await wake.wait(60)).toBe('deadline');
      expect(performance.now() - t0).toBeGreaterThanOrEqual(55);
      expect(await wake.wait(0)).toBe('deadline');
      expect(await wake.wait(-5)).toBe('deadline');
    } finally {
      wake.close();
    }
  });

  it('an abort ends the pending wait and every later one; close removes its listeners from the bus', async () => {
    const ac = new AbortController();
    const wake = new Wake({ bus, topic: 'journal:ses_abort', signal: ac.signal });
    const waiting = wake.wait();
    ac.abort();
    expect(await waiting).toBe('aborted');
    expect(await wake.wait()).toBe('aborted');
    wake.close();
    expect(await wake.wait()).toBe('closed');

    const counted = new Wake({ bus, topic: 'journal:ses_closed' });
    const pending = counted.wait();
    counted.close();
    expect(await pending).toBe('closed');
    // Closed: a notice no longer reaches it (its listener is gone), and a poke does not reopen it.
    await notify({ k: 'j', s: 'ses_closed', q: 1 });
    counted.poke();
    expect(await counted.wait()).toBe('closed');
    expect((bus as any).topics.has('journal:ses_closed')).toBe(false);
  });

  it('starts set when asked: the first wait returns at once', async () => {
    const wake = new Wake({ set: true });
    expect(await wake.wait()).toBe('woken');
    expect(wake.take()).toBe(true);
    expect(await wake.wait(1)).toBe('deadline');
  });

  it('loses no wake between the read of the state and the wait, however producers and the reader interleave', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(4), { minLength: 1, maxLength: 30 }), fc.array(fc.nat(4), { minLength: 1, maxLength: 30 }), async (writes, reads) => {
        // A producer bumps a value and pokes after a random number of ticks; the reader runs the
        // canonical loop (take, read across random ticks, wait). It must see the last value without
        // any deadline: a lost wake leaves it waiting forever (the test then times out).
        const wake = new Wake();
        let value = 0;
        const target = writes.length;
        const ticks = (n: number) => (async () => { for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r)); })();
        const producer = (async () => {
          for (const w of writes) { await ticks(w); value++; wake.poke(); }
        })();
        let seen = 0;
        let i = 0;
        for (;;) {
          wake.take();
          await ticks(reads[i++ % reads.length]);
          seen = value;
          if (seen === target) break;
          expect(await wake.wait()).toBe('woken');
        }
        await producer;
        wake.close();
        expect(seen).toBe(target);
      }),
      { numRuns: 200 },
    );
  });
});
