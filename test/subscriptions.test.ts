import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { connect, type Sql } from '../db/connection.js';
import { buildApp, type App } from '../server/app.js';
import { gql, onFeed, startTestGateway, subscribe, unsubscribeAll, type TestGateway } from './harness.js';
import { readSettlements, recordSettlement, sequenceSettlements, type SettlementRow } from '../domain/settlements.js';
import { decodeCursor, encodeCursor } from '../resolvers/cursors.js';
import { commitEvent } from '../domain/events/commit.js';
import { lockSession } from '../domain/session-lock.js';
import { SYSTEM } from '../domain/access.js';
import { revokeToken } from '../domain/tokens.js';
import { resumable } from '../subscriptions/feed.js';
import { until } from './support/until.js';

/** What settleExecution commits for a plain SUCCEEDED settlement. */
const settledPayload = (executionID: string) => ({
  executionID, status: 'SUCCEEDED' as const, interruptReason: null, error: null, endSnapshotID: null, endCaptureError: null,
  providerID: null, modelID: null, agent: null, mode: null, finishReason: null, errorName: null,
  usage: { inputTokens: null, outputTokens: null, reasoningTokens: null, cacheReadTokens: null, cacheWriteTokens: null, cacheWrite5mTokens: null, cacheWrite1hTokens: null, cost: null },
});

/**
 * Settlement subscriptions across several gateway instances on one Postgres. The instances
 * here run with the feeds' safety poll off, so every live delivery comes from LISTEN/NOTIFY or from
 * the catch-up after the listening connection came back.
 */

let g: TestGateway;
let A: App;
let B: App;
const extra: { app: App; sql: Sql }[] = [];
const clients: Client[] = [];
let hostToken: string;
let hostID: string;
const sessions: Record<string, string[]> = {}; // directory -> session IDs

const SUB = `subscription S($after: String, $sessionID: ID) {
  executionSettled(after: $after, sessionID: $sessionID) { cursor executionID sessionID status }
}`;

type Ev = { executionSettled: { cursor: string; executionID: string; sessionID: string; status: string } };

async function instance(): Promise<App> {
  const sql = connect(g.dbUrl, { max: 6 });
  const app = buildApp({ sql, gateway: { sweepIntervalMs: 0, feedPollMs: 0 } });
  await app.start();
  extra.push({ app, sql });
  return app;
}

function ws(app: App, token: string, o: Partial<Parameters<typeof createClient>[0]> = {}): Client {
  const c = createClient({
    url: app.wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: true,
    ...o,
  });
  clients.push(c);
  return c;
}

async function call(app: App, token: string, query: string, variables?: Record<string, unknown>) {
  const r = await gql(app.url, token, query, variables);
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data;
}

async function createSession(directory: string): Promise<string> {
  const d = await call(A, g.admin, `mutation($d: String!) { createSession(input: { title: "s", directory: $d }) { __typename ... on Session { id } } }`, { d: directory });
  const id = d.createSession.id as string;
  (sessions[directory] ??= []).push(id);
  return id;
}

async function begin(app: App, sessionID: string): Promise<string> {
  const d = await call(app, hostToken, `mutation($i: BeginExecutionInput!) { beginExecution(input: $i) { __typename ... on Execution { id } ... on Error { message } } }`,
    { i: { sessionID, hostID, trigger: 'PROMPT' } });
  if (d.beginExecution.__typename !== 'Execution') throw new Error(JSON.stringify(d));
  return d.beginExecution.id;
}

/** One settlement through the given instance's GraphQL API (begin + settle). */
async function settle(app: App, sessionID: string, status = 'SUCCEEDED'): Promise<string> {
  const id = await begin(app, sessionID);
  const d = await call(app, hostToken, `mutation($i: SettleExecutionInput!) { settleExecution(input: $i) { __typename ... on Execution { id status } ... on Error { message } } }`,
    { i: { executionID: id, status } });
  if (d.settleExecution.__typename !== 'Execution') throw new Error(JSON.stringify(d));
  return id;
}

