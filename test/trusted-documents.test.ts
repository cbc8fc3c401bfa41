// Trusted documents (server/trusted-documents.ts): the typed client sends its documents by hash (codegen's
// client/persisted-documents.json); a gateway with TRUSTED_DOCUMENTS_ONLY=1 runs only documents of its list
// over HTTP and WebSocket alike, refusing others with PERSISTED_QUERY_ONLY, while admins send any document
// and any token may introspect the schema (GraphiQL's Docs pane). Without it any document runs.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getIntrospectionQuery, print, type DocumentNode } from 'graphql';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from '../client/index.js';
import {
  BeginExecutionDocument, CreateSessionDocument, ExecutionSettledDocument, GatewayClient, LatestSettlementCursorDocument,
  ListSessionsDocument, RegisterHostDocument, SettleExecutionDocument,
} from '../client/index.js';
import { PROJECT_DIR } from '../db/index.js';
import { ConfigError, loadConfig } from '../server/config.js';
import { gql, startTestGateway, subscribe, type TestGateway } from './harness.js';

const manifest = JSON.parse(readFileSync(path.join(PROJECT_DIR, 'client/persisted-documents.json'), 'utf8')) as Record<string, string>;
const hashOf = (doc: DocumentNode) => (doc as { __meta__?: { hash?: string } }).__meta__?.hash;

/** A POST with this body and token, answered as status and JSON. */
async function post(url: string, token: string, body: Record<string, unknown>) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] } };
}

/** The bodies a client sends, recorded by its fetch. */
function recordingFetch() {
  const bodies: Record<string, unknown>[] = [];
  const f: typeof fetch = (input, init) => { bodies.push(JSON.parse(String(init?.body))); return fetch(input, init); };
  return { bodies, fetch: f };
}

describe('codegen\'s list', () => {
  it('holds every document of the client by the SHA-256 of its text (run `npm run codegen` when this fails)', () => {
    const documents = Object.entries(client).filter(([name]) => name.endsWith('Document')) as [string, DocumentNode][];
    expect(documents.length).toBeGreaterThan(40);
    for (const [name, doc] of documents) {
      const hash = hashOf(doc);
      expect(hash, name).toMatch(/^[0-9a-f]{64}$/);
      expect(manifest[hash!], name).toBe(print(doc));
      expect(createHash('sha256').update(manifest[hash!]).digest('hex'), name).toBe(hash);
    }
    expect(Object.keys(manifest).length).toBe(documents.length);
  });
});

