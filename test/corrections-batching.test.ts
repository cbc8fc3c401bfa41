import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { SYSTEM } from '../domain/access.js';
import { correctMessagePart, RETRACTION_PLACEHOLDER, retractMessage } from '../domain/corrections.js';
import { appendMessage } from '../domain/messages.js';
import { createSession } from '../domain/sessions.js';

let g: TestGateway;
// No lease sweeper: its queries would share the counted pool.
beforeAll(async () => { g = await startTestGateway({ sweepIntervalMs: 0 }); });
afterAll(async () => { await g?.stop(); });

const QUERY = `query($first: Int!) { sessions(first: $first) { edges { node {
  id
  context { messageID role text }
  messages(first: 10) { edges { node { id revision retraction { reason retractedAt } parts { id ... on TextPart { text revision } } } } }
} } } }`;

async function seed(n: number, dir: string) {
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    const s = await createSession(g.sql, SYSTEM, { directory: dir });
    const a = await appendMessage(g.sql, SYSTEM, { sessionID: s.id, role: 'USER', origin: 'SYNTHETIC', parts: [{ type: 'TEXT', text: `notice ${i}` }] });
    const b = await appendMessage(g.sql, SYSTEM, { sessionID: s.id, role: 'USER', origin: 'SYNTHETIC', parts: [{ type: 'TEXT', text: `stale ${i}` }] });
    const [p] = await g.sql`SELECT id FROM parts WHERE message_id = ${a.id}`;
    await correctMessagePart(g.sql, SYSTEM, { messageID: a.id, partID: p.id, text: `notice ${i}, corrected` });
    await retractMessage(g.sql, SYSTEM, { messageID: b.id });
  }));
}

async function roundTrips(token: string, first: number) {
  // Warm up: postgres.js looks up array type OIDs once per connection on first use.
  for (let i = 0; i < 3; i++) await Promise.all([g.gql(QUERY, { first }, token), g.gql(QUERY, { first }, token)]);
  // The instance's background work (settlement sequencer) shares the counted pool: take the quietest of a few runs.
  let best: { count: number; log: string[]; data: any } | null = null;
  for (let i = 0; i < 4; i++) {
    g.queries.reset();
    const r = await g.gql(QUERY, { first }, token);
    expect(r.errors).toBeUndefined();
    if (!best || g.queries.count < best.count) best = { count: g.queries.count, log: [...((g.queries as any).log ?? [])], data: r.data };
  }
  return best!;
}

it('Session.context and retracted parts are batched: the same round trips for 3 and for 30 sessions', async () => {
  await seed(3, '/batch/three');
  await seed(30, '/batch/thirty');
  const three = await roundTrips(await g.token('reader', '/batch/three'), 50);
  const thirty = await roundTrips(await g.token('reader', '/batch/thirty'), 50);
  expect(three.data.sessions.edges).toHaveLength(3);
  expect(thirty.data.sessions.edges).toHaveLength(30);
  for (const { node } of thirty.data.sessions.edges) {
    expect(node.context.map((c: any) => c.text)).toEqual([expect.stringMatching(/^notice \d+, corrected$/), RETRACTION_PLACEHOLDER]);
    expect(node.messages.edges[1].node.parts).toEqual([expect.objectContaining({ text: RETRACTION_PLACEHOLDER })]);
  }
  if (thirty.count !== three.count) console.log(three.log.join('\n') + '\n----\n' + thirty.log.join('\n'));
  expect(thirty.count).toBe(three.count);
});