/** Settles `n` executions round-robin over the sessions and instances (sessions in parallel, each session in order). */
async function settleMany(n: number, sess: string[], apps: App[]): Promise<string[]> {
  const per = new Map<string, number>();
  for (let i = 0; i < n; i++) per.set(sess[i % sess.length], (per.get(sess[i % sess.length]) ?? 0) + 1);
  const ids: string[] = [];
  let k = 0;
  await Promise.all([...per].map(async ([s, count]) => {
    for (let i = 0; i < count; i++) ids.push(await settle(apps[k++ % apps.length], s));
  }));
  return ids;
}

/** The log as the database has it, after giving every committed settlement its position. */
async function log(after = 0): Promise<SettlementRow[]> {
  await sequenceSettlements(g.sql, { wait: true });
  return readSettlements(g.sql, SYSTEM, { after, limit: 100_000 });
}

function pos(e: Ev): number {
  return decodeCursor('settlement', e.executionSettled.cursor)!;
}

/**
 * The positive signal that streams are quiet: one more settlement in `sessionID`, awaited on every
 * subscriber. Each stream is in cursor order, so whatever was sent before it (a duplicate, a row out of
 * place) is in their events by then. Answers each subscriber's events before the marker.
 */
async function beforeMarker(subs: { events: Ev[]; waitFor: (p: (e: Ev[]) => boolean, ms?: number) => Promise<Ev[]> }[], via: App, sessionID: string): Promise<Ev[][]> {
  const marker = await settle(via, sessionID);
  const out: Ev[][] = [];
  for (const s of subs) {
    const events = await s.waitFor((e) => e.some((x) => x.executionSettled.executionID === marker));
    expect(events.at(-1)!.executionSettled.executionID).toBe(marker);
    out.push(events.slice(0, -1));
  }
  return out;
}

/** Every event once, in strictly increasing cursor order, exactly the expected executions. */
function expectExactly(events: Ev[], expected: SettlementRow[]) {
  const got = events.map((e) => [pos(e), e.executionSettled.executionID]);
  expect(got).toEqual(expected.map((r) => [r.pos, r.executionId]));
}

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  A = await instance();
  B = await instance();
  hostToken = await g.token('host');
  const h = await call(A, hostToken, `mutation { registerHost(input: { name: "h", leaseMs: 600000 }) { __typename ... on Host { id } } }`);
  hostID = h.registerHost.id;
  for (const d of ['/a/x', '/a/y', '/b/z', '/ab']) await createSession(d);
  for (const d of ['/a/x', '/b/z']) await createSession(d);
});

// A test that fails before its own unsubscribe leaves no subscriber behind for the next one to count.
afterEach(unsubscribeAll);
afterAll(async () => {
  for (const c of clients) await c.dispose();
  for (const e of extra) { await e.app.stop().catch(() => {}); await e.sql.end({ timeout: 1 }); }
  await g?.stop();
});

const all = () => Object.values(sessions).flat();
const under = (prefix: string) => (r: SettlementRow) => r.directory === prefix || r.directory.startsWith(prefix + '/');

