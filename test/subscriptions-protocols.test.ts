import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse';
import type { Client as WsClient } from 'graphql-ws';
import { startTestGateway, type TestGateway } from './harness.js';
import { SYSTEM } from '../domain/access.js';
import { createSession } from '../domain/sessions.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { appendMessage } from '../domain/messages.js';
import { issueCommand } from '../domain/commands.js';
import { readSettlements, sequenceSettlements } from '../domain/settlements.js';
import { readJournal } from '../domain/journal.js';
import { encodeCursor } from '../resolvers/cursors.js';
import { noticeSql } from '../domain/notices.js';

/**
 * Every subscription field over both transports the gateway serves on /graphql, each read by the
 * protocol's own client: GraphQL over Server-Sent Events (Yoga, `accept: text/event-stream`) with
 * graphql-sse's client in its distinct-connections mode, and graphql-transport-ws with graphql-ws's
 * client. Both get the same events, in the same order, nothing lost and nothing twice, with and without
 * `after` (hostCommands has none: its pending commands come first). Over SSE each `next` event
 * carries one execution result, never an array of them.
 */

let g: TestGateway;
let hostToken: string;
let hostID: string;
const sse: SseClient[] = [];

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  hostToken = await g.token('host');
  const r = await g.gql(`mutation { registerHost(input: { name: "protocols", leaseMs: 600000 }) { ... on Host { id } } }`, {}, hostToken);
  hostID = r.data.registerHost.id;
});

/** A session of its own for each test, so each runs alone too. */
async function newSession(): Promise<string> {
  return (await createSession(g.sql, SYSTEM, { title: 'protocols', directory: '/p' })).id;
}

afterAll(async () => {
  for (const c of sse) c.dispose();
  await g?.stop();
});

function sseClient(token: string): SseClient {
  const c = createSseClient({ url: g.url, headers: { authorization: `Bearer ${token}` }, retryAttempts: 0 });
  sse.push(c);
  return c;
}

/** What a client's sink received: the results in order, and whether it ended (with an error). */
class Received {
  results: unknown[] = [];
  ended: unknown = null;
  private waiters: (() => void)[] = [];
  readonly sink = {
    next: (r: unknown) => { this.results.push(r); this.wake(); },
    error: (e: unknown) => { this.ended = e ?? 'error'; this.wake(); },
    complete: () => { this.ended = 'complete'; this.wake(); },
  };
  private wake() { for (const w of this.waiters.splice(0)) w(); }
  /** Resolves once `n` results arrived; fails when the stream ends first or `ms` pass. */
  async count(n: number, ms = 15_000): Promise<unknown[]> {
    const deadline = Date.now() + ms;
    while (this.results.length < n) {
      if (this.ended) throw new Error(`stream ended after ${this.results.length} results: ${JSON.stringify(this.ended)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out with ${this.results.length} of ${n} results`);
      await new Promise<void>((r) => { this.waiters.push(r); setTimeout(r, left).unref(); });
    }
    return this.results;
  }
}

/** One subscription over both transports at once. */
function both(token: string, query: string, variables: Record<string, unknown>) {
  const overSse = new Received();
  const overWs = new Received();
  const ws: WsClient = g.ws(token);
  const stop = [sseClient(token).subscribe({ query, variables }, overSse.sink), ws.subscribe({ query, variables }, overWs.sink)];
  return {
    overSse,
    overWs,
    /** Both have `n` results; they are equal and in the same order. */
    async count(n: number) {
      const [a, b] = await Promise.all([overSse.count(n), overWs.count(n)]);
      expect(a).toEqual(b);
      return a as { data: Record<string, any> }[];
    },
    dispose() { for (const s of stop) s(); },
  };
}

/** One execution of the session: begun, a message, settled (a settlement and four journal events). */
async function round(sessionID: string): Promise<void> {
  const e = await beginExecution(g.sql, SYSTEM, { sessionID, hostID, trigger: 'PROMPT' });
  await appendMessage(g.sql, SYSTEM, { sessionID, executionID: e.id, role: 'ASSISTANT', origin: 'MODEL', parts: [{ type: 'TEXT', text: `done ${e.id}` }] });
  await settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
}

