import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { onFeed, startTestGateway, subscribe, unsubscribeAll, type TestGateway } from './harness.js';
import { begin, createSession, ok, registerHost, settle } from './fixtures.js';

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterEach(unsubscribeAll);
afterAll(async () => { await g?.stop(); });

describe('executionSettled reads nested objects as they are at each event', () => {
  it('a session renamed between two settlements shows its new title in the second event', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/fresh', title: 'before' });
    const sub = subscribe(g.ws(), `subscription($s: ID) { executionSettled(sessionID: $s) { executionID execution { session { title } } } }`, { s: s.id });
    await onFeed(() => g.app.gateway.settlements.subscribers, 1);
    const e1 = await begin(g, host, s.id);
    await settle(g, host, e1.id);
    await sub.waitFor((ev) => ev.length >= 1);
    await ok(g, `mutation($id: ID!) { updateSession(input: { sessionID: $id, title: "after" }) { __typename } }`, { id: s.id });
    const e2 = await begin(g, host, s.id);
    await settle(g, host, e2.id);
    const events = await sub.waitFor((ev) => ev.length >= 2);
    expect(events.map((e: any) => [e.executionSettled.executionID, e.executionSettled.execution.session.title])).toEqual([
      [e1.id, 'before'],
      [e2.id, 'after'],
    ]);
  });
});