describe('settlement cursor follows commit order', () => {
  it('a settling transaction held open: later settlements commit and are delivered meanwhile, the late one after them, nothing skipped', async () => {
    const sub = subscribe<Ev>(ws(A, g.admin), SUB, {});
    await onFeed(() => A.gateway.settlements.subscribers, 1);
    const start = (await log()).at(-1)?.pos ?? 0;
    // A poller paginating the settlements query the whole time, resuming from its last cursor.
    const polled: { cursor: string; node: { executionID: string } }[] = [];
    let polling = true;
    let pollCursor: string | null = start ? encodeCursor('settlement', start) : null;
    const poller = (async () => {
      while (polling) {
        const d = await call(B, g.admin, `query($a: String) { settlements(first: 100, after: $a) { edges { cursor node { executionID } } pageInfo { endCursor } } }`, { a: pollCursor });
        polled.push(...d.settlements.edges);
        pollCursor = d.settlements.pageInfo.endCursor ?? pollCursor;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    const [slowSession, ...others] = [sessions['/a/x'][0], sessions['/a/y'][0], sessions['/b/z'][0], sessions['/ab'][0]];
    const slowExec = await begin(A, slowSession);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let staged!: () => void;
    const isStaged = new Promise<void>((r) => (staged = r));
    // Exactly settleExecution's statements, with the transaction held open after its last one.
    const slow = g.sql.begin(async (tx) => {
      const lock = await lockSession(tx, SYSTEM, slowSession);
      const s = lock.session;
      const { result: e } = await commitEvent(lock, 'execution.settled', settledPayload(slowExec));
      await recordSettlement(tx, { sessionId: slowSession, executionId: slowExec, status: 'SUCCEEDED', directory: s.directory, settledAt: e.settledAt! });
      staged();
      await gate;
    });
    await isStaged;
    // Later settlements through both instances commit while the slow one is open, and are delivered.
    const laterIds = await Promise.all(others.map((s, i) => settle(i % 2 ? A : B, s)));
    await sub.waitFor((e) => e.length >= 3);
    // While the slow one is open, a marker settled behind the later ones: the stream and the poller,
    // each in cursor order, have everything positioned before it once they have the marker.
    const [meanwhile] = await beforeMarker([sub], A, sessions['/a/y'][0]);
    const marker = sub.events.at(-1)!.executionSettled.executionID;
    expect(meanwhile.map((e) => e.executionSettled.executionID).sort()).toEqual([...laterIds].sort());
    await expect.poll(() => polled.some((e) => e.node.executionID === marker), { timeout: 10_000 }).toBe(true);
    expect(new Set(polled.map((e) => e.node.executionID))).toEqual(new Set([...laterIds, marker]));
    release();
    await slow;
    await sub.waitFor((e) => e.length >= 5);
    await expect.poll(() => polled.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(5); // the poller has paged past it too
    polling = false;
    await poller;
    const expected = await log(start);
    expect(expected).toHaveLength(5);
    expect(expected.at(-2)!.executionId).toBe(marker);
    expect(expected.at(-1)!.executionId).toBe(slowExec); // committed last, so positioned last
    expect(expected.at(-1)!.settledAt.getTime()).toBeLessThan(expected[0].settledAt.getTime()); // a timestamp cursor would skip it
    const [got] = await beforeMarker([sub], A, sessions['/a/y'][0]);
    expectExactly(got, expected);
    expect(polled.map((e) => e.node.executionID)).toEqual(expected.map((r) => r.executionId));
    sub.unsubscribe();
  });

  it('a transaction that settles first but stages its log row last is delivered after the faster ones, and a reader past them still gets it', async () => {
    const start = (await log()).at(-1)?.pos ?? 0;
    const onB = B.gateway.settlements.subscribers;
    const sub = subscribe<Ev>(ws(B, g.admin), SUB, { after: start ? encodeCursor('settlement', start) : null });
    await onFeed(() => B.gateway.settlements.subscribers, onB + 1);
    const slowSession = sessions['/a/x'][0];
    const slowExec = await begin(A, slowSession);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const settledEarly = new Promise<void>((r) => (started = r));
    const slow = g.sql.begin(async (tx) => {
      const lock = await lockSession(tx, SYSTEM, slowSession);
      const s = lock.session;
      const { result: e } = await commitEvent(lock, 'execution.settled', settledPayload(slowExec));
      started();
      await gate; // slow work between the settling update and the log entry
      await recordSettlement(tx, { sessionId: slowSession, executionId: slowExec, status: 'SUCCEEDED', directory: s.directory, settledAt: e.settledAt! });
    });
    await settledEarly;
    const fast = await Promise.all([sessions['/a/y'][0], sessions['/b/z'][0]].map((s) => settle(A, s)));
    await sub.waitFor((e) => e.length >= 2);
    const seen = sub.events.at(-1)!.executionSettled.cursor;
    release();
    await slow;
    await sub.waitFor((e) => e.length >= 3);
    const expected = await log(start);
    expect(expected.at(-1)!.executionId).toBe(slowExec);
    expect(expected.at(-1)!.settledAt.getTime()).toBeLessThan(expected[0].settledAt.getTime()); // a timestamp cursor would skip it
    expect(expected.slice(0, 2).map((r) => r.executionId).sort()).toEqual(fast.sort());
    expectExactly(sub.events, expected);
    // A backfill reader that had already passed the fast ones still finds it.
    const d = await call(A, g.admin, `query($a: String) { settlements(after: $a) { edges { node { executionID } } } }`, { a: seen });
    expect(d.settlements.edges.map((e: any) => e.node.executionID)).toEqual([slowExec]);
    sub.unsubscribe();
  });
});

describe('two instances, one Postgres', () => {
  it('subscribers on both instances receive every event they may see, once and in order', async () => {
    const start = (await log()).at(-1)?.pos ?? 0;
    const readerA = await g.token('reader', '/a');
    const subs = {
      adminA: subscribe<Ev>(ws(A, g.admin), SUB),
      adminB: subscribe<Ev>(ws(B, g.admin), SUB),
      scopedA: subscribe<Ev>(ws(A, readerA), SUB),
      scopedB: subscribe<Ev>(ws(B, readerA), SUB),
      sessionB: subscribe<Ev>(ws(B, g.admin), SUB, { sessionID: sessions['/b/z'][0] }),
      scopedOtherSession: subscribe<Ev>(ws(A, readerA), SUB, { sessionID: sessions['/b/z'][0] }),
    };
    await onFeed(() => A.gateway.settlements.subscribers, 3);
    await onFeed(() => B.gateway.settlements.subscribers, 3);
    await settleMany(30, all(), [A, B]);
    const expected = await log(start);
    expect(expected).toHaveLength(30);
    // Sequencer passes of both instances: unique, contiguous positions.
    expect(expected.map((r) => r.pos)).toEqual(expected.map((_r, i) => start + 1 + i));
    // The positive signal that the streams are quiet: two markers settled after them, one under /a (the
    // scoped readers see it), then one in sessionB's session. Each stream is in cursor order, so once it
    // has the last marker it may see, it has everything before it (a duplicate, a row out of scope).
    // scopedOtherSession may see neither: it is on instance A's feed with adminA, which offers every row
    // to all of its streams in one pass, so a row it took would have been sent by the time adminA has
    // the last marker.
    await settle(A, sessions['/a/x'][0]);
    await settle(B, sessions['/b/z'][0]);
    const withMarkers = await log(start);
    expect(withMarkers).toHaveLength(32);
    const want = {
      adminA: withMarkers,
      adminB: withMarkers,
      scopedA: withMarkers.filter(under('/a')),
      scopedB: withMarkers.filter(under('/a')),
      sessionB: withMarkers.filter((r) => r.sessionId === sessions['/b/z'][0]),
      scopedOtherSession: [] as SettlementRow[],
    };
    for (const [k, s] of Object.entries(subs)) {
      const last = want[k as keyof typeof want].at(-1);
      if (last) await s.waitFor((e) => e.some((x) => x.executionSettled.executionID === last.executionId), 30_000);
    }
    for (const [k, s] of Object.entries(subs)) {
      expectExactly(s.events, want[k as keyof typeof want]);
      expect(s.errors).toEqual([]);
      s.unsubscribe();
    }
    expect(want.scopedA.length).toBeGreaterThan(0);
    expect(want.scopedA.every((r) => r.directory !== '/ab')).toBe(true); // /ab is not under /a
  });

  it('survives the listening connections being killed again and again while settlements commit', async () => {
    const start = (await log()).at(-1)?.pos ?? 0;
    const subs = [subscribe<Ev>(ws(A, g.admin), SUB), subscribe<Ev>(ws(B, g.admin), SUB)];
    await onFeed(() => A.gateway.settlements.subscribers, 1);
    await onFeed(() => B.gateway.settlements.subscribers, 1);
    const before = [A.gateway.bus.resyncs, B.gateway.bus.resyncs];
    let killing = true;
    let kills = 0;
    const killer = (async () => {
      while (killing) {
        const r = await g.sql`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND query ILIKE 'listen%' AND pid <> pg_backend_pid()`;
        kills += r.length;
        await new Promise((r) => setTimeout(r, 15));
      }
    })();
    await settleMany(40, all(), [A, B]);
    killing = false;
    await killer;
    expect(kills).toBeGreaterThan(2);
    // Both instances' LISTEN came back (postgres.js reconnects and calls onlisten again).
    // (postgres.js may also drop a re-subscription under this storm: then the bus notices its own pings
    // stopped coming back and subscribes anew on a fresh connection, within three ping periods.)
    await until('both instances to resync', () => A.gateway.bus.resyncs > before[0] && B.gateway.bus.resyncs > before[1], 15_000);
    expect(A.gateway.bus.resyncs).toBeGreaterThan(before[0]);
    expect(B.gateway.bus.resyncs).toBeGreaterThan(before[1]);
    const expected = await log(start);
    expect(expected).toHaveLength(40);
    try {
      for (const s of subs) await s.waitFor((e) => e.length >= 40, 30_000);
    } catch (e) {
      const state = (x: App) => ({ seq: x.gateway.sequencer.passes, hw: x.gateway.settlements.cursor, subs: x.gateway.settlements.subscribers, reads: x.gateway.settlements.reads, running: (x.gateway.settlements as any).running, resyncs: x.gateway.bus.resyncs });
      console.log('DEBUG', JSON.stringify({ A: state(A), B: state(B), got: subs.map((s) => s.events.length) }));
      throw e;
    }
    // And the connection is live again: a settlement after the storm arrives through NOTIFY.
    await settle(B, sessions['/a/y'][0]);
    const expected2 = await log(start);
    for (const s of subs) await s.waitFor((e) => e.length >= 41);
    const got = await beforeMarker(subs, A, sessions['/a/y'][0]);
    for (const [i, s] of subs.entries()) { expectExactly(got[i], expected2); s.unsubscribe(); }
  });

  it('one instance stopped mid-stream: clients close with 1001 and resume on the other with their last cursor', async () => {
    const C = await instance();
    const start = (await log()).at(-1)?.pos ?? 0;
    const closes: number[] = [];
    const readerA = await g.token('reader', '/a');
    const onC = [
      subscribe<Ev>(ws(C, g.admin, { on: { closed: (e: any) => closes.push(e.code) } }), SUB),
      subscribe<Ev>(ws(C, readerA, { on: { closed: (e: any) => closes.push(e.code) } }), SUB),
    ];
    const tokens = [g.admin, readerA];
    await onFeed(() => C.gateway.settlements.subscribers, 2);
    let going = true;
    const producer = (async () => {
      let n = 0;
      while (going || n < 30) { await settleMany(4, all(), [A, B]); n += 4; }
    })();
    await onC[0].waitFor((e) => e.length >= 8, 30_000);
    await C.stop();
    expect(closes).toEqual([1001, 1001]);
    // Resume on A and B with the last cursor each got.
    const [onA0, onB0] = [A.gateway.settlements.subscribers, B.gateway.settlements.subscribers];
    const resumed = onC.map((s, i) => subscribe<Ev>(ws(i ? B : A, tokens[i]), SUB, { after: s.events.at(-1)?.executionSettled.cursor ?? encodeCursor('settlement', start) }));
    await onFeed(() => A.gateway.settlements.subscribers, onA0 + 1);
    await onFeed(() => B.gateway.settlements.subscribers, onB0 + 1);
    going = false;
    await producer;
    const expected = await log(start);
    const want = [expected, expected.filter(under('/a'))];
    for (let i = 0; i < 2; i++) await resumed[i].waitFor((e) => onC[i].events.length + e.length >= want[i].length, 30_000);
    const got = await beforeMarker(resumed, B, sessions['/a/x'][0]); // visible to both tokens
    for (let i = 0; i < 2; i++) {
      expectExactly([...onC[i].events, ...got[i]], want[i]);
      resumed[i].unsubscribe();
    }
  });
});

describe('resume and backfill', () => {
  it('executionSettled(after) replays then goes live without gap or duplicate', async () => {
    const start = (await log()).at(-1)?.pos ?? 0;
    await settleMany(12, all(), [A]);
    const first = await log(start);
    const mid = first[4];
    const sub = subscribe<Ev>(ws(B, g.admin), SUB, { after: encodeCursor('settlement', mid.pos) });
    await sub.waitFor((e) => e.length >= 7);
    await settleMany(6, all(), [A, B]);
    await sub.waitFor((e) => e.length >= 13);
    const expected = await log(mid.pos);
    const [got] = await beforeMarker([sub], A, sessions['/a/y'][0]);
    expectExactly(got, expected);
    const markerCursor = sub.events.at(-1)!.executionSettled.cursor;
    sub.unsubscribe();
    // Resume at the very head (nothing to replay) and with a session filter.
    const onA = A.gateway.settlements.subscribers;
    const s2 = subscribe<Ev>(ws(A, g.admin), SUB, { after: markerCursor, sessionID: sessions['/a/y'][0] });
    await onFeed(() => A.gateway.settlements.subscribers, onA + 1); // live (nothing to replay: what it gets below is all it gets)
    await settleMany(3, [sessions['/a/y'][0], sessions['/b/z'][0]], [B]);
    await s2.waitFor((e) => e.length >= 2);
    const expected2 = (await log(pos(sub.events.at(-1)!))).filter((r) => r.sessionId === sessions['/a/y'][0]);
    const [got2] = await beforeMarker([s2], B, sessions['/a/y'][0]);
    expectExactly(got2, expected2);
    s2.unsubscribe();
  });

  it('a bad cursor or session ID is BAD_USER_INPUT, on the subscription and the query', async () => {
    const sub = subscribe<Ev>(ws(A, g.admin), SUB, { after: 'bm9wZQ' });
    await expect(sub.waitFor(() => false, 3000)).rejects.toThrow(/BAD_USER_INPUT/);
    const sub2 = subscribe<Ev>(ws(A, g.admin), SUB, { sessionID: 'nope' });
    await expect(sub2.waitFor(() => false, 3000)).rejects.toThrow(/BAD_USER_INPUT/);
    const r = await gql(A.url, g.admin, `{ settlements(after: "bm9wZQ") { edges { cursor } } }`);
    expect(r.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    const r2 = await gql(A.url, g.admin, `{ settlements(first: 1000) { edges { cursor } } }`);
    expect(r2.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('settlements(after, first, sessionID) pages through the log in commit order', async () => {
    const full = await log();
    const pageThrough = async (token: string, sessionID?: string) => {
      const out: { pos: number; executionID: string }[] = [];
      let after: string | null = null;
      for (let i = 0; i < 1000; i++) {
        const d: any = await call(i % 2 ? A : B, token, `query($a: String, $s: ID) { settlements(first: 7, after: $a, sessionID: $s) { edges { cursor node { executionID sessionID status settledAt cursor execution { id status } } } pageInfo { hasNextPage endCursor } } }`, { a: after, s: sessionID ?? null });
        for (const e of d.settlements.edges) {
          expect(e.cursor).toBe(e.node.cursor);
          expect(e.node.execution?.id).toBe(e.node.executionID);
          out.push({ pos: decodeCursor('settlement', e.cursor)!, executionID: e.node.executionID });
        }
        if (!d.settlements.pageInfo.hasNextPage) break;
        after = d.settlements.pageInfo.endCursor;
      }
      return out;
    };
    const toPairs = (rows: SettlementRow[]) => rows.map((r) => ({ pos: r.pos, executionID: r.executionId }));
    expect(full.length).toBeGreaterThan(50);
    expect(await pageThrough(g.admin)).toEqual(toPairs(full));
    const s = sessions['/b/z'][0];
    expect(await pageThrough(g.admin, s)).toEqual(toPairs(full.filter((r) => r.sessionId === s)));
    const scoped = await g.token('reader', '/b');
    expect(await pageThrough(scoped)).toEqual(toPairs(full.filter(under('/b'))));
    // Another directory's session is indistinguishable from a missing one: an empty page.
    expect(await pageThrough(scoped, sessions['/a/x'][0])).toEqual([]);
  });
});

describe('access', () => {
  it('connection_init without a valid token is refused', async () => {
    const codes: number[] = [];
    for (const token of ['gw_not_a_token', '']) {
      const c = createClient({ url: A.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true, connectionParams: token ? { authorization: `Bearer ${token}` } : {}, on: { closed: (e: any) => codes.push(e.code) } });
      clients.push(c);
      const s = subscribe<Ev>(c, SUB);
      await expect(s.waitFor(() => false, 3000)).rejects.toThrow(/ended/);
    }
    expect(codes).toEqual([4403, 4403]);
  });

  it('the host role may not subscribe to settlements (FORBIDDEN)', async () => {
    const s = subscribe<Ev>(ws(A, hostToken), SUB);
    await expect(s.waitFor(() => false, 3000)).rejects.toThrow(/FORBIDDEN/);
  });

  it('a token revoked while connected stops receiving events, on every instance', async () => {
    const reader = await g.token('reader');
    const [{ id: tokenID }] = await g.sql`SELECT id FROM tokens ORDER BY created_at DESC LIMIT 1`;
    const closes: number[] = [];
    const onA = subscribe<Ev>(ws(A, reader, { on: { closed: (e: any) => closes.push(e.code) } }), SUB);
    const onB = subscribe<Ev>(ws(B, reader, { on: { closed: (e: any) => closes.push(e.code) } }), SUB);
    const control = subscribe<Ev>(ws(B, g.admin), SUB);
    await onFeed(() => A.gateway.settlements.subscribers, 1);
    await onFeed(() => B.gateway.settlements.subscribers, 2);
    await settle(A, sessions['/a/x'][0]);
    await onA.waitFor((e) => e.length >= 1);
    await onB.waitFor((e) => e.length >= 1);
    expect(await revokeToken(g.sql, tokenID)).toBe(true);
    await until('both revoked sockets to close', () => closes.length >= 2);
    expect(closes).toEqual([4401, 4401]);
    await settle(B, sessions['/a/x'][0]);
    await control.waitFor((e) => e.length >= 2); // delivered after the revocation; the revoked sockets are closed (above)
    expect(onA.events).toHaveLength(1);
    expect(onB.events).toHaveLength(1);
    // And a new connection with it is refused.
    const again = subscribe<Ev>(ws(A, reader), SUB);
    await expect(again.waitFor(() => false, 3000)).rejects.toThrow(/ended/);
    control.unsubscribe();
    expect(A.gateway.revocations.watched + B.gateway.revocations.watched).toBeLessThanOrEqual(2); // admin only
  });
});

describe('resources', () => {
  it('unsubscribing from a quiet stream frees its place on the feed at once (no leak)', async () => {
    const c = ws(A, g.admin);
    const base = A.gateway.settlements.subscribers;
    const quiet = Array.from({ length: 5 }, () => subscribe<Ev>(c, SUB, { sessionID: sessions['/ab'][0] }));
    await until('five subscribers on the feed', () => A.gateway.settlements.subscribers >= base + 5);
    expect(A.gateway.settlements.subscribers).toBe(base + 5);
    quiet.slice(0, 3).forEach((s) => s.unsubscribe());
    await until('three subscribers to leave the feed', () => A.gateway.settlements.subscribers <= base + 2);
    expect(A.gateway.settlements.subscribers).toBe(base + 2);
    await c.dispose(); // closing the socket ends the rest
    await until('the socket\'s subscribers to leave the feed', () => A.gateway.settlements.subscribers <= base);
    expect(A.gateway.settlements.subscribers).toBe(base);
  });

  it('a subscriber that falls behind more than its queue holds is caught up from the log, in order', async () => {
    const start = (await log()).at(-1)?.pos ?? 0;
    const base = A.gateway.settlements.subscribers;
    const it = resumable<SettlementRow>({
      feed: A.gateway.settlements,
      after: null,
      cursorOf: (r) => r.pos,
      replay: (after, limit) => readSettlements(g.sql, SYSTEM, { after, limit }),
      accept: () => true,
      maxQueue: 3,
      replayBatch: 4,
    });
    const first = it.next(); // registers on the feed
    await onFeed(() => A.gateway.settlements.subscribers, base + 1);
    await settleMany(11, all(), [A, B]);
    const head = (await log(start)).at(-1)!.pos;
    // The feed has handed out all eleven (the queue of 3 overflowed) before the reader takes any.
    for (const deadline = Date.now() + 10_000; A.gateway.settlements.cursor < head;) {
      if (Date.now() > deadline) throw new Error(`the feed is at ${A.gateway.settlements.cursor}, not ${head}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const got: number[] = [(await first).value.pos];
    while (got.length < 11) got.push((await it.next()).value.pos);
    await it.return();
    expect(got).toEqual((await log(start)).map((r) => r.pos));
  });

  it('a live stream waiting with nothing queued gets the next row, ends on return(), fails on abort', async () => {
    const start = (await log()).at(-1)?.pos ?? 0;
    let abort: ((err: Error) => void) | null = null;
    const open = (abortable: boolean) => resumable<SettlementRow>({
      feed: A.gateway.settlements,
      after: start,
      cursorOf: (r) => r.pos,
      replay: (after, limit) => readSettlements(g.sql, SYSTEM, { after, limit }),
      accept: () => true,
      abortOn: abortable ? (fn) => { abort = fn; return () => { abort = null; }; } : undefined,
    });
    const base = A.gateway.settlements.subscribers;
    const ended = open(false);
    const failed = open(true);
    const firsts = [ended.next(), failed.next()]; // each registers on the feed, replays (nothing), then waits
    await onFeed(() => A.gateway.settlements.subscribers, base + 2);
    await settleMany(1, all(), [A]);
    const [a1, b1] = await Promise.all(firsts);
    // Both are live now, with nothing queued: these calls wait for the feed's next row.
    const seconds = [ended.next(), failed.next()];
    await settleMany(1, all(), [B]);
    const [a2, b2] = await Promise.all(seconds);
    expect([a1.value.pos, a2.value.pos]).toEqual((await log(start)).map((r) => r.pos));
    expect([b1.value.pos, b2.value.pos]).toEqual([a1.value.pos, a2.value.pos]);
    // Waiting again: return() ends the wait with done and frees the place on the feed at once.
    const third = ended.next();
    await ended.return();
    expect(await third).toEqual({ done: true, value: undefined });
    expect(A.gateway.settlements.subscribers).toBe(base + 1);
    // Waiting again: an abort fails the wait with its error.
    const thirdFailed = failed.next();
    abort!(new Error('token revoked'));
    await expect(thirdFailed).rejects.toThrow('token revoked');
    expect(A.gateway.settlements.subscribers).toBe(base);
    expect(await failed.next()).toEqual({ done: true, value: undefined });
  });
});

describe('sessionEvents', () => {
  it('streams a session journal with resume, across instances', async () => {
    const s = await createSession('/a/events');
    const q = `subscription($s: ID!, $a: String) { sessionEvents(sessionID: $s, after: $a) { cursor sequence type executionID } }`;
    const live = subscribe<any>(ws(B, g.admin), q, { s });
    await onFeed(() => B.gateway.journal(s).subscribers, 1);
    await settle(A, s);
    await settle(A, s);
    await live.waitFor((e) => e.length >= 4);
    expect(live.events.map((e) => e.sessionEvents.type)).toEqual(['execution.started', 'execution.settled', 'execution.started', 'execution.settled']);
    const resumed = subscribe<any>(ws(A, g.admin), q, { s, a: live.events[1].sessionEvents.cursor });
    await resumed.waitFor((e) => e.length >= 2);
    expect(resumed.events.map((e) => e.sessionEvents.sequence)).toEqual(live.events.slice(2).map((e) => e.sessionEvents.sequence));
    const outside = subscribe<any>(ws(A, await g.token('reader', '/b')), q, { s });
    await expect(outside.waitFor(() => false, 3000)).rejects.toThrow(/NOT_FOUND|not found/);
    live.unsubscribe();
    resumed.unsubscribe();
  });
});
