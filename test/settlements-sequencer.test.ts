import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import fc from 'fast-check';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { connect } from '../db/connection.js';
import { buildApp } from '../server/app.js';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { noticedSettlements, readSettlements, recordSettlement, sequenceSettlements } from '../domain/settlements.js';
import { commitEvent } from '../domain/events/commit.js';
import type { Notice } from '../domain/notices.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { createSession } from '../domain/sessions.js';
import { lockSession } from '../domain/session-lock.js';
import { registerHost, sweepExpiredLeases } from '../domain/hosts.js';
import { SYSTEM } from '../domain/access.js';
import { decodeCursor } from '../resolvers/cursors.js';

/**
 * The settlement sequencer's path from a commit to a subscriber: a settlement's own commit positions it
 * when the clock is free (migration 056), else the sequencer does; a pass with nothing to position holds
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

/**
 * Runs `fn` while another transaction holds the settlement clock (as a pass in progress does): the
 * settlements committed meanwhile cannot be positioned by their own commits and stay staged, for the
 * sequencer. The clock is released when `fn` is done.
 */
async function whileClockHeld<T>(fn: (release: () => Promise<void>) => Promise<T>): Promise<T> {
  const holder = await g.sql.reserve();
  let held = false;
  // `release`: lets the clock go before `fn` is done (as a pass that commits).
  const release = async () => { if (held) { held = false; await holder`ROLLBACK`; } };
  try {
    await holder`BEGIN`;
    held = true;
    await holder`SELECT value FROM clocks WHERE name = 'settlement' FOR UPDATE`;
    return await fn(release);
  } finally {
    await release();
    holder.release();
  }
}

/** Runs `fn` with every notice this instance hears meanwhile, in order. */
async function hearing<T>(fn: (heard: Notice[]) => Promise<T>): Promise<T> {
  const heard: Notice[] = [];
  const off = g.app.gateway.bus.on('*', (n) => { heard.push(n); });
  try {
    return await fn(heard);
  } finally {
    off();
  }
}

/**
 * Runs `fn` (hearing notices) with this instance's sequencer stopped, after a pass that positioned
 * every staged row: whatever positions a settlement meanwhile is its own commit. Restarted after.
 */
async function withoutSequencer<T>(fn: (heard: Notice[]) => Promise<T>): Promise<T> {
  await sequenceSettlements(g.sql, { wait: true });
  await g.app.gateway.sequencer.stop();
  try {
    return await hearing(fn);
  } finally {
    g.app.gateway.sequencer.start();
  }
}

/** What settleExecution commits for a plain SUCCEEDED settlement. */
const settledPayload = (executionID: string) => ({
  executionID, status: 'SUCCEEDED' as const, interruptReason: null, error: null, endSnapshotID: null, endCaptureError: null,
  providerID: null, modelID: null, agent: null, mode: null, finishReason: null, errorName: null,
  usage: { inputTokens: null, outputTokens: null, reasoningTokens: null, cacheReadTokens: null, cacheWriteTokens: null, cacheWrite5mTokens: null, cacheWrite1hTokens: null, cost: null },
});

/**
 * settleExecution's statements for `executionID` (its session's lock, the settled event, the staged
 * row) in a transaction with `gateway.settlement_clock_wait_ms` set to `waitMs`.
 */
async function settleManually(executionID: string, waitMs: string): Promise<void> {
  await g.sql.begin(async (tx) => {
    await tx`SELECT set_config('gateway.settlement_clock_wait_ms', ${waitMs}, true)`;
    const lock = await lockSession(tx, SYSTEM, sessionID);
    const s = lock.session;
    const { result } = await commitEvent(lock, 'execution.settled', settledPayload(executionID));
    await recordSettlement(tx, { sessionId: s.id, executionId: executionID, status: 'SUCCEEDED', directory: s.directory, settledAt: result.settledAt! });
  });
}