async function settlementsAfter(sessionID: string, after: number) {
  while ((await sequenceSettlements(g.sql, { wait: true })).more);
  return readSettlements(g.sql, SYSTEM, { after, limit: 10_000, sessionID });
}

/**
 * `n` settlements committed at once (one transaction, positioned by one pass): the feed reads them in
 * one go and a subscriber's stream has them all at hand together. Their executions are made up (the
 * settlement log names them only), so `execution` reads null.
 */
const madeUp: string[] = [];
async function burst(sessionID: string, n: number): Promise<void> {
  const tag = Math.random().toString(36).slice(2, 8);
  madeUp.push(`exe_${tag}_`);
  await g.sql.begin(async (tx) => {
    await tx`
      INSERT INTO settlements (session_id, execution_id, status, directory, settled_at)
      SELECT ${sessionID}, ${`exe_${tag}_`} || i, 'SUCCEEDED', '/p', now() FROM generate_series(1, ${n}::int) i`;
    await tx`SELECT ${noticeSql(tx, { k: 'q' })}`;
  });
}

/** Resolves once the feed has `n` live subscribers (a subscription without `after` misses what commits before it is on the feed). */
async function subscribers(count: () => number, n: number) {
  await expect.poll(count, { timeout: 10_000, interval: 10 }).toBe(n);
}

const SETTLED = `subscription S($sessionID: ID, $after: String) {
  executionSettled(sessionID: $sessionID, after: $after) { cursor executionID sessionID status execution { id sequence status } } }`;
const EVENTS = `subscription E($sessionID: ID!, $after: String) {
  sessionEvents(sessionID: $sessionID, after: $after) { cursor sequence type executionID messageID message { id revision } } }`;
const COMMANDS = `subscription C($hostID: ID!) { hostCommands(hostID: $hostID) { id kind reason sessionID } }`;

