import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { connect } from '../db/connection.js';
import { buildApp } from '../server/app.js';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { noticedSettlements, readSettlements, sequenceSettlements } from '../domain/settlements.js';
import type { Notice } from '../domain/notices.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { createSession } from '../domain/sessions.js';
import { registerHost } from '../domain/hosts.js';
import { SYSTEM } from '../domain/access.js';
import { decodeCursor } from '../resolvers/cursors.js';

/**
 * The settlement sequencer's path from a commit to a subscriber: a pass with nothing to position holds
 * nothing up, and the instance that positioned a settlement reads it without waiting for its own head
 * notice. (Positions, order and fan-out across instances: subscriptions.test.ts.)
 */

let g: TestGateway;
let hostID: string;
let sessionID: string;

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  hostID = (await registerHost(g.sql, SYSTEM, { name: 'h', leaseMs: 600_000 })).id;
  sessionID = (await createSession(g.sql, SYSTEM, { title: 's', directory: '/seq' })).id;
});
afterAll(async () => { await g?.stop(); });

async function settleOne(): Promise<string> {
  const e = await beginExecution(g.sql, SYSTEM, { sessionID, hostID, trigger: 'PROMPT' });
  await settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
  return e.id;
}

describe('settlement sequencer', () => {
  it('a pass with nothing to position answers at once while another pass holds the clock; one with work waits for it', async () => {
    await settleOne();
    await sequenceSettlements(g.sql, { wait: true });
    const head = Number((await g.sql`SELECT max(pos) AS p FROM settlements`)[0].p);
    // Another pass in progress: the clock row locked by a transaction left open.
    const holder = await g.sql.reserve();
    try {
      await holder`BEGIN`;
      await holder`SELECT value FROM clocks WHERE name = 'settlement' FOR UPDATE`;
      // Nothing staged: even a waiting pass returns (it would otherwise wait for the holder: the test would time out).
      expect(await sequenceSettlements(g.sql, { wait: true })).toEqual({ busy: false, count: 0, top: head, more: false, rows: [] });
      const id = await settleOne();
      // Now there is work, and the clock is held: busy (the gateway's own sequencer is told the same and retries).
      expect((await sequenceSettlements(g.sql, { wait: false })).busy).toBe(true);
      const [row] = await g.sql`SELECT pos FROM settlements WHERE execution_id = ${id}`;
      expect(row.pos).toBeNull();
      await holder`ROLLBACK`;
      await sequenceSettlements(g.sql, { wait: true });
      const log = await readSettlements(g.sql, SYSTEM, { after: 0, limit: 1000 });
      expect(log.map((r) => r.pos)).toEqual(log.map((_, i) => i + 1)); // gap-free
      expect(log.at(-1)!.executionId).toBe(id);
    } finally {
      holder.release();
    }
  });

  it('the instance that positions a settlement delivers it without waiting for the head notice', async () => {
    // One instance with no safety poll, the only sequencer running, that never hears a head notice
    // ("the log moved to p"): only its own passes can wake its feed.
    g.app.gateway.sequencer.stop();
    const sql = connect(g.dbUrl, { max: 4 });
    const app = buildApp({ sql, gateway: { sweepIntervalMs: 0, feedPollMs: 0 } });
    await app.start();
    const bus = app.gateway.bus as unknown as { dispatch: (topic: string, n: unknown) => void };
    const dispatch = bus.dispatch.bind(bus);
    let dropped = 0;
    bus.dispatch = (topic, n) => { if (topic === 'settlements') { dropped++; return; } dispatch(topic, n); };
    const client = createClient({ url: app.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${g.admin}` }, retryAttempts: 0 });
    try {
      const sub = subscribe<{ executionSettled: { cursor: string; executionID: string } }>(client,
        'subscription { executionSettled { cursor executionID } }');
      await sub.waitFor(() => app.gateway.settlements.subscribers === 1);
      const ids = [await settleOne(), await settleOne(), await settleOne()];
      // No pass of the test's own: this instance's sequencer positions them (woken by the staged notices).
      const got = await sub.waitFor((ev) => ev.length >= 3);
      expect(got.map((e) => e.executionSettled.executionID)).toEqual(ids);
      const positions = got.map((e) => decodeCursor('settlement', e.executionSettled.cursor)!);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(dropped).toBeGreaterThan(0);
      // Handed out from the passes' own answers: the feed read nothing but its first read at start.
      expect(app.gateway.settlements.reads).toBe(1);
      sub.unsubscribe();
    } finally {
      await client.dispose();
      await app.stop();
      await sql.end({ timeout: 1 });
    }
  });

  it('positions are unique and gap-free from the sequencer alone, with passes racing on several connections', async () => {
    // The database does not enforce it (a cluster cannot: migration 053); the passes must.
    const [{ unique }] = await g.sql`
      SELECT coalesce(bool_or(i.indisunique), false) AS unique FROM pg_index i
      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
      WHERE i.indrelid = 'settlements'::regclass AND a.attname = 'pos'`;
    expect(unique).toBe(false);
    const sessions = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => createSession(g.sql, SYSTEM, { title: `r${i}`, directory: `/seq/r${i}` })));
    const racers = [connect(g.dbUrl, { max: 1 }), connect(g.dbUrl, { max: 1 }), connect(g.dbUrl, { max: 1 })];
    let settling = true;
    try {
      const passes = racers.map(async (sql, i) => {
        while (settling) await sequenceSettlements(sql, { wait: i === 0 });
      });
      await Promise.all(sessions.map(async (s) => {
        for (let k = 0; k < 8; k++) {
          const e = await beginExecution(g.sql, SYSTEM, { sessionID: s.id, hostID, trigger: 'PROMPT' });
          await settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
        }
      }));
      settling = false;
      await Promise.all(passes);
      await sequenceSettlements(g.sql, { wait: true });
      const rows = await g.sql<{ pos: number }[]>`SELECT pos FROM settlements ORDER BY pos`;
      expect(rows.every((r) => r.pos !== null)).toBe(true);
      expect(rows.map((r) => r.pos)).toEqual(rows.map((_, i) => i + 1));
      const [{ value }] = await g.sql`SELECT value FROM clocks WHERE name = 'settlement'`;
      expect(Number(value)).toBe(rows.length);
    } finally {
      settling = false;
      await Promise.all(racers.map((r) => r.end({ timeout: 1 })));
    }
  });

  it('a reader never moves past a position it cannot see yet (a cluster shows one shard\'s commit before another\'s)', async () => {
    // What a reader of a cluster can meet for a moment: position p+2 visible, p+1 not yet. Made here
    // by writing the log's rows directly, the way two shards' commits of one pass could become visible.
    await sequenceSettlements(g.sql, { wait: true });
    g.app.gateway.sequencer.stop();
    const head = Number((await g.sql`SELECT value FROM clocks WHERE name = 'settlement'`)[0].value);
    const client = g.ws();
    try {
      const sub = subscribe<{ executionSettled: { cursor: string; executionID: string } }>(client,
        'subscription { executionSettled { cursor executionID } }');
      const feed = g.app.gateway.settlements;
      await sub.waitFor(() => feed.subscribers === 1);
      const row = (pos: number, executionID: string) => g.sql`
        INSERT INTO settlements (session_id, execution_id, status, directory, settled_at, pos)
        VALUES (${sessionID}, ${executionID}, 'SUCCEEDED', '/seq', now(), ${pos})`;
      await g.sql`UPDATE clocks SET value = ${head + 2} WHERE name = 'settlement'`;
      await row(head + 2, 'exe_second');
      expect(await readSettlements(g.sql, SYSTEM, { after: head, limit: 10 })).toEqual([]);
      const reads = feed.reads;
      feed.wake(head + 2);
      await expect.poll(() => feed.reads, { timeout: 10_000 }).toBeGreaterThan(reads);
      expect(feed.cursor).toBe(head);
      expect(sub.events).toEqual([]);
      await row(head + 1, 'exe_first');
      feed.wake(head + 2);
      const got = await sub.waitFor((ev) => ev.length >= 2);
      expect(got.map((e) => e.executionSettled.executionID)).toEqual(['exe_first', 'exe_second']);
      expect((await readSettlements(g.sql, SYSTEM, { after: head, limit: 10 })).map((r) => r.pos)).toEqual([head + 1, head + 2]);
      sub.unsubscribe();
    } finally {
      await client.dispose();
      g.app.gateway.sequencer.start();
    }
  });

  it('a pass hands back the rows it positioned, as the log reads them, and its head notice carries them while they fit', async () => {
    // No pass but the test's own (the one in flight, if any, has ended).
    await g.app.gateway.sequencer.stop();
    const heard: Notice[] = [];
    const off = g.app.gateway.bus.on('settlements', (n) => { heard.push(n); });
    try {
      await sequenceSettlements(g.sql, { wait: true });
      // Rows staged directly (one transaction each: every pass sees all of one batch), no staged notice.
      const stage = (n: number) => g.sql.begin((tx) => tx`
        INSERT INTO settlements (session_id, execution_id, status, directory, settled_at)
        SELECT ${sessionID}, 'exe_staged_' || i, 'SUCCEEDED', '/seq/dir "quoted" é', now() - i * interval '1 ms' FROM generate_series(1, ${n}) i`);
      for (const n of [1, 3, 80]) {
        await stage(n);
        const r = await sequenceSettlements(g.sql, { wait: true });
        expect(r.count).toBe(n);
        const log = await readSettlements(g.sql, SYSTEM, { after: r.top - n, limit: 1000 });
        expect(log).toHaveLength(n);
        expect(r.rows).toEqual(log);
        await expect.poll(() => heard.some((x) => x.k === 's' && x.p === r.top), { timeout: 10_000 }).toBe(true);
        const notice = heard.find((x) => x.k === 's' && x.p === r.top) as Extract<Notice, { k: 's' }>;
        if (n === 80) {
          // Too large for a notification: the head alone (listeners read the log).
          expect(notice.r).toBeNull();
          expect(noticedSettlements(notice)).toBeUndefined();
        } else {
          expect(noticedSettlements(notice)).toEqual({ after: r.top - n, rows: log });
        }
      }
      // Rows that are not exactly the positions up to p, or lack a field, are not taken from a notice.
      const [one] = heard.filter((x) => x.k === 's' && x.r?.length === 1) as Extract<Notice, { k: 's' }>[];
      expect(noticedSettlements({ p: one.p + 1, r: one.r })).toBeUndefined();
      expect(noticedSettlements({ p: one.p, r: [{ ...one.r![0], settled_at: 'never' }] })).toBeUndefined();
      expect(noticedSettlements({ p: one.p, r: [{ ...one.r![0], session_id: undefined as unknown as string }] })).toBeUndefined();
    } finally {
      off();
      g.app.gateway.sequencer.start();
    }
  });

  it('a feed hands out rows it is given without reading them, and reads instead when they do not start at its cursor', async () => {
    await sequenceSettlements(g.sql, { wait: true });
    // An instance with no safety poll and no sequencer, deaf to head notices: only the test offers rows to its feed.
    await g.app.gateway.sequencer.stop();
    const sql = connect(g.dbUrl, { max: 4 });
    const app = buildApp({ sql, gateway: { sweepIntervalMs: 0, feedPollMs: 0 } });
    await app.start();
    await app.gateway.sequencer.stop();
    const bus = app.gateway.bus as unknown as { dispatch: (topic: string, n: unknown) => void };
    const dispatch = bus.dispatch.bind(bus);
    bus.dispatch = (topic, n) => { if (topic !== 'settlements') dispatch(topic, n); };
    const client = createClient({ url: app.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${g.admin}` }, retryAttempts: 0 });
    try {
      const sub = subscribe<{ executionSettled: { cursor: string; executionID: string } }>(client,
        'subscription { executionSettled { cursor executionID } }');
      const feed = app.gateway.settlements;
      await sub.waitFor(() => feed.subscribers === 1);
      const at = feed.cursor;
      const execution = (r: { executionSettled: { executionID: string } }) => r.executionSettled.executionID;
      // A pass of the test's own: its rows offered where the feed stands are handed out, no read.
      await settleOne();
      await settleOne();
      const first = await sequenceSettlements(g.sql, { wait: true });
      expect(first.top - first.count).toBe(at);
      let reads = feed.reads;
      feed.offer(first.rows, at);
      const got = await sub.waitFor((ev) => ev.length >= 2);
      expect(got.map(execution)).toEqual(first.rows.map((r) => r.executionId));
      expect(feed.reads).toBe(reads);
      // Offered again (the head notice of the same pass arriving late): nothing twice, no read.
      feed.offer(first.rows, at);
      // Two passes, the second's rows offered alone: they do not follow the cursor, so the feed reads
      // the log from its cursor and hands out both passes' rows, in order.
      await settleOne();
      const second = await sequenceSettlements(g.sql, { wait: true });
      await settleOne();
      const third = await sequenceSettlements(g.sql, { wait: true });
      reads = feed.reads;
      feed.offer(third.rows, third.top - third.count);
      const all = await sub.waitFor((ev) => ev.length >= 4);
      expect(all.map(execution)).toEqual([...first.rows, ...second.rows, ...third.rows].map((r) => r.executionId));
      expect(feed.reads).toBeGreaterThan(reads);
      expect(feed.cursor).toBe(third.top);
      expect(all.map((e) => decodeCursor('settlement', e.executionSettled.cursor))).toEqual([at + 1, at + 2, at + 3, at + 4]);
      sub.unsubscribe();
    } finally {
      await client.dispose();
      await app.stop();
      await sql.end({ timeout: 1 });
      g.app.gateway.sequencer.start();
    }
  });
});
