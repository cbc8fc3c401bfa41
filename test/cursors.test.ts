import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { registerHost } from './fixtures.js';
import { SYSTEM } from '../domain/access.js';
import { createSession } from '../domain/sessions.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { BadCursorError, decodeCursor, encodeCursor } from '../resolvers/cursors.js';

/**
 * The one cursor codec (resolvers/cursors.ts): every cursor the API hands out is versioned and
 * opaque, round-trips through the list it came from, and anything else given as `after` (garbage,
 * another list's cursor, a version this gateway does not know) is a BAD_USER_INPUT error, on
 * connections, the settlement log and both resumable subscriptions alike.
 */

const b64 = (s: string) => Buffer.from(s).toString('base64url');

describe('cursor codec', () => {
  it('round-trips every kind, is versioned, and still reads the cursors issued before versioning', () => {
    expect(decodeCursor('message', encodeCursor('message', 42))).toBe(42);
    expect(decodeCursor('session', encodeCursor('session', 'ses_abc'))).toBe('ses_abc');
    expect(decodeCursor('journal', encodeCursor('journal', 0))).toBe(0);
    expect(Buffer.from(encodeCursor('settlement', 7), 'base64url').toString()).toBe('v1:settlement:7');
    // Held by clients from before: `<kind>:<key>`.
    expect(decodeCursor('settlement', b64('settlement:7'))).toBe(7);
    expect(decodeCursor('session', b64('session:ses_abc'))).toBe('ses_abc');
    expect(decodeCursor('journal', null)).toBeNull();
    expect(decodeCursor('journal', undefined)).toBeNull();
  });

  it('refuses what is not a cursor of the list with a typed error', () => {
    const bad: [Parameters<typeof decodeCursor>[0], string][] = [
      ['message', encodeCursor('execution', 3)], // another list's
      ['execution', b64('v1:execution:x')], // not a number
      ['execution', b64('v1:execution:1234567890123456')], // too long to be a position
      ['execution', b64('v1:execution:-1')],
      ['session', b64('v1:session:')], // empty key
      ['session', b64('v2:session:ses_a')], // a version this gateway does not know
      ['session', b64('nope')],
      ['journal', ''],
      ['journal', 'not*base64'],
      ['journal', 'x'.repeat(2000)],
    ];
    for (const [kind, cursor] of bad) {
      let err: unknown;
      try { decodeCursor(kind, cursor); } catch (e) { err = e; }
      expect(err, `${kind} ${cursor}`).toBeInstanceOf(BadCursorError);
      expect((err as BadCursorError).extensions.code).toBe('BAD_USER_INPUT');
      expect((err as BadCursorError).kind).toBe(kind);
    }
  });
});

describe('cursors through the API', () => {
  let g: TestGateway;
  let sessionID: string;
  beforeAll(async () => {
    g = await startTestGateway({ sweepIntervalMs: 0 });
    const { hostID } = await registerHost(g);
    const s = await createSession(g.sql, SYSTEM, { directory: '/cursors', title: 'c' });
    sessionID = s.id;
    for (let i = 0; i < 3; i++) {
      const e = await beginExecution(g.sql, SYSTEM, { sessionID, hostID, trigger: 'PROMPT' });
      await settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
    }
  });
  afterAll(async () => { await g?.stop(); });

  it('pages follow their cursors, and a cursor of another list or a made-up one is BAD_USER_INPUT', async () => {
    const page = async (after: string | null) => g.gql(`query($id: ID!, $after: String) { session(id: $id) {
      executions(first: 2, after: $after) { pageInfo { hasNextPage endCursor } edges { cursor node { sequence } } } } }`, { id: sessionID, after });
    const p1 = await page(null);
    expect(p1.data.session.executions.edges.map((e: any) => e.node.sequence)).toEqual([3, 2]);
    const p2 = await page(p1.data.session.executions.pageInfo.endCursor);
    expect(p2.data.session.executions.edges.map((e: any) => e.node.sequence)).toEqual([1]);
    expect(p2.data.session.executions.pageInfo.hasNextPage).toBe(false);
    // Legacy (unversioned) cursors still page the same way.
    const legacy = await page(b64('execution:2'));
    expect(legacy.data.session.executions.edges.map((e: any) => e.node.sequence)).toEqual([1]);

    const sessionCursor = (await g.gql(`{ sessions(first: 1) { pageInfo { endCursor } } }`)).data.sessions.pageInfo.endCursor;
    for (const after of [sessionCursor, 'garbage', b64('v9:execution:1')]) {
      const r = await page(after);
      expect(r.errors?.[0]?.extensions?.code, after).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.message).toBe('after is not a cursor of this list.');
    }
  });

  it('the settlement log and the subscriptions refuse a cursor that is not theirs with their own message', async () => {
    const journal = (await g.gql(`query($id: ID!) { session(id: $id) { eventsCursor } }`, { id: sessionID })).data.session.eventsCursor;
    const settlements = await g.gql(`query($after: String) { settlements(after: $after) { edges { cursor } } }`, { after: journal });
    expect(settlements.errors?.[0]).toMatchObject({ message: 'after is not a settlement cursor.', extensions: { code: 'BAD_USER_INPUT' } });
    const all = await g.gql(`{ settlements(first: 10) { edges { cursor node { executionID } } } }`);
    expect(all.errors).toBeUndefined();
    const settlementCursor = all.data.settlements.edges[0].cursor;

    const events = subscribe(g.ws(), `subscription($id: ID!, $after: String) { sessionEvents(sessionID: $id, after: $after) { sequence } }`,
      { id: sessionID, after: settlementCursor });
    await expect(events.waitFor(() => false)).rejects.toThrow('after is not a session event cursor.');
    expect(JSON.stringify(events.errors)).toContain('BAD_USER_INPUT');

    const settled = subscribe(g.ws(), `subscription($after: String) { executionSettled(after: $after) { cursor } }`, { after: journal });
    await expect(settled.waitFor(() => false)).rejects.toThrow('after is not a settlement cursor.');
    expect(JSON.stringify(settled.errors)).toContain('BAD_USER_INPUT');

    // And each resumes from its own cursor: the journal from the start replays every event in order.
    const replay = subscribe<any>(g.ws(), `subscription($id: ID!, $after: String) { sessionEvents(sessionID: $id, after: $after) { sequence } }`,
      { id: sessionID, after: encodeCursor('journal', 0) });
    await replay.waitFor((evs: any[]) => evs.length >= 6);
    expect(replay.events.slice(0, 6).map((e: any) => e.sessionEvents.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    replay.unsubscribe();
  });
});