/** Backends of this database waiting for a lock (a settling commit waiting for the clock). */
const waitingForLock = async () =>
  Number((await g.sql`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0].n);

/** The settlement clock: the last position handed out. */
const clock = async () => Number((await g.sql`SELECT value FROM clocks WHERE name = 'settlement'`)[0].value);

const posOf = async (executionID: string) => (await g.sql`SELECT pos FROM settlements WHERE execution_id = ${executionID}`)[0]?.pos ?? null;

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
      // Committed while the clock is held: staged, and positioned by no commit of their own.
      const ids = await whileClockHeld(async () => {
        const staged = [await settleOne(), await settleOne(), await settleOne()];
        for (const id of staged) expect(await posOf(id)).toBeNull();
        return staged;
      });
      // No pass of the test's own: this instance's sequencer positions them (woken by the staged notices).
      const got = await sub.waitFor((ev) => ev.length >= 3);
      expect(got.map((e) => e.executionSettled.executionID)).toEqual(ids);
      const positions = got.map((e) => decodeCursor('settlement', e.executionSettled.cursor)!);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      // The pass's head notice reaches this instance too (after the hand-out, or before it): dropped here.
      await expect.poll(() => dropped, { timeout: 10_000 }).toBeGreaterThan(0);
      // Handed out from the passes' own answers: the feed read nothing but its first read at start.
      expect(app.gateway.settlements.reads).toBe(1);
      sub.unsubscribe();
    } finally {
      await client.dispose();
      await app.stop();
      await sql.end({ timeout: 1 });
    }
  });

  it('positions are unique and gap-free, with settlements positioned by their own commits and passes racing on several connections', async () => {
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

  it.skipIf(!inject('citus'))('on Citus, a read of one session\'s settlements stays on its shard, and while one of its settlements waits for a position it does not move past a hole', async () => {
    await sequenceSettlements(g.sql, { wait: true });
    await g.app.gateway.sequencer.stop();
    const head = await clock();
    const row = (pos: number | null, executionID: string) => g.sql`
      INSERT INTO settlements (session_id, execution_id, status, directory, settled_at, pos)
      VALUES (${sessionID}, ${executionID}, 'SUCCEEDED', '/seq', now(), ${pos})`;
    try {
      // Nothing of the session waits: its own shard answers. Position head + 1 is not visible (another
      // session's, on another shard, or not yet committed there): it cannot be this session's.
      await g.sql`UPDATE clocks SET value = ${head + 2} WHERE name = 'settlement'`;
      await row(head + 2, 'exe_visible');
      expect((await readSettlements(g.sql, SYSTEM, { after: head, limit: 10, sessionID })).map((r) => r.pos)).toEqual([head + 2]);
      // One of its settlements waits for a position (staged, or positioned by a pass not visible here yet):
      // the whole log is read, and the read ends before the first position it cannot see.
      await row(null, 'exe_waiting');
      expect(await readSettlements(g.sql, SYSTEM, { after: head, limit: 10, sessionID })).toEqual([]);
      // The hole fills (here with a settlement of the session itself): the read goes on past it.
      await row(head + 1, 'exe_first');
      expect((await readSettlements(g.sql, SYSTEM, { after: head, limit: 10, sessionID })).map((r) => r.executionId)).toEqual(['exe_first', 'exe_visible']);
    } finally {
      await g.sql`DELETE FROM settlements WHERE execution_id IN ('exe_visible', 'exe_waiting', 'exe_first')`;
      await g.sql`UPDATE clocks SET value = ${head} WHERE name = 'settlement'`;
      g.app.gateway.sequencer.start();
    }
  });

  it('a reader never moves past a position it cannot see yet (a cluster shows one shard\'s commit before another\'s)', async () => {
    // What a reader of a cluster can meet for a moment: position p+2 visible, p+1 not yet. Made here
    // by writing the log's rows directly, the way two shards' commits of one pass could become visible.
    await sequenceSettlements(g.sql, { wait: true });
    g.app.gateway.sequencer.stop();
    const head = await clock();
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

  it.skipIf(!inject('citus'))('on Citus, a pass that read a row the previous pass positioned on a worker whose commit had not landed yet rolls back: as busy without wait, tried again with it; no position given twice, none left empty', async () => {
    // A cluster commits a pass in two phases: the coordinator's part (the clock) first, then each worker's
    // prepared part. Made here by hand, twice: the clock moved, the row's new position prepared on its worker.
    await sequenceSettlements(g.sql, { wait: true });
    await g.app.gateway.sequencer.stop();
    const stage = async (executionID: string) => (await g.sql<{ id: number }[]>`
      INSERT INTO settlements (session_id, execution_id, status, directory, settled_at)
      VALUES (${sessionID}, ${executionID}, 'SUCCEEDED', '/seq', now()) RETURNING id`)[0].id;
    const first = await stage('exe_twophase');
    const second = await stage('exe_twophase_again');
    await stage('exe_next');
    const [w] = await g.sql<{ host: string; port: number; shard: number }[]>`
      SELECT n.nodename AS host, n.nodeport AS port, s.shardid AS shard FROM pg_dist_shard s
        JOIN pg_dist_placement p ON p.shardid = s.shardid JOIN pg_dist_node n ON n.groupid = p.groupid
      WHERE s.shardid = get_shard_id_for_distribution_column('settlements', ${sessionID}::text)`;
    const database = (await g.sql`SELECT current_database() AS d`)[0].d as string;
    const worker = connect(`postgres://postgres@${w.host}:${w.port}/${database}`, { max: 2 });
    const prepared = await worker.reserve();
    const head = await clock();
    /** Positions staged row `id` at the clock's next value the way a previous pass's late worker commit does, with `pass` running meanwhile. */
    const behindTwoPhaseCommit = async <T>(id: number, pass: () => Promise<T>): Promise<T> => {
      const at = (await clock()) + 1;
      await prepared`BEGIN`;
      await prepared`UPDATE ${prepared(`settlements_${w.shard}`)} SET pos = ${at} WHERE session_id = ${sessionID} AND id = ${id}`;
      await prepared`PREPARE TRANSACTION 'gateway_test_pass'`;
      await g.sql`UPDATE clocks SET value = ${at} WHERE name = 'settlement'`;
      // The next pass reads the row as staged, then waits for the prepared part's lock on it.
      const running = pass();
      await expect.poll(async () => Number((await worker`
        SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0].n), { timeout: 30_000 }).toBe(1);
      await worker`COMMIT PREPARED 'gateway_test_pass'`;
      return running;
    };
    try {
      // It had numbered the rows; the first turned out positioned already: it rolls back, as busy.
      expect(await behindTwoPhaseCommit(first, () => sequenceSettlements(g.sql, { wait: false }))).toMatchObject({ busy: true, count: 0 });
      expect([await posOf('exe_twophase'), await posOf('exe_twophase_again'), await posOf('exe_next'), await clock()]).toEqual([head + 1, null, null, head + 1]);
      // A waiting pass promises every committed settlement sequenced: it rolls back too, and is tried again.
      expect(await behindTwoPhaseCommit(second, () => sequenceSettlements(g.sql, { wait: true }))).toMatchObject({ busy: false, count: 1, top: head + 3 });
      expect((await readSettlements(g.sql, SYSTEM, { after: head, limit: 10 })).map((r) => [r.pos, r.executionId]))
        .toEqual([[head + 1, 'exe_twophase'], [head + 2, 'exe_twophase_again'], [head + 3, 'exe_next']]);
    } finally {
      await worker`ROLLBACK PREPARED 'gateway_test_pass'`.catch(() => {});
      prepared.release();
      await worker.end({ timeout: 1 });
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
      // Rows staged directly (one transaction each: every pass sees all of one batch), while the clock is
      // held so that their commit does not position them.
      const stage = (n: number) => g.sql.begin((tx) => tx`
        INSERT INTO settlements (session_id, execution_id, status, directory, settled_at)
        SELECT ${sessionID}, 'exe_staged_' || i, 'SUCCEEDED', '/seq/dir "quoted" é', now() - i * interval '1 ms' FROM generate_series(1, ${n}) i`);
      for (const n of [1, 3, 80]) {
        await whileClockHeld(() => stage(n));
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
      await whileClockHeld(async () => { await settleOne(); await settleOne(); });
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
      await whileClockHeld(settleOne);
      const second = await sequenceSettlements(g.sql, { wait: true });
      await whileClockHeld(settleOne);
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

// On a Citus cluster `gateway distribute` drops the commit-time trigger (a settling transaction would reach
// the coordinator's clock and every shard's staged rows: a distributed commit each): the sequencer positions
// every settlement there, as the tests above check.
describe.skipIf(inject('citus'))('a settlement positioned by its own commit (single node; on Citus the sequencer positions every row)', () => {
  it('is positioned when its commit returns, with no pass of any sequencer, and its head notice carries it: no staged notice', async () => {
    await withoutSequencer(async (heard) => {
      const passes = g.app.gateway.sequencer.passes;
      const head = await clock();
      const id = await settleOne();
      // Positioned by the time settleExecution returned: nothing else ran a pass.
      expect(await posOf(id)).toBe(head + 1);
      expect(await clock()).toBe(head + 1);
      await expect.poll(() => heard.some((n) => n.k === 's' && n.p === head + 1), { timeout: 10_000 }).toBe(true);
      const notice = heard.find((n) => n.k === 's' && n.p === head + 1) as Extract<Notice, { k: 's' }>;
      const log = await readSettlements(g.sql, SYSTEM, { after: head, limit: 10 });
      expect(log.map((r) => r.executionId)).toEqual([id]);
      expect(noticedSettlements(notice)).toEqual({ after: head, rows: log });
      // The notices of one transaction arrive together, in the order it sent them: a staged notice of
      // this settlement would have come before its head notice.
      expect(heard.some((n) => n.k === 'q')).toBe(false);
      expect(g.app.gateway.sequencer.passes).toBe(passes);
    });
  });

  it('with the clock busy, the settlement stays staged and says so; the sequencer positions it once the clock is free', async () => {
    await hearing(async (heard) => {
      const id = await whileClockHeld(async () => {
        const staged = await settleOne();
        expect(await posOf(staged)).toBeNull();
        await expect.poll(() => heard.some((n) => n.k === 'q'), { timeout: 10_000 }).toBe(true);
        return staged;
      });
      // The gateway's own sequencer (woken by the staged notice, told "busy" while the clock was held).
      await expect.poll(() => posOf(id), { timeout: 10_000 }).not.toBeNull();
      const log = await readSettlements(g.sql, SYSTEM, { after: 0, limit: 10_000 });
      expect(log.map((r) => r.pos)).toEqual(log.map((_, i) => i + 1));
      expect(log.at(-1)!.executionId).toBe(id);
    });
  });

  it('a settling commit that finds the clock held waits for it and, once the holder is done, positions itself: no staged notice, no pass', async () => {
    await withoutSequencer((heard) => whileClockHeld(async (release) => {
      const head = await clock();
      const e = await beginExecution(g.sql, SYSTEM, { sessionID, hostID, trigger: 'PROMPT' });
      // A bound long enough for the test to see the wait (the default, 20 ms, is not).
      const settling = settleManually(e.id, '60000');
      await expect.poll(waitingForLock, { timeout: 10_000 }).toBe(1);
      expect(await posOf(e.id)).toBeNull(); // not committed yet: its commit is waiting
      await release();
      await settling;
      expect(await posOf(e.id)).toBe(head + 1);
      expect(await clock()).toBe(head + 1);
      await expect.poll(() => heard.some((n) => n.k === 's' && n.p === head + 1), { timeout: 10_000 }).toBe(true);
      expect(heard.some((n) => n.k === 'q')).toBe(false);
    }));
  });

  it('a settling commit whose wait for the clock is cancelled still commits, its row staged for the sequencer (migration 058)', async () => {
    // PostgreSQL can report the wait's lock timeout as a cancel ("canceling statement due to user
    // request"); a cancel request sent to the waiting commit is the same error, on demand.
    await hearing(async (heard) => {
      const e = await beginExecution(g.sql, SYSTEM, { sessionID, hostID, trigger: 'PROMPT' });
      await whileClockHeld(async () => {
        const settling = settleManually(e.id, '60000');
        await expect.poll(waitingForLock, { timeout: 10_000 }).toBe(1);
        const [{ cancelled }] = await g.sql`
          SELECT bool_and(pg_cancel_backend(pid)) AS cancelled FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`;
        expect(cancelled).toBe(true);
        await settling; // committed, not failed
        const [row] = await g.sql`SELECT pos FROM settlements WHERE execution_id = ${e.id}`;
        expect(row).toEqual({ pos: null });
        await expect.poll(() => heard.some((n) => n.k === 'q'), { timeout: 10_000 }).toBe(true);
      });
      await expect.poll(() => posOf(e.id), { timeout: 10_000 }).not.toBeNull();
      const [x] = await g.sql`SELECT status FROM executions WHERE id = ${e.id}`;
      expect(x.status).toBe('SUCCEEDED');
    });
  });

  it('a settling commit waits for a held clock only as long as its bound (gateway.settlement_clock_wait_ms; 0 skips at once, a value that is not a whole number of at most 7 digits is ignored), then leaves its row staged for the sequencer', async () => {
    await hearing(async (heard) => {
      for (const setting of ['0', '30', 'soon', '-5', '99999999']) {
        heard.length = 0;
        const e = await beginExecution(g.sql, SYSTEM, { sessionID, hostID, trigger: 'PROMPT' });
        await whileClockHeld(async () => {
          await settleManually(e.id, setting);
          expect(await posOf(e.id)).toBeNull();
          await expect.poll(() => heard.some((n) => n.k === 'q'), { timeout: 10_000 }).toBe(true);
        });
        await expect.poll(() => posOf(e.id), { timeout: 10_000 }).not.toBeNull();
      }
      const log = await readSettlements(g.sql, SYSTEM, { after: 0, limit: 10_000 });
      expect(log.map((r) => r.pos)).toEqual(log.map((_, i) => i + 1));
    });
  });

  it('behind a backlog of more than 500 staged rows, a settling commit positions the oldest 500 and leaves its own to the sequencer', async () => {
    let head = 0;
    const id = await withoutSequencer(async (heard) => {
      head = await clock();
      // Staged under a held clock, with a bound of a second: the commit's first firing waits it out,
      // the 599 later ones do not wait again (once per row would be ten minutes, past the test's timeout).
      await whileClockHeld(() => g.sql.begin(async (tx) => {
        await tx`SET LOCAL gateway.settlement_clock_wait_ms = 1000`;
        await tx`
          INSERT INTO settlements (session_id, execution_id, status, directory, settled_at)
          SELECT ${sessionID}, 'exe_backlog_' || i, 'SUCCEEDED', '/seq', now() FROM generate_series(1, 600) i`;
      }));
      const id = await settleOne();
      // Its commit took the 500 oldest, in staging order, and said that its own row is still staged.
      expect(await clock()).toBe(head + 500);
      expect(await posOf(id)).toBeNull();
      await expect.poll(() => heard.some((n) => n.k === 's' && n.p === head + 500), { timeout: 10_000 }).toBe(true);
      await expect.poll(() => heard.some((n) => n.k === 'q'), { timeout: 10_000 }).toBe(true);
      return id;
    });
    // The sequencer positions the rest, the settlement last.
    await expect.poll(() => posOf(id), { timeout: 10_000 }).toBe(head + 601);
    const log = await readSettlements(g.sql, SYSTEM, { after: head, limit: 1000 });
    expect(log.map((r) => r.pos)).toEqual(log.map((_, i) => head + i + 1));
    expect(log.slice(0, 600).map((r) => r.executionId)).toEqual(Array.from({ length: 600 }, (_, i) => `exe_backlog_${i + 1}`));
  });

  it('a transaction that stages several settlements positions them all at its commit, in staging order, in one pass', async () => {
    await withoutSequencer(async (heard) => {
      const head = await clock();
      await g.sql.begin((tx) => tx`
        INSERT INTO settlements (session_id, execution_id, status, directory, settled_at)
        SELECT ${sessionID}, 'exe_several_' || i, 'SUCCEEDED', '/seq', now() FROM generate_series(1, 4) i`);
      const log = await readSettlements(g.sql, SYSTEM, { after: head, limit: 10 });
      expect(log.map((r) => r.pos)).toEqual([head + 1, head + 2, head + 3, head + 4]);
      expect(log.map((r) => r.executionId)).toEqual(['exe_several_1', 'exe_several_2', 'exe_several_3', 'exe_several_4']);
      // One head notice for the four (the later firings of the trigger found their rows positioned).
      await expect.poll(() => heard.some((n) => n.k === 's' && n.p === head + 4), { timeout: 10_000 }).toBe(true);
      expect(heard.filter((n) => n.k === 's' && n.p > head).map((n) => (n as Extract<Notice, { k: 's' }>).p)).toEqual([head + 4]);

      // The lease sweep's transactions (one per session, abandoning its running execution) too.
      const lapsed = (await registerHost(g.sql, SYSTEM, { name: 'lapsed', leaseMs: 600_000 })).id;
      const running = [];
      for (let i = 0; i < 3; i++) {
        const s = (await createSession(g.sql, SYSTEM, { title: `lapsed ${i}`, directory: '/seq/lapsed' })).id;
        running.push((await beginExecution(g.sql, SYSTEM, { sessionID: s, hostID: lapsed, trigger: 'PROMPT' })).id);
      }
      await g.sql`UPDATE hosts SET lease_expires_at = now() - interval '1 minute' WHERE id = ${lapsed}`;
      expect((await sweepExpiredLeases(g.sql)).abandoned).toBe(3);
      const swept = await readSettlements(g.sql, SYSTEM, { after: head + 4, limit: 10 });
      expect(swept.map((r) => r.pos)).toEqual([head + 5, head + 6, head + 7]);
      expect(swept.map((r) => r.executionId).sort()).toEqual([...running].sort());
      expect(swept.every((r) => r.status === 'ABANDONED')).toBe(true);
    });
  });

  it('racing settlements, some held open before their commit, some while the clock is held, some waiting for a busy clock and some skipping it, with racing passes: a reader from any cursor gets every one once, in position order, with no gap', async () => {
    const sessions = await Promise.all([1, 2, 3, 4].map((i) => createSession(g.sql, SYSTEM, { title: `p${i}`, directory: `/seq/p${i}` })));
    const racer = connect(g.dbUrl, { max: 2 });
    try {
      await fc.assert(fc.asyncProperty(
        fc.array(fc.record({ session: fc.integer({ min: 0, max: 3 }), holdMs: fc.integer({ min: 0, max: 15 }), underClock: fc.boolean(), skipBusyClock: fc.boolean() }), { minLength: 2, maxLength: 10 }),
        fc.integer({ min: 0, max: 2 }),
        async (settles, passers) => {
          await sequenceSettlements(g.sql, { wait: true });
          const start = await clock();
          // A reader that follows the log from `start`, as a subscriber's resumable stream does.
          const seen: number[] = [];
          let reading = true;
          let aborted = false;
          const reader = (async () => {
            let cursor = start;
            while (!aborted && (reading || cursor < start + settles.length)) {
              const rows = await readSettlements(racer, SYSTEM, { after: cursor, limit: 100 });
              for (const r of rows) { expect(r.pos).toBe(cursor + 1); cursor = r.pos; seen.push(r.pos); }
              if (!rows.length) await new Promise((r) => setImmediate(r));
            }
          })();
          let passing = true;
          // One clock holder at a time (a holder waiting for another would keep its connection meanwhile).
          let clockChain: Promise<unknown> = Promise.resolve();
          const passes = Array.from({ length: passers }, async () => { while (passing) await sequenceSettlements(racer, { wait: false }); });
          // A session runs one execution at a time: its settlements one after another, the sessions' at once.
          const chains = new Map<number, Promise<unknown>>();
          let ids: string[];
          try {
            ids = await Promise.all(settles.map((x) => {
              const next = (chains.get(x.session) ?? Promise.resolve()).then(() => settleAs(x));
              chains.set(x.session, next.catch(() => {}));
              return next;
            }));
          } catch (e) {
            aborted = true;
            throw e;
          } finally {
            passing = false;
            reading = false;
            await Promise.allSettled([...passes, reader]);
          }
          await reader;
          const log = await readSettlements(g.sql, SYSTEM, { after: start, limit: 1000 });
          expect(log.map((r) => r.pos)).toEqual(settles.map((_, i) => start + i + 1));
          expect(log.map((r) => r.executionId).sort()).toEqual([...ids].sort());
          expect(seen).toEqual(log.map((r) => r.pos));

          async function settleAs(x: (typeof settles)[number]): Promise<string> {
            const e = await beginExecution(g.sql, SYSTEM, { sessionID: sessions[x.session].id, hostID, trigger: 'PROMPT' });
            const settle = async () => {
              // settleExecution's statements, held open for a while after the row is staged.
              await g.sql.begin(async (tx) => {
                // Commits that wait for a busy clock (migration 057) race with ones that skip it (056).
                if (x.skipBusyClock) await tx`SET LOCAL gateway.settlement_clock_wait_ms = 0`;
                const lock = await lockSession(tx, SYSTEM, sessions[x.session].id);
                const s = lock.session;
                const { result } = await commitEvent(lock, 'execution.settled', settledPayload(e.id));
                await recordSettlement(tx, { sessionId: s.id, executionId: e.id, status: 'SUCCEEDED', directory: s.directory, settledAt: result.settledAt! });
                if (x.holdMs) await new Promise((r) => setTimeout(r, x.holdMs));
              });
            };
            if (x.underClock) {
              const run = clockChain.then(() => whileClockHeld(settle));
              clockChain = run.catch(() => {});
              await run;
            } else await settle();
            return e.id;
          }
        },
      ), { numRuns: 12 });
    } finally {
      await racer.end({ timeout: 1 });
    }
  });
});
