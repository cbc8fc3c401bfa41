import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import net from 'node:net';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { buildApp, type App } from '../server/app.js';
import { DEFAULT_CAPS, ConfigError, loadEdgeConfig } from '../server/config.js';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { until } from './support/until.js';

/** Cross-origin access is closed unless configured; caps per client and per socket. */
let g: TestGateway;
const apps: App[] = [];
beforeAll(async () => { g = await startTestGateway({ app: { cors: { origins: ['http://review.example'] } } }); });
afterAll(async () => {
  for (const a of apps) await a.stop().catch(() => {});
  await g.stop();
});

async function startApp(opts: Parameters<typeof buildApp>[0]): Promise<App> {
  const a = buildApp(opts);
  await a.start();
  apps.push(a);
  return a;
}

const preflight = (url: string, origin: string) => fetch(url, {
  method: 'OPTIONS',
  headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
});
const post = (url: string, origin: string, token: string) => fetch(url, {
  method: 'POST',
  headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${token}` },
  body: JSON.stringify({ query: '{ __typename }' }),
});

describe('CORS', () => {
  test('by default no origin gets cross-origin access, with or without credentials', async () => {
    const a = await startApp({ sql: g.sql, cors: { origins: [] } });
    for (const origin of ['http://evil.example', 'http://review.example', 'null']) {
      const p = await preflight(a.url, origin);
      expect(p.headers.get('access-control-allow-origin')).toBeNull();
      expect(p.headers.get('access-control-allow-credentials')).toBeNull();
      const r = await post(a.url, origin, g.admin);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
      expect(r.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  test('a configured origin gets its own origin back (no credentials); any other gets nothing', async () => {
    const p = await preflight(g.url, 'http://review.example');
    expect(p.headers.get('access-control-allow-origin')).toBe('http://review.example');
    expect(p.headers.get('access-control-allow-credentials')).toBeNull();
    expect((p.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('authorization');
    const r = await post(g.url, 'http://review.example', g.admin);
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('http://review.example');
    for (const origin of ['http://evil.example', 'http://review.example.evil.example', 'https://review.example']) {
      expect((await preflight(g.url, origin)).headers.get('access-control-allow-origin')).toBeNull();
      expect((await post(g.url, origin, g.admin)).headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  test('a WebSocket from a foreign browser origin is refused; own origin, listed origin and no origin are not', async () => {
    const open = (origin?: string) => new Promise<number>((resolve) => {
      const ws = new WebSocket(g.wsUrl, 'graphql-transport-ws', origin ? { origin } : {});
      ws.on('open', () => { ws.close(); resolve(101); });
      ws.on('unexpected-response', (_req, res) => { resolve(res.statusCode ?? 0); ws.terminate(); });
      ws.on('error', () => {});
    });
    expect(await open('http://evil.example')).toBe(403);
    expect(await open('http://review.example')).toBe(101);
    expect(await open(new URL(g.url).origin)).toBe(101);
    expect(await open()).toBe(101);
  });

  test('CORS_ORIGINS is validated', () => {
    expect(loadEdgeConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).cors.origins).toEqual(['https://a.example', 'http://localhost:5173']);
    expect(loadEdgeConfig({}).cors.origins).toEqual([]);
    for (const bad of ['*', 'a.example', 'https://a.example/path', 'ftp://a.example']) {
      expect(() => loadEdgeConfig({ CORS_ORIGINS: bad })).toThrow(ConfigError);
    }
    expect(() => loadEdgeConfig({ MAX_SUBSCRIPTIONS_PER_CONNECTION: '0' })).toThrow(ConfigError);
  });
});

/** Opens a raw TCP connection and resolves with the first bytes the server sends, or null while it sends nothing. */
function rawSocket(port: number) {
  const s = net.connect(port, '127.0.0.1');
  let data = '';
  s.on('data', (d) => { data += d.toString(); });
  s.on('error', () => {});
  return { s, get data() { return data; }, connected: new Promise<void>((r) => s.once('connect', () => r())) };
}

describe('caps', () => {
  test('connections per client: one past the default cap is answered 429 TOO_MANY_CONNECTIONS, JSON; a freed place is usable', async () => {
    const a = await startApp({ sql: g.sql });
    const cap = DEFAULT_CAPS.connectionsPerClient;
    const held = Array.from({ length: cap }, () => rawSocket(a.port));
    await Promise.all(held.map((h) => h.connected));
    await until('all held sockets counted', () => a.caps['perAddress'].get('127.0.0.1') === cap, 10_000);
    const extra = rawSocket(a.port);
    await until('the refusal', () => extra.data.includes('}'), 10_000);
    expect(extra.data).toMatch(/^HTTP\/1.1 429 /);
    const body = JSON.parse(extra.data.slice(extra.data.indexOf('\r\n\r\n') + 4));
    expect(body.errors[0].extensions).toMatchObject({ code: 'TOO_MANY_CONNECTIONS', limit: cap });
    expect(held.every((h) => h.data === '')).toBe(true);
    // A WebSocket past the cap is refused the same way.
    const ws = await new Promise<number>((resolve) => {
      const w = new WebSocket(a.wsUrl, 'graphql-transport-ws');
      w.on('unexpected-response', (_q, res) => { resolve(res.statusCode ?? 0); w.terminate(); });
      w.on('open', () => { w.close(); resolve(101); });
      w.on('error', () => resolve(-1));
    });
    expect(ws).toBe(429);
    held[0].s.destroy();
    await until('a place freed', () => a.caps['perAddress'].get('127.0.0.1') === cap - 1, 10_000);
    const r = await post(a.url, '', g.admin).catch((e) => e);
    expect(r.status).toBe(200);
    for (const h of held) h.s.destroy();
  }, 60_000);

  test('subscriptions per connection: one past the cap is a TOO_MANY_SUBSCRIPTIONS error, the others go on', async () => {
    const a = await startApp({ sql: g.sql, caps: { subscriptionsPerConnection: 3 } });
    const client = createClient({ url: a.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${g.admin}` }, retryAttempts: 0 });
    try {
      const q = 'subscription { executionSettled { cursor } }';
      const subs = [subscribe(client, q), subscribe(client, q), subscribe(client, q)];
      await until('three subscribed', () => a.gateway.settlements.subscribers === 3, 10_000);
      const fourth = subscribe(client, q);
      await until('the fourth refused', () => fourth.done, 10_000);
      expect(JSON.stringify(fourth.errors)).toContain('TOO_MANY_SUBSCRIPTIONS');
      expect(subs.every((s) => !s.done)).toBe(true);
      subs[0].unsubscribe();
      await until('one completed', () => a.gateway.settlements.subscribers === 2, 10_000);
      const fifth = subscribe(client, q);
      await until('a freed place is usable', () => a.gateway.settlements.subscribers === 3, 10_000);
      expect(fifth.done).toBe(false);
    } finally {
      await client.dispose();
    }
  });

  test('the default subscription cap holds on one socket', async () => {
    const a = await startApp({ sql: g.sql });
    const client = createClient({ url: a.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${g.admin}` }, retryAttempts: 0 });
    try {
      const q = 'subscription { executionSettled { cursor } }';
      const n = DEFAULT_CAPS.subscriptionsPerConnection;
      const subs = Array.from({ length: n + 5 }, () => subscribe(client, q));
      await until('cap applied', () => subs.filter((s) => s.done).length === 5 && a.gateway.settlements.subscribers === n, 20_000);
      expect(subs.filter((s) => s.done).every((s) => JSON.stringify(s.errors).includes('TOO_MANY_SUBSCRIPTIONS'))).toBe(true);
    } finally {
      await client.dispose();
    }
  });
});

describe('errors over WebSocket', () => {
  test('a syntax error and an invalid field carry the same codes as over HTTP, whichever transport sees the document first', async () => {
    const client = g.ws();
    const overWs = async (query: string) => {
      const sub = subscribe(client, query);
      await until('the operation refused', () => sub.done, 10_000);
      return (sub.errors[0] as { extensions?: Record<string, unknown> }[])[0].extensions ?? {};
    };
    const overHttp = async (query: string) => {
      const r = await fetch(g.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${g.admin}` }, body: JSON.stringify({ query }) });
      return (await r.json()).errors[0].extensions ?? {};
    };
    try {
      for (const [n, [bad, code]] of [['subscription { executionSettled(after: null) {', 'GRAPHQL_PARSE_FAILED'], ['subscription { executionSettled { nope } }', 'GRAPHQL_VALIDATION_FAILED']].entries()) {
        // Each document twice, with a different tail so the first transport is the first to parse it.
        const wsFirst = `${bad} # ${n} ws first`;
        const ws1 = await overWs(wsFirst);
        expect(ws1.code).toBe(code);
        expect((await overHttp(wsFirst)).code).toBe(code);
        const httpFirst = `${bad} # ${n} http first`;
        expect((await overHttp(httpFirst)).code).toBe(code);
        const ws2 = await overWs(httpFirst);
        expect(ws2.code).toBe(code);
        // Not HTTP's own extension: it means nothing on a WebSocket.
        expect(ws1.http).toBeUndefined();
        expect(ws2.http).toBeUndefined();
      }
    } finally {
      await client.dispose();
    }
  });
});
