import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestGateway, type TestGateway } from './harness.js';
import { readSettlements, sequenceSettlements, type SettlementRow } from '../domain/settlements.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { createSession } from '../domain/sessions.js';
import { registerHost } from '../domain/hosts.js';
import { SYSTEM } from '../domain/access.js';
import { decodeCursor } from '../resolvers/cursors.js';
import { sharedStats } from '../subscriptions/shared.js';
import { noticeSql } from '../domain/notices.js';

/**
 * The shared fan-out path of one instance (subscriptions/shared.ts, subscriptions/delivery.ts, feed.ts):
 * many subscribers of one feed, in groups that share an executed result (same
 * document, variables, role and scope) and groups that must not (other scopes, another selection
 * set, another session). Raw `ws` clients, so the frames on the wire are checked as sent.
 */

let g: TestGateway;
let hostID: string;
const dirs = ['/a/x', '/a/y', '/b/z', '/ab'];
const sessionsOf: Record<string, string> = {};

const WIDE = 'subscription W($after: String, $sessionID: ID) { executionSettled(after: $after, sessionID: $sessionID) { cursor executionID sessionID status } }';
const NARROW = 'subscription N { executionSettled { cursor executionID } }';

type Frame = { id: string; type: string; payload?: any };

/** One graphql-transport-ws connection with one subscription; every frame it receives is kept as parsed. */
class RawSubscriber {
  frames: Frame[] = [];
  raw: string[] = [];
  private ws!: WebSocket;
  private waiters: (() => void)[] = [];

  constructor(readonly id: string, private token: string, private query: string, private variables: Record<string, unknown> = {}) {}

