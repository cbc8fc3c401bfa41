import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { startTestGateway, type TestGateway } from './harness.js';
import { buildApp, type App } from '../server/app.js';
import { seedReads, type SeededReads } from '../bench/support/reads-data.js';

/**
 * The HTTP read path (server/http-graphql.ts) answers every request byte for byte as Yoga's own HTTP
 * handling does (status, headers, body): an instance with `fastReads: false` on the same database is
 * the reference. Successful queries and queries whose result has errors are answered by the fast path;
 * everything else is handed to Yoga, which answers as before.
 */
let g: TestGateway;
let yogaOnly: App;
let reader: string;
let S: SeededReads;
beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 0 });
  S = await seedReads(g.sql, 101);
  yogaOnly = buildApp({ sql: g.sql, fastReads: false, gateway: { sweepIntervalMs: 0, retentionIntervalMs: 0 } });
  await yogaOnly.start();
  reader = await g.token('reader');
});
afterAll(async () => { await yogaOnly?.stop(); await g?.stop(); });

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: string }

function send(url: string, body: string, headers: Record<string, string>, method = 'POST'): Promise<Raw> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What a client sees of an answer, without what differs per request (date, request ID). */
const seen = ({ status, headers, body }: Raw) => {
  const { date: _d, 'x-request-id': _r, ...rest } = headers;
  return { status, headers: rest, body };
};

/** Sends the same request to both instances; returns the answer and whether the fast path answered it. */
async function both(body: string, headers: Record<string, string> = {}, method = 'POST') {
  const before = { ...g.app.reads! };
  const fast = await send(g.url, body, headers, method);
  const fastAnswered = g.app.reads!.fast - before.fast === 1;
  const slow = await send(yogaOnly.url, body, headers, method);
  expect(seen(fast)).toEqual(seen(slow));
  return { answer: fast, fastAnswered };
}

const json = (token: string | null, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra,
});
const q = (query: string, variables?: unknown, operationName?: string) => JSON.stringify({ query, variables, operationName });

const SESSIONS = `query Sessions($n: Int!) { sessions(first: $n) { pageInfo { hasNextPage endCursor } edges { cursor node {
  id title directory createdAt status
  executions(first: 5) { edges { node { id sequence status settledAt changeset { fileCount additions deletions } } } } } } } }`;
const CHANGESET = `query Changeset($id: ID!) { execution(id: $id) { id status changeset {
  fileCount additions deletions
  coverage { __typename ... on CoverageOmitted { omissions { path reason detail } } ... on CoverageUnavailable { reason detail } }
  files { path status additions deletions binary patch } } } }`;

describe('the HTTP read path', () => {
  it('answers queries with data as Yoga does, itself', async () => {
    for (const [body, headers] of [
      [q(SESSIONS, { n: 20 }, 'Sessions'), json(reader)],
      [q(SESSIONS, { n: 100 }), json(reader, { accept: 'application/json' })],
      [q(CHANGESET, { id: S.e50 }), json(reader, { accept: '*/*' })],
      [q(CHANGESET, { id: S.e500 }), json(g.admin, { 'content-type': 'application/json; charset=utf-8' })],
      [q(CHANGESET, { id: 'exe_nope' }), json(reader)],
      [JSON.stringify({ query: `{ a: sessions(first: 1) { edges { node { id } } } b: execution(id: "${S.e50}") { id } }`, extensions: {} }), json(reader)],
      [q(`${SESSIONS} query Other { execution(id: "${S.e50}") { id } }`, { n: 5 }, 'Sessions'), json(reader)],
    ] as const) {
      const r = await both(body, headers);
      expect(r.answer.status).toBe(200);
      expect(JSON.parse(r.answer.body).data).toBeTruthy();
      expect(r.fastAnswered).toBe(true);
    }
  });

  it('answers queries whose result has errors as Yoga does, itself', async () => {
    for (const [body, code] of [
      // A cursor of another list: BAD_USER_INPUT from a resolver.
      [q('{ sessions(first: 2, after: "bm9wZQ") { edges { node { id } } } }'), 'BAD_USER_INPUT'],
      // Refused before execution, by the envelop plugins: role, cost, bad strings.
      [q('query ($h: [String!]!) { missingContents(hashes: $h) { __typename } }', { h: [] }), 'FORBIDDEN'],
      [q('{ sessions(first: 100) { edges { node { children(first: 100) { edges { node { children(first: 100) { edges { node { id } } } } } } } } } }'), 'COST_LIMIT'],
      [q('query ($id: ID!) { execution(id: $id) { id } }', { id: 'exe_\u0000' }), 'BAD_USER_INPUT'],
    ] as const) {
      const r = await both(body, json(reader));
      expect(JSON.parse(r.answer.body).errors[0].extensions.code).toBe(code);
      expect(r.fastAnswered).toBe(true);
    }
  });

  it('answers a request without a valid token as Yoga does (401), itself, with one token lookup', async () => {
    for (const token of [null, 'not-a-token', 'x'.repeat(64)]) {
      const misses = g.app.tokens.stats.misses;
      const r = await both(q('{ sessions(first: 1) { edges { node { id } } } }'), json(token));
      expect(r.answer.status).toBe(401);
      expect(r.answer.headers['www-authenticate']).toBe('Bearer');
      expect(r.fastAnswered).toBe(true);
      expect(g.app.tokens.stats.misses - misses).toBe(token ? 1 : 0);
    }
  });

  it('a client that goes away before its body is complete leaves the instance answering', async () => {
    const u = new URL(g.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...json(reader), 'content-length': '500' } });
      req.on('error', () => resolve());
      req.write('{"query": "{ __typename');
      setImmediate(() => { req.destroy(); resolve(); });
    });
    const r = await both(q('{ sessions(first: 1) { edges { node { id } } } }'), json(reader));
    expect(r.answer.status).toBe(200);
  });

  it('hands everything else to Yoga, which answers as before', async () => {
    const cases: [string, Record<string, string>, string?][] = [
      [q('{ sessions(first: 1) { edges { node { nope } } } }'), json(reader)], // validation
      [q('{ sessions(first: 1) { edges { node { id } '), json(reader)], // parse
      [q('{ sessions { edges { node { parent { parent { parent { parent { parent { parent { parent { parent { parent { parent { id } } } } } } } } } } } } } }'), json(reader)], // depth: graphql-armor throws from validate
      [q('mutation { createSession(input: {}) { __typename } }'), json(reader)], // mutation (forbidden)
      [JSON.stringify({ query: '{ __typename }', nope: 1 }), json(reader)], // unknown parameter
      [JSON.stringify({ query: '{ __typename }', variables: [1] }), json(reader)],
      [JSON.stringify({ query: 1 }), json(reader)],
      [JSON.stringify([{ query: '{ __typename }' }]), json(reader)], // batch
      ['{"query": ', json(reader)], // not JSON
      ['null', json(reader)],
      [q('{ sessions(first: 1) { edges { node { id } } } }'), json(reader, { accept: 'application/graphql-response+json' })],
      [q('{ sessions(first: 1) { edges { node { id } } } }'), json(reader, { accept: 'text/event-stream' })],
      [q('{ sessions(first: 1) { edges { node { id } } } }'), json(reader, { origin: 'https://elsewhere.example' })],
      [q('{ sessions(first: 1) { edges { node { id } } } }'), { ...json(reader), 'content-type': 'application/graphql+json' }],
      [q('{ a: __typename }'), json(reader), 'PUT'],
    ];
    for (const [body, headers, method] of cases) {
      const r = await both(body, headers, method);
      expect(r.fastAnswered).toBe(false);
    }
  });
});
