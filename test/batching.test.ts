import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { registerHost } from './fixtures.js';
import { SYSTEM } from '../domain/access.js';
import { createSession } from '../domain/sessions.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { appendMessage } from '../domain/messages.js';
import { startJob } from '../domain/jobs.js';

let g: TestGateway;
// No lease sweeper: its queries would share the counted pool.
beforeAll(async () => { g = await startTestGateway({ sweepIntervalMs: 0 }); });
afterAll(async () => { await g?.stop(); });

const QUERY = `query($first: Int!) { sessions(first: $first, rootsOnly: true) { edges { node {
  id title status parent { id } lastSettledExecution { id }
  children { edges { node { id } } }
  executions(first: 5) { edges { node { id status session { id } jobs { edges { node { id status } } } messages { edges { node { id } } } } } }
  jobs { edges { node { id status execution { id } } } }
  messages(first: 10) { edges { node { id role execution { id } parts { id ... on TextPart { text } } } } }
} } } }`;

/**
 * The statements of the request itself: the settlement sequencer runs in the background on the same pool,
 * and authentication reads the token only on its first use (server/token-cache.ts).
 */
function requestQueries() {
  return g.queries.requestLog();
}

async function seed(n: number, dir: string) {
  // Seeded through the domain operations directly (the same code the mutations call), to keep it quick.
  const { hostID } = await registerHost(g);
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    const s = await createSession(g.sql, SYSTEM, { directory: dir, title: `s${i}` });
    await createSession(g.sql, SYSTEM, { parentID: s.id });
    const e = await beginExecution(g.sql, SYSTEM, { sessionID: s.id, hostID, trigger: 'PROMPT' });
    await appendMessage(g.sql, SYSTEM, { sessionID: s.id, executionID: e.id, role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text: `prompt ${i}` }] });
    await startJob(g.sql, SYSTEM, { sessionID: s.id, executionID: e.id, hostID, kind: 'SHELL', command: 'true' });
    await settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
  }));
}

describe('batching', () => {
  it('runs the same number of SQL round trips for 5 and for 50 sessions', async () => {
    await seed(5, '/batch/five');
    const five = await g.token('reader', '/batch/five');
    // Warm up: postgres.js looks up array type OIDs once per connection on first use.
    for (let i = 0; i < 3; i++) await Promise.all([g.gql(QUERY, { first: 50 }, five), g.gql(QUERY, { first: 50 }, five)]);
    g.queries.reset();
    const r5 = await g.gql(QUERY, { first: 50 }, five);
    const log5 = requestQueries();
    const q5 = log5.length;
    expect(r5.errors).toBeUndefined();
    expect(r5.data.sessions.edges).toHaveLength(5);

    await seed(50, '/batch/fifty');
    const fifty = await g.token('reader', '/batch/fifty');
    g.queries.reset();
    const r50 = await g.gql(QUERY, { first: 50 }, fifty);
    const q50 = requestQueries().length;
    expect(r50.errors).toBeUndefined();
    expect(r50.data.sessions.edges).toHaveLength(50);
    const node = r50.data.sessions.edges[0].node;
    expect(node.executions.edges[0].node.jobs.edges).toHaveLength(1);
    expect(node.messages.edges[0].node.parts[0].text).toMatch(/^prompt/);

    console.log(`SQL round trips: ${q5} for 5 sessions, ${q50} for 50 sessions`);
    if (q50 !== q5) console.log(log5.join('\n') + '\n----\n' + requestQueries().join('\n'));
    expect(q50).toBe(q5);
    expect(q5).toBeLessThanOrEqual(16);
  });
});