  open(url: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = (this.ws = new WebSocket(url, 'graphql-transport-ws'));
      ws.on('error', reject);
      ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${this.token}` } })));
      ws.on('message', (data) => {
        const s = data.toString();
        const m = JSON.parse(s) as Frame;
        if (m.type === 'connection_ack') {
          ws.send(JSON.stringify({ id: this.id, type: 'subscribe', payload: { query: this.query, variables: this.variables } }));
          resolve();
          return;
        }
        if (m.type === 'ping') { ws.send('{"type":"pong"}'); return; }
        this.frames.push(m);
        this.raw.push(s);
        for (const w of this.waiters.splice(0)) w();
      });
    });
  }

  /** Resolves once `done` holds for the frames received (checked at every frame). */
  async until(done: (f: Frame[]) => boolean, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done(this.frames)) {
      if (Date.now() > deadline) throw new Error(`subscriber ${this.id}: timed out with ${this.frames.length} frames`);
      await new Promise<void>((r) => { this.waiters.push(r); setTimeout(r, 250).unref(); });
    }
  }

  close() { this.ws.terminate(); }
}

async function settle(sessionID: string): Promise<string> {
  const e = await beginExecution(g.sql, SYSTEM, { sessionID, hostID, trigger: 'PROMPT' });
  await settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
  return e.id;
}

async function logAfter(after: number): Promise<SettlementRow[]> {
  while ((await sequenceSettlements(g.sql, { wait: true })).more);
  return readSettlements(g.sql, SYSTEM, { after, limit: 100_000 });
}

const under = (prefix: string) => (r: SettlementRow) => r.directory === prefix || r.directory.startsWith(prefix + '/');
const pos = (f: Frame) => decodeCursor('settlement', f.payload.data.executionSettled.cursor)!;

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  hostID = (await registerHost(g.sql, SYSTEM, { name: 'fanout-host', leaseMs: 600_000 })).id;
  for (const d of dirs) sessionsOf[d] = (await createSession(g.sql, SYSTEM, { title: d, directory: d })).id;
});

afterAll(async () => {
  await g?.stop();
});

describe('fan-out of one instance', () => {
  it('many subscribers with different scopes, selections and sessions each get exactly their events, in order, framed as graphql-ws frames them', async () => {
    const start = (await logAfter(0)).at(-1)?.pos ?? 0;
    const readerA = await g.token('reader', '/a');
    const readerB = await g.token('reader', '/b');
    const subs: { s: RawSubscriber; want: (r: SettlementRow) => boolean; wide: boolean }[] = [];
    const add = (token: string, query: string, variables: Record<string, unknown>, want: (r: SettlementRow) => boolean) => {
      const s = new RawSubscriber(`sub-${subs.length}-${Math.random().toString(36).slice(2, 8)}`, token, query, variables);
      subs.push({ s, want, wide: query === WIDE });
    };
    // Groups that share a result: 12 admins (wide), 12 readers of /a (wide), 8 readers of /b (wide),
    // 8 admins (narrow selection); groups of one variable each: admins following one session.
    for (let i = 0; i < 12; i++) add(g.admin, WIDE, {}, () => true);
    for (let i = 0; i < 12; i++) add(readerA, WIDE, {}, under('/a'));
    for (let i = 0; i < 8; i++) add(readerB, WIDE, {}, under('/b'));
    for (let i = 0; i < 8; i++) add(g.admin, NARROW, {}, () => true);
    for (const d of dirs) add(g.admin, WIDE, { sessionID: sessionsOf[d] }, (r) => r.sessionId === sessionsOf[d]);
    add(readerA, WIDE, { sessionID: sessionsOf['/b/z'] }, () => false); // may not see that session at all
    await Promise.all(subs.map(({ s }) => s.open(g.wsUrl)));
    // Every subscription is on the feed before anything settles (the feed counts its live subscribers).
    for (const deadline = Date.now() + 10_000; g.app.gateway.settlements.subscribers < subs.length;) {
      if (Date.now() > deadline) throw new Error('subscriptions did not register');
      await new Promise((r) => setTimeout(r, 20));
    }
    const reused0 = sharedStats.reused;

    // 40 settlements, four sessions in parallel, then one more per directory as the last of each:
    // every subscriber's last expected event comes after everything else it could receive.
    await Promise.all(dirs.map(async (d) => { for (let i = 0; i < 10; i++) await settle(sessionsOf[d]); }));
    for (const d of dirs) await settle(sessionsOf[d]);
    const log = await logAfter(start);
    expect(log).toHaveLength(44);

    const expected = subs.map(({ want }) => log.filter(want));
    const lastOf = (i: number) => expected[i].at(-1)?.pos;
    // The subscriber that may see nothing: every other one has had all of its events by the time it is
    // checked, and it shares the instance's feed with them, so anything it were sent would be there too.
    await Promise.all(subs.map(({ s }, i) => (lastOf(i) === undefined ? Promise.resolve() : s.until((f) => f.length > 0 && pos(f.at(-1)!) >= lastOf(i)!))));

    subs.forEach(({ s, wide }, i) => {
      expect(s.frames.every((f) => f.type === 'next' && f.id === s.id)).toBe(true);
      expect(s.frames.map((f) => [pos(f), f.payload.data.executionSettled.executionID])).toEqual(expected[i].map((r) => [r.pos, r.executionId]));
      for (const [k, f] of s.frames.entries()) {
        const r = expected[i][k];
        // Exactly the frame graphql-ws would have built for this subscription: its id, its selection.
        expect(JSON.parse(s.raw[k])).toEqual({
          id: s.id, type: 'next',
          payload: { data: { executionSettled: wide ? { cursor: f.payload.data.executionSettled.cursor, executionID: r.executionId, sessionID: r.sessionId, status: 'SUCCEEDED' } : { cursor: f.payload.data.executionSettled.cursor, executionID: r.executionId } } },
        });
      }
    });
    // The groups did share: each event was executed once per group (same document, variables,
    // role and scope), and every other member of the group took that result.
    const groups = new Map<string, number[]>();
    subs.forEach(({ s }, i) => { const k = JSON.stringify([(s as any).token, (s as any).query, (s as any).variables]); groups.set(k, [...(groups.get(k) ?? []), i]); });
    const shared = [...groups.values()].reduce((a, members) => a + (members.length - 1) * expected[members[0]].length, 0);
    expect(shared).toBe(11 * 44 + 11 * 22 + 7 * 11 + 7 * 44);
    expect(sharedStats.reused - reused0).toBe(shared);
    for (const { s } of subs) s.close();
  });

  it('a burst larger than one read of the log (2,500 at once) reaches every subscriber whole and in order, read ahead and handed out in turns', async () => {
    const start = (await logAfter(0)).at(-1)?.pos ?? 0;
    const readerA = await g.token('reader', '/a');
    const subs = [
      ...Array.from({ length: 20 }, (_, i) => ({ s: new RawSubscriber(`admin-${i}`, g.admin, WIDE), want: (_r: SettlementRow) => true })),
      ...Array.from({ length: 10 }, (_, i) => ({ s: new RawSubscriber(`reader-${i}`, readerA, WIDE), want: under('/a') })),
    ];
    await Promise.all(subs.map(({ s }) => s.open(g.wsUrl)));
    for (const deadline = Date.now() + 10_000; g.app.gateway.settlements.subscribers < subs.length;) {
      if (Date.now() > deadline) throw new Error('subscriptions did not register');
      await new Promise((r) => setTimeout(r, 20));
    }
    const [sa, sb] = [sessionsOf['/a/x'], sessionsOf['/b/z']];
    const burst = (tag: string) => g.sql.begin(async (tx) => {
      await tx`
        INSERT INTO settlements (session_id, execution_id, status, directory, settled_at)
        SELECT CASE WHEN i % 3 = 0 THEN ${sb} ELSE ${sa} END, ${`exe_${tag}_`} || i, 'SUCCEEDED', CASE WHEN i % 3 = 0 THEN '/b/z' ELSE '/a/x' END, now()
        FROM generate_series(1, 2500) i`;
      await tx`SELECT ${noticeSql(tx, { k: 'q' })}`;
    });
    const delivered = async (log: SettlementRow[]) => {
      await Promise.all(subs.map(({ s, want }) => {
        const last = log.filter(want).at(-1)!.pos;
        return s.until((f) => f.length > 0 && pos(f.at(-1)!) >= last);
      }));
      for (const { s, want } of subs) {
        expect(s.frames.map((f) => [f.id, pos(f), f.payload.data.executionSettled.executionID])).toEqual(log.filter(want).map((r) => [s.id, r.pos, r.executionId]));
      }
    };
    const reads0 = g.app.gateway.settlements.reads;
    // One transaction stages them all; one pass of another connection positions them (this instance's
    // sequencer stopped): its head notice cannot carry 2,500 rows, so the feed reads 2,500 new rows.
    await g.app.gateway.sequencer.stop();
    await burst('read');
    const log = await logAfter(start);
    g.app.gateway.sequencer.start();
    expect(log).toHaveLength(2500);
    await delivered(log);
    // Read in full batches (1,000 rows) and a last partial one.
    expect(g.app.gateway.settlements.reads - reads0).toBeGreaterThanOrEqual(3);
    // The same burst positioned by this instance's own sequencer: handed out from the pass's answer
    // (or read, when the head notice comes first), whole and in order all the same.
    await burst('given');
    await g.app.gateway.sequencer.caughtUp();
    const all = await readSettlements(g.sql, SYSTEM, { after: start, limit: 100_000 });
    expect(all).toHaveLength(5000);
    await delivered(all);
    for (const { s } of subs) s.close();
  });
});