describe('subscriptions over SSE and WebSocket', () => {
  it('executionSettled: with `after`, the replay then live; without, live from its start; bursts too', async () => {
    const sessionID = await newSession();
    for (let i = 0; i < 3; i++) await round(sessionID);
    const before = await settlementsAfter(sessionID, 0);
    const from = before[0].pos; // the replay: every settlement after the first
    const replaying = both(g.admin, SETTLED, { sessionID, after: encodeCursor('settlement', from) });
    await replaying.count(before.length - 1);
    const live = both(g.admin, SETTLED, { sessionID });
    // Both subscriptions of both transports are on the feed (a replaying stream joins it before its replay).
    await subscribers(() => g.app.gateway.settlements.subscribers, 4);
    for (let i = 0; i < 3; i++) await round(sessionID);
    await burst(sessionID, 40);
    await round(sessionID);
    const log = await settlementsAfter(sessionID, 0);
    const expected = (rows: typeof log) => rows.map((r) => ({ data: { executionSettled: {
      cursor: encodeCursor('settlement', r.pos), executionID: r.executionId, sessionID, status: 'SUCCEEDED',
      execution: madeUp.some((p) => r.executionId.startsWith(p)) ? null : { id: r.executionId, sequence: expect.any(Number), status: 'SUCCEEDED' },
    } } }));
    expect(await replaying.count(log.length - 1)).toEqual(expected(log.filter((r) => r.pos > from)));
    expect(await live.count(44)).toEqual(expected(log.slice(-44)));
    // Nothing more than that arrives (an extra result would be a duplicate): one more settlement is the next result of each.
    await round(sessionID);
    const [last] = await settlementsAfter(sessionID, log.at(-1)!.pos);
    expect((await replaying.count(log.length))[log.length - 1]).toEqual(expected([last])[0]);
    expect((await live.count(45))[44]).toEqual(expected([last])[0]);
    replaying.dispose();
    live.dispose();
  });

  it('sessionEvents: with `after`, the replay then live; without, live from its start', async () => {
    const sessionID = await newSession();
    for (let i = 0; i < 2; i++) await round(sessionID);
    const journal = await readJournal(g.sql, sessionID, 0, 10_000);
    const from = journal[2].seq;
    const replaying = both(g.admin, EVENTS, { sessionID, after: encodeCursor('journal', from) });
    await replaying.count(journal.length - 3);
    const live = both(g.admin, EVENTS, { sessionID });
    await subscribers(() => g.app.gateway.journal(sessionID).subscribers, 4);
    for (let i = 0; i < 3; i++) await round(sessionID);
    const all = await readJournal(g.sql, sessionID, 0, 10_000);
    const added = all.length - journal.length;
    expect(added).toBeGreaterThanOrEqual(9);
    const expected = (events: typeof all) => events.map((e) => ({ data: { sessionEvents: {
      cursor: encodeCursor('journal', e.seq), sequence: e.seq, type: e.type,
      executionID: e.payload?.executionID ?? null, messageID: e.payload?.messageID ?? null,
      message: e.payload?.messageID ? { id: e.payload.messageID, revision: expect.any(Number) } : null,
    } } }));
    expect(await replaying.count(all.length - 3)).toEqual(expected(all.filter((e) => e.seq > from)));
    expect(await live.count(added)).toEqual(expected(all.slice(-added)));
    replaying.dispose();
    live.dispose();
  });

  it('hostCommands: the pending commands, then live ones', async () => {
    const sessionID = await newSession();
    const issue = () => g.sql.begin((tx) => issueCommand(tx, { hostId: hostID, sessionId: sessionID, kind: 'CLOSE_ADMISSIONS' }));
    const pending = [await issue(), await issue(), await issue()];
    const sub = both(hostToken, COMMANDS, { hostID });
    const expected = (ids: string[]) => ids.map((id) => ({ data: { hostCommands: { id, kind: 'CLOSE_ADMISSIONS', reason: 'SEAL', sessionID } } }));
    expect(await sub.count(3)).toEqual(expected(pending.map((c) => c.id)));
    const later = [await issue(), await issue()];
    expect(await sub.count(5)).toEqual(expected([...pending, ...later].map((c) => c.id)));
    sub.dispose();
  });

  /** A raw SSE stream of one subscription: its `next` events' payloads, as parsed from the wire. */
  async function rawSse(query: string, variables: Record<string, unknown>) {
    const ctrl = new AbortController();
    const res = await fetch(g.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${g.admin}` },
      body: JSON.stringify({ query, variables }),
      signal: ctrl.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const nextEvents = () => text.split('\n\n').filter((m) => m.split('\n').includes('event: next'));
    return {
      /** Reads until `n` next events arrived; their payloads (each checked to be one result, not an array). */
      async read(n: number): Promise<any[]> {
        for (;;) {
          const payloads = nextEvents().map((m) => JSON.parse(m.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('\n')));
          for (const p of payloads) expect(Array.isArray(p), JSON.stringify(p).slice(0, 200)).toBe(false);
          if (payloads.length >= n) return payloads;
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended after ${payloads.length} events`);
          text += decoder.decode(value, { stream: true });
        }
      },
      close() { ctrl.abort(); },
    };
  }

  it('over SSE, every `next` event carries one execution result, also for events at hand together (a replay, a burst)', async () => {
    const sessionID = await newSession();
    for (let i = 0; i < 3; i++) await round(sessionID);
    const journal = await readJournal(g.sql, sessionID, 0, 10_000);
    const events = await rawSse(EVENTS, { sessionID, after: encodeCursor('journal', 0) });
    expect((await events.read(journal.length)).map((p) => p.data.sessionEvents.sequence)).toEqual(journal.map((e) => e.seq));
    events.close();

    const settled = await rawSse(SETTLED, { sessionID, after: encodeCursor('settlement', 0) });
    await settled.read(3); // the replay: the stream is on the feed by now
    await burst(sessionID, 40);
    const log = await settlementsAfter(sessionID, 0);
    expect(log).toHaveLength(43);
    expect((await settled.read(log.length)).map((p) => p.data.executionSettled.executionID)).toEqual(log.map((r) => r.executionId));
    settled.close();
  });
});