describe('TRUSTED_DOCUMENTS_ONLY=1', () => {
  let g: TestGateway;
  let dir: string;
  let reader: string;
  /** A document of the operator's own, listed in TRUSTED_DOCUMENTS as GraphQL Code Generator's client preset writes it (`sha256:` keys). */
  const own = 'query OwnCount { sessions(first: 1) { pageInfo { hasNextPage } } }';
  const ownHash = createHash('sha256').update(own).digest('hex');

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'trusted-'));
    const file = path.join(dir, 'persisted-documents.json');
    writeFileSync(file, JSON.stringify({ [`sha256:${ownHash}`]: own }));
    g = await startTestGateway({ app: { trustedDocuments: { only: true, files: [file] } } });
    reader = await g.token('reader');
  });
  afterAll(async () => {
    await g?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the typed client unchanged, by hash: a host\'s calls, a plugin\'s, a reader\'s reads and subscription', async () => {
    const recorded = recordingFetch();
    const host = new GatewayClient({ url: g.url, token: await g.token('host'), fetch: recorded.fetch });
    const plugin = new GatewayClient({ url: g.url, token: await g.token('plugin'), fetch: recorded.fetch });
    const reading = new GatewayClient({ url: g.url, token: reader, webSocketImpl: WebSocket, fetch: recorded.fetch });
    try {
      const registered = await host.call(RegisterHostDocument, { input: { name: 'trusted-host' } });
      const session = await plugin.call(CreateSessionDocument, { input: { directory: '/trusted', title: 'trusted' } });
      const { latestSettlementCursor } = await reading.request(LatestSettlementCursorDocument, {});
      const settled: string[] = [];
      const stop = reading.subscribe(ExecutionSettledDocument, { after: latestSettlementCursor }, { next: (d) => settled.push(d.executionSettled.executionID) });
      const execution = await host.call(BeginExecutionDocument, { input: { sessionID: session.id, hostID: registered.id, trigger: 'PROMPT' } });
      await host.call(SettleExecutionDocument, { input: { executionID: execution.id, status: 'SUCCEEDED' } });
      await expect.poll(() => settled, { timeout: 15_000 }).toEqual([execution.id]);
      stop();
      const { sessions } = await reading.request(ListSessionsDocument, { first: 5 });
      expect(sessions.edges.map((e) => e.node.id)).toContain(session.id);
      // Every request went by hash, none with a text.
      expect(recorded.bodies.length).toBeGreaterThanOrEqual(6);
      for (const b of recorded.bodies) {
        expect(b.query).toBeUndefined();
        expect((b.extensions as any).persistedQuery).toEqual({ version: 1, sha256Hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      }
    } finally {
      await reading.close();
    }
  });

  it('refuses a text from any other role, over HTTP (403) and WebSocket, with a clear error', async () => {
    const http = await post(g.url, reader, { query: '{ sessions(first: 1) { edges { node { id } } } }' });
    expect(http.status).toBe(403);
    expect(http.body.errors).toEqual([expect.objectContaining({
      message: expect.stringContaining('This gateway runs only trusted documents (TRUSTED_DOCUMENTS_ONLY=1)'),
      extensions: expect.objectContaining({ code: 'PERSISTED_QUERY_ONLY' }),
    })]);
    expect(http.body.data).toBeUndefined();
    const sub = subscribe(g.ws(reader), 'subscription { executionSettled { cursor } }');
    await expect.poll(() => sub.errors.length, { timeout: 10_000 }).toBe(1);
    expect(sub.errors).toEqual([[expect.objectContaining({ extensions: { code: 'PERSISTED_QUERY_ONLY' } })]]);
  });

  it('runs any text of an admin, over HTTP and WebSocket', async () => {
    const http = await gql(g.url, g.admin, '{ sessions(first: 1) { pageInfo { hasNextPage } } }');
    expect(http.errors).toBeUndefined();
    expect(http.data.sessions.pageInfo.hasNextPage).toBeTypeOf('boolean');
    const sub = subscribe(g.ws(g.admin), 'subscription { executionSettled { cursor } }');
    await expect.poll(() => g.app.gateway.settlements.subscribers, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(sub.errors).toEqual([]);
    sub.unsubscribe();
  });

  it('lets every role introspect the schema (GraphiQL\'s Docs pane), and nothing more in the same document', async () => {
    const intro = await gql(g.url, reader, getIntrospectionQuery());
    expect(intro.errors).toBeUndefined();
    expect(intro.data.__schema.queryType.name).toBe('Query');
    const mixed = await gql(g.url, reader, '{ __schema { queryType { name } } sessions(first: 1) { pageInfo { hasNextPage } } }');
    expect(mixed.errors?.[0].extensions?.code).toBe('PERSISTED_QUERY_ONLY');
  });

  it('runs the operator\'s own listed documents by hash; an unknown hash, or none, is told apart', async () => {
    const listed = await post(g.url, reader, { extensions: { persistedQuery: { version: 1, sha256Hash: ownHash } } });
    expect(listed.body).toEqual({ data: { sessions: { pageInfo: { hasNextPage: expect.any(Boolean) } } } });
    const unknown = await post(g.url, reader, { extensions: { persistedQuery: { version: 1, sha256Hash: 'ab'.repeat(32) } } });
    expect(unknown.body.errors?.[0].extensions?.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect(unknown.body.errors?.[0].message).toContain('does not know this document');
    // Neither a text nor a hash: Yoga's own answer, as without trusted documents.
    const none = await post(g.url, reader, { variables: {} });
    expect(none.body.errors?.[0].message).toBe('Must provide query string.');
  });
});

describe('by default (any document runs)', () => {
  let g: TestGateway;
  beforeAll(async () => { g = await startTestGateway(); });
  afterAll(async () => { await g?.stop(); });

  it('runs texts of every role, and the client\'s documents by hash', async () => {
    const reader = await g.token('reader');
    expect((await gql(g.url, reader, '{ sessions(first: 1) { pageInfo { hasNextPage } } }')).errors).toBeUndefined();
    const byHash = await post(g.url, reader, { extensions: { persistedQuery: { version: 1, sha256Hash: hashOf(ListSessionsDocument) } }, variables: { first: 1 } });
    expect(byHash.body.data.sessions.edges).toEqual([]);
  });

  it('a client whose document the gateway does not know (another version\'s) sends its text instead, over HTTP and WebSocket', async () => {
    const unknown = { ...ListSessionsDocument, __meta__: { hash: 'cd'.repeat(32) } } as typeof ListSessionsDocument;
    const recorded = recordingFetch();
    const gw = new GatewayClient({ url: g.url, token: g.admin, fetch: recorded.fetch, webSocketImpl: WebSocket });
    try {
      const { sessions } = await gw.request(unknown, { first: 1 });
      expect(sessions.edges).toEqual([]);
      expect(recorded.bodies.map((b) => (b.query ? 'text' : 'hash'))).toEqual(['hash', 'text']);
      const sub = { ...ExecutionSettledDocument, __meta__: { hash: 'ef'.repeat(32) } } as typeof ExecutionSettledDocument;
      const errors: unknown[] = [];
      gw.subscribe(sub, { after: null }, { next: () => {}, error: (e) => errors.push(e) });
      await expect.poll(() => g.app.gateway.settlements.subscribers, { timeout: 10_000 }).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      await gw.close();
    }
  });
});

describe('configuration', () => {
  it('TRUSTED_DOCUMENTS_ONLY is 0 or 1; TRUSTED_DOCUMENTS lists readable manifests', () => {
    expect(loadConfig({}).trustedDocuments).toEqual({ only: false, files: [] });
    expect(() => loadConfig({ TRUSTED_DOCUMENTS_ONLY: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUSTED_DOCUMENTS_ONLY: 'yes' })).toThrow('TRUSTED_DOCUMENTS_ONLY must be 0 or 1 (got "yes")');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'trusted-config-'));
    try {
      expect(() => loadConfig({ TRUSTED_DOCUMENTS: 'missing.json' }, PROJECT_DIR, dir)).toThrow(`TRUSTED_DOCUMENTS must list JSON files of hash → document: ${path.join(dir, 'missing.json')}: no such file`);
      writeFileSync(path.join(dir, 'bad.json'), '["query { x }"]');
      expect(() => loadConfig({ TRUSTED_DOCUMENTS: 'bad.json' }, PROJECT_DIR, dir)).toThrow('not a JSON object of hash → document');
      writeFileSync(path.join(dir, 'good.json'), JSON.stringify({ ['a'.repeat(64)]: '{ __typename }' }));
      expect(loadConfig({ TRUSTED_DOCUMENTS_ONLY: '1', TRUSTED_DOCUMENTS: 'good.json' }, PROJECT_DIR, dir).trustedDocuments)
        .toEqual({ only: true, files: [path.join(dir, 'good.json')] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
