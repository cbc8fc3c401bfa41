import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { registerHost } from './fixtures.js';
import { SYSTEM } from '../domain/access.js';
import { createSession } from '../domain/sessions.js';
import { beginExecution, settleExecution } from '../domain/executions.js';
import { appendMessage } from '../domain/messages.js';
import { startJob } from '../domain/jobs.js';

/**
 * The read model (resolvers/loaders.ts, the loadable objects of schema/refs.ts): `node(id)` answers
 * every Node type by the prefix of its ID, IDs of other kinds read as missing, and every object a
 * request names, wherever it names it, is loaded in one query per type.
 */

let g: TestGateway;
let ids: { sessions: string[]; execution: string; message: string; job: string; host: string };

// No lease sweeper: its queries would share the counted pool.
beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  const { hostID } = await registerHost(g);
  const sessions = [];
  for (let i = 0; i < 6; i++) sessions.push((await createSession(g.sql, SYSTEM, { directory: '/read-model', title: `s${i}` })).id);
  const e = await beginExecution(g.sql, SYSTEM, { sessionID: sessions[0], hostID, trigger: 'PROMPT' });
  const m = await appendMessage(g.sql, SYSTEM, { sessionID: sessions[0], executionID: e.id, role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text: 'hi' }] });
  const j = await startJob(g.sql, SYSTEM, { sessionID: sessions[0], executionID: e.id, hostID, kind: 'SHELL', command: 'true' });
  await settleExecution(g.sql, SYSTEM, { executionID: e.id, status: 'SUCCEEDED' });
  ids = { sessions, execution: e.id, message: m.id, job: j.id, host: hostID };
});
afterAll(async () => { await g?.stop(); });

/** The statements of the request itself (authentication reads the token once; the sequencer runs beside). */
const requestQueries = () => g.queries.requestLog();

describe('read model', () => {
  it('node(id) answers each Node type by its prefix; other IDs and garbage read as missing', async () => {
    const r = await g.gql(`query($s: ID!, $e: ID!, $m: ID!, $j: ID!, $h: ID!) {
      s: node(id: $s) { __typename id } e: node(id: $e) { __typename id } m: node(id: $m) { __typename id }
      j: node(id: $j) { __typename id } h: node(id: $h) { id } x: node(id: "ses_doesnotexist") { id }
      y: node(id: "not an id") { id } z: node(id: 42) { id } }`,
    { s: ids.sessions[0], e: ids.execution, m: ids.message, j: ids.job, h: ids.host });
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({
      s: { __typename: 'Session', id: ids.sessions[0] }, e: { __typename: 'Execution', id: ids.execution },
      m: { __typename: 'Message', id: ids.message }, j: { __typename: 'Job', id: ids.job },
      h: null, x: null, y: null, z: null,
    });
  });

  it('objects named anywhere in a request load in one query per type', async () => {
    const aliases = ids.sessions.map((id, i) => `n${i}: node(id: "${id}") { id } s${i}: session(id: "${id}") { title }`).join(' ');
    const q = `{ ${aliases} e: execution(id: "${ids.execution}") { session { id } messages { edges { node { session { id } execution { id } } } } }
      j: job(id: "${ids.job}") { execution { id session { id } } } m: message(id: "${ids.message}") { execution { id } } }`;
    await g.gql(q); // warm up (postgres.js reads array type OIDs once per connection)
    g.queries.reset();
    const r = await g.gql(q);
    expect(r.errors).toBeUndefined();
    expect(ids.sessions.map((_, i) => r.data[`s${i}`].title)).toEqual(['s0', 's1', 's2', 's3', 's4', 's5']);
    expect(r.data.j.execution.session.id).toBe(ids.sessions[0]);
    const log = requestQueries();
    const count = (table: string) => log.filter((l) => new RegExp(`FROM ${table}\\b`).test(l)).length;
    // Sessions by ID: the roots first, then the nested `session` of the executions, jobs and messages (one wave).
    expect(count('sessions'), log.join('\n')).toBeLessThanOrEqual(2);
    expect(count('executions e JOIN'), log.join('\n')).toBeLessThanOrEqual(2);
    expect(count('jobs j JOIN')).toBe(1);
  });

  it('each mutation of a request answers with what its own write left, not what an earlier one read', async () => {
    const part = (await g.sql`SELECT id FROM parts WHERE message_id = ${ids.message}`)[0].id as string;
    const fix = (alias: string, text: string) => `${alias}: correctMessagePart(input: { messageID: "${ids.message}", partID: "${part}", text: "${text}" }) {
      ... on MessagePartCorrected { message { revision parts { ... on TextPart { text revision } } session { context { text } } } } }`;
    const r = await g.gql(`mutation { ${fix('a', 'first')} ${fix('b', 'second')} ${fix('c', 'third')} }`);
    expect(r.errors).toBeUndefined();
    const seen = ['a', 'b', 'c'].map((k) => ({ text: r.data[k].message.parts[0].text, context: r.data[k].message.session.context[0].text }));
    expect(seen).toEqual([{ text: 'first', context: 'first' }, { text: 'second', context: 'second' }, { text: 'third', context: 'third' }]);
    expect(r.data.c.message.parts[0].revision).toBe(r.data.a.message.parts[0].revision + 2);
  });
});
