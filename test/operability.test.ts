import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import net from 'node:net';
import { connect } from '../db/connection.js';
import { buildApp, type App } from '../server/app.js';
import { createLogger, REDACTED } from '../server/logging.js';
import { loadConfig } from '../server/config.js';
import { startTestGateway, subscribe, TEST_POOL, type TestGateway } from './harness.js';
import { begin, createSession, registerHost, settle } from './fixtures.js';
import { VERSION } from '../server/version.js';

/**
 * Logs, request IDs, metrics, /ready and the config module, against a real
 * server: every line is parsed as JSON, and no line may carry a secret.
 */
const lines: any[] = [];
const waiters: (() => void)[] = [];
const sink = { write(s: string) { for (const l of s.split('\n')) if (l) lines.push(JSON.parse(l)); waiters.splice(0).forEach((w) => w()); } };
/** The log of both instances here (as `gateway serve` makes it, at debug), parsed into `lines`. */
const logger = createLogger('debug', sink);

async function line(pred: (l: any) => boolean, what: string, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = lines.find(pred);
    if (found) return found;
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`no log line: ${what}`);
    await new Promise<void>((r) => { waiters.push(r); setTimeout(r, Math.min(left, 200)); });
  }
}

const METRICS_TOKEN = 'metrics-token-0123456789';
let g: TestGateway;
let app: App;
let url: string;

beforeAll(async () => {
  g = await startTestGateway({ sweepIntervalMs: 100, app: { logger } });
  app = buildApp({ sql: g.sql, metricsToken: METRICS_TOKEN, metricsPort: 0, logger });
  await app.start();
  url = app.url;
});

afterAll(async () => {
  await app?.stop();
  await g?.stop();
  // Whatever happened, no line carried a bearer token.
  expect(JSON.stringify(lines)).not.toMatch(/gw_[A-Za-z0-9_-]{20,}/);
});

async function post(query: string, headers: Record<string, string> = {}, token: string | null = g.admin) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: JSON.stringify({ query }),
  });
  return { res, body: await res.json() };
}

async function metric(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = await (await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const l of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(l);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(',');
    if (want.every((w) => have.includes(w))) return Number(m[3]);
  }
  return undefined;
}

describe('request logs', () => {
  it('one JSON line per request with operation, role, result and duration; the request ID is taken or made, and returned', async () => {
    const a = await post('query ListFew { sessions(first: 2) { edges { node { id } } } }', { 'x-request-id': 'trace-abc.123' });
    expect(a.res.headers.get('x-request-id')).toBe('trace-abc.123');
    const l = await line((l) => l.msg === 'request' && l.requestID === 'trace-abc.123', 'the ListFew request');
    expect(l).toMatchObject({ level: 'info', transport: 'http', status: 200, operationName: 'ListFew', operationType: 'query', role: 'admin', result: 'ok' });
    expect(l.durationMs).toBeGreaterThan(0);
    expect(l.tokenID).toMatch(/^tok_/);

    const b = await post('{ sessions(first: 1) { edges { node { id } } } }', { 'x-request-id': 'bad id with spaces' });
    const made = b.res.headers.get('x-request-id')!;
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    await line((l) => l.msg === 'request' && l.requestID === made, 'the anonymous request');

    const c = await post('{ sessions { edges { node { id } } } }', {}, 'not-a-token');
    expect(c.res.status).toBe(401);
    await line((l) => l.msg === 'request' && l.requestID === c.res.headers.get('x-request-id') && l.result === 'unauthenticated' && l.status === 401, 'the refused request');

    // A GET fills its line all the same.
    const get = await fetch(`${url}?query=${encodeURIComponent('query GetFew { sessions(first: 1) { edges { node { id } } } }')}`, { headers: { authorization: `Bearer ${g.admin}`, accept: 'application/json', 'x-request-id': 'get-1' } });
    expect(get.status).toBe(200);
    const gl = await line((l) => l.msg === 'request' && l.requestID === 'get-1', 'the GET request');
    expect(gl).toMatchObject({ method: 'GET', operationName: 'GetFew', operationType: 'query', role: 'admin', result: 'ok' });

    const d = await post('{ nope }');
    await line((l) => l.msg === 'request' && l.requestID === d.res.headers.get('x-request-id') && l.result !== 'ok', 'the invalid request');
  });

  it("Yoga's own lines: at debug beside the request's, none at info", async () => {
    const before = lines.length;
    await post('{ __typename }', { 'x-request-id': 'yoga-lines' });
    await line((l) => l.msg === 'request' && l.requestID === 'yoga-lines', 'the request line');
    expect(lines.slice(before).some((l) => l.msg === 'graphql-yoga' && l.level === 'debug' && Array.isArray(l.yoga))).toBe(true);

    // An instance at info, as `npm start` logs by default: its request line, none of Yoga's.
    const atInfo: any[] = [];
    const infoApp = buildApp({ sql: g.sql, logger: createLogger('info', { write(s: string) { for (const l of s.split('\n')) if (l) atInfo.push(JSON.parse(l)); } }) });
    await infoApp.start();
    try {
      const r = await fetch(infoApp.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${g.admin}` }, body: JSON.stringify({ query: '{ __typename }' }) });
      expect(await r.json()).toEqual({ data: { __typename: 'Query' } });
      await expect.poll(() => atInfo.some((l) => l.msg === 'request')).toBe(true);
      expect(atInfo.filter((l) => l.msg === 'graphql-yoga')).toEqual([]);
    } finally {
      await infoApp.stop();
    }
  });

  it('an unexpected error: masked in the response, logged with its stack and the request ID', async () => {
    await g.sql`ALTER TABLE sessions RENAME TO sessions_away`;
    let r;
    try {
      r = await post('query Broken { sessions(first: 1) { edges { node { id } } } }');
    } finally {
      await g.sql`ALTER TABLE sessions_away RENAME TO sessions`;
    }
    expect(JSON.stringify(r.body)).not.toMatch(/sessions_away|\.ts:\d+|at /);
    expect(r.body.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
    // A resolver's unexpected error is a 500, as documented (Yoga's own masking answered it 200 with data null).
    expect(r.res.status).toBe(500);
    const id = r.res.headers.get('x-request-id');
    const err = await line((l) => l.msg === 'unexpected error' && l.requestID === id, 'the error line');
    expect(err.level).toBe('error');
    expect(err.err.stack).toContain('sessions');
    expect(err.operationName).toBe('Broken');
    await line((l) => l.msg === 'request' && l.requestID === id && l.result === 'error', 'the request line of the failure');
  });

  it('an unexpected error is logged with its own request on every path: Yoga (a mutation), a WebSocket operation, many at once', async () => {
    const ws = createClient({ url: app.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${g.admin}` }, retryAttempts: 0 });
    const wsQuery = (query: string) => new Promise<any>((resolve, reject) => {
      let got: any;
      ws.subscribe({ query }, { next: (v) => { got = v; }, error: reject, complete: () => resolve(got) });
    });
    await g.sql`ALTER TABLE sessions RENAME TO sessions_away`;
    let m, q, viaWs;
    try {
      // Concurrent requests over HTTP and a WebSocket, interleaved: each error line names its own request.
      [m, q, viaWs] = await Promise.all([
        post('mutation BrokenWrite { createSession(input: { title: "x", directory: "/ops" }) { __typename } }', { 'x-request-id': 'broken-write' }),
        Promise.all(Array.from({ length: 8 }, (_, i) => post(`query BrokenRead${i} { sessions(first: 1) { edges { node { id } } } }`, { 'x-request-id': `broken-read-${i}` }))),
        wsQuery('query BrokenWs { sessions(first: 1) { edges { node { id } } } }'),
      ]);
    } finally {
      await g.sql`ALTER TABLE sessions_away RENAME TO sessions`;
      await ws.dispose();
    }
    expect(m.body.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect(m.res.status).toBe(500);
    const werr = await line((l) => l.msg === 'unexpected error' && l.requestID === 'broken-write', 'the mutation\'s error line');
    expect(werr).toMatchObject({ operationName: 'BrokenWrite', where: 'graphql' });
    expect(werr.err.stack).toContain('sessions');
    await line((l) => l.msg === 'request' && l.requestID === 'broken-write' && l.result === 'error' && l.operationType === 'mutation', 'the mutation\'s request line');
    for (let i = 0; i < 8; i++) {
      expect(q[i].body.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
      const e = await line((l) => l.msg === 'unexpected error' && l.requestID === `broken-read-${i}`, `read ${i}'s error line`);
      expect(e.operationName).toBe(`BrokenRead${i}`);
    }
    expect(viaWs.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
    const op = await line((l) => l.msg === 'operation' && l.operationName === 'BrokenWs', 'the WebSocket operation line');
    expect(op).toMatchObject({ transport: 'ws', result: 'error' });
    const e = await line((l) => l.msg === 'unexpected error' && l.requestID === op.requestID, 'the WebSocket error line');
    expect(e).toMatchObject({ operationName: 'BrokenWs', where: 'graphql' });
    // Each error was logged once.
    expect(lines.filter((l) => l.msg === 'unexpected error' && (l.requestID === 'broken-write' || l.requestID === op.requestID))).toHaveLength(2);
  });

  it('a subscription over HTTP (SSE, through Yoga): an unexpected error in one of its events is masked and logged with the request', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { title: 'sse', directory: '/ops' });
    const before = (await post(`{ latestSettlementCursor(sessionID: "${s.id}") }`)).body.data.latestSettlementCursor;
    const e = await begin(g, host, s.id);
    await settle(g, host, e.id);
    const ac = new AbortController();
    await g.sql`ALTER TABLE executions RENAME TO executions_away`;
    let event: any;
    try {
      const res = await fetch(url, {
        method: 'POST', signal: ac.signal,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${g.admin}`, 'x-request-id': 'sse-1' },
        body: JSON.stringify({ query: 'subscription SseWatch($s: ID, $a: String) { executionSettled(sessionID: $s, after: $a) { executionID execution { id } } }', variables: { s: s.id, a: before } }),
      });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      let text = '';
      while (!event) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
        const m = /^data: (.+)$/m.exec(text);
        if (m) event = JSON.parse(m[1]);
      }
    } finally {
      ac.abort();
      await g.sql`ALTER TABLE executions_away RENAME TO executions`;
    }
    // The event still comes (its row is in the log), its execution field masked.
    expect(event.data.executionSettled).toEqual({ executionID: e.id, execution: null });
    expect(event.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect(JSON.stringify(event)).not.toMatch(/executions_away/);
    const err = await line((l) => l.msg === 'unexpected error' && l.requestID === 'sse-1', 'the SSE event\'s error line');
    expect(err).toMatchObject({ operationName: 'SseWatch', where: 'graphql' });
  });

  it('one line per WebSocket operation when it ends, with its deliveries', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { title: 'ws log', directory: '/ops' });
    // The upgrade's x-request-id names the connection, and comes back in the 101 response.
    let upgradeID: string | undefined;
    class TracedWebSocket extends WebSocket {
      constructor(url: string, protocols: string | string[]) {
        super(url, protocols, { headers: { 'x-request-id': 'ws-trace-1' } });
        this.on('upgrade', (res) => { upgradeID = String(res.headers['x-request-id']); });
      }
    }
    const ws = createClient({ url: app.wsUrl, webSocketImpl: TracedWebSocket, connectionParams: { authorization: `Bearer ${g.admin}` }, retryAttempts: 0 });
    try {
      const sub = subscribe(ws, `subscription Watch($s: ID) { executionSettled(sessionID: $s) { cursor executionID } }`, { s: s.id });
      await expect.poll(() => metric('gateway_subscriptions_open', { operation: 'Watch' }), { timeout: 15_000 }).toBe(1);
      const e = await begin(g, host, s.id);
      await settle(g, host, e.id);
      await sub.waitFor((ev) => ev.length === 1);
      expect(await metric('gateway_subscription_deliveries_total', { operation: 'Watch' })).toBe(1);
      sub.unsubscribe();
      const l = await line((l) => l.msg === 'operation' && l.operationName === 'Watch', 'the Watch operation');
      expect(l.requestID).toMatch(/^ws-trace-1\/./); // the connection's ID (from the upgrade) / the operation's
      expect(l).toMatchObject({ transport: 'ws', operationType: 'subscription', role: 'admin', deliveries: 1, result: 'ok' });
      expect(await metric('gateway_subscriptions_open', { operation: 'Watch' })).toBe(0);
      expect(upgradeID).toBe('ws-trace-1');
    } finally {
      await ws.dispose();
    }
  });
});

describe('the second fence: secret-named keys never reach a line', () => {
  it('token, authorization, secret and connectionParams are redacted at the top of a line and one level down (an Error stays an Error), in child bindings too, without changing what was logged', async () => {
    const err = Object.assign(new Error('fence boom'), { secret: 'err-secret-1', code: 'E_FENCE' });
    const logged = {
      fence: 1, token: 'top-token-1', authorization: 'Bearer top-auth-1', connectionParams: { authorization: 'Bearer cp-1' },
      headers: { authorization: 'Bearer nested-auth-1', host: 'example' }, err, kept: { note: 'nothing secret' },
    };
    logger.warn(logged, 'fence line');
    const l = await line((x) => x.msg === 'fence line', 'the fence line');
    expect(l).toMatchObject({
      fence: 1, token: REDACTED, authorization: REDACTED, connectionParams: REDACTED,
      headers: { authorization: REDACTED, host: 'example' }, kept: { note: 'nothing secret' },
      err: { type: 'Error', message: 'fence boom', secret: REDACTED, code: 'E_FENCE' },
    });
    expect(l.err.stack).toContain('fence boom');
    // What the caller logged is unchanged.
    expect(logged.token).toBe('top-token-1');
    expect(logged.headers.authorization).toBe('Bearer nested-auth-1');
    expect(err.secret).toBe('err-secret-1');

    logger.child({ fence: 2, token: 'child-token-1' }).child({ nested: { secret: 'grandchild-secret-1' } }).warn('fence child line');
    const c = await line((x) => x.msg === 'fence child line', 'the child line');
    expect(c).toMatchObject({ fence: 2, token: REDACTED, nested: { secret: REDACTED } });
    logger.error(err, 'fence error line');
    const e = await line((x) => x.msg === 'fence error line', 'the error line');
    expect(e.err).toMatchObject({ message: 'fence boom', secret: REDACTED });
    expect(JSON.stringify(lines)).not.toMatch(/top-token-1|top-auth-1|cp-1|nested-auth-1|err-secret-1|child-token-1|grandchild-secret-1/);
  });
});

describe('metrics', () => {
  it('/metrics needs its token on the main port; its own port serves it without one; the harness app (no token) does not serve it', async () => {
    expect((await fetch(new URL('/metrics', url))).status).toBe(401);
    expect((await fetch(new URL('/metrics', url), { headers: { authorization: 'Bearer wrong-token-000000000' } })).status).toBe(401);
    expect((await fetch(new URL('/metrics', g.url))).status).toBe(404);
    const own = await fetch(app.metricsUrl!);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain('gateway_bus_healthy');
  });

  it('counts requests and durations by operation, seals by outcome, pool and bus', async () => {
    for (let i = 0; i < 3; i++) await post('query Counted { sessions(first: 1) { edges { node { id } } } }');
    expect(await metric('gateway_requests_total', { transport: 'http', operation: 'Counted', type: 'query', result: 'ok' })).toBe(3);
    expect(await metric('gateway_request_duration_seconds_count', { transport: 'http', operation: 'Counted' })).toBe(3);
    const s = await createSession(g, { title: 'to seal', directory: '/ops' });
    const sealed = await post(`mutation { sealSession(input: { sessionID: "${s.id}", timeoutMs: 1000 }) { __typename } }`);
    expect(sealed.body.data.sealSession.__typename).toBe('SessionSealed');
    expect(await metric('gateway_seal_duration_seconds_count', { outcome: 'SessionSealed' })).toBe(1);
    await expect.poll(() => metric('gateway_bus_healthy'), { timeout: 10_000 }).toBe(1);
    expect(await metric('gateway_db_pool_max')).toBe(TEST_POOL);
    expect(await metric('gateway_db_connections', { state: 'active' })).toBeGreaterThanOrEqual(1);
    expect(await metric('gateway_settlement_feed_lag')).toBe(0);
  });

  it('caps the operation names used as labels (clients choose them)', async () => {
    const m = app.metrics;
    for (let i = 0; i < 600; i++) m.operationLabel(`Generated${i}`);
    expect(m.operationLabel('Counted')).toBe('Counted'); // seen before the cap
    expect(m.operationLabel('BrandNew')).toBe('other');
    expect(m.operationLabel('x'.repeat(101))).toBe('other');
    expect(m.operationLabel(null)).toBe('anonymous');
  });
});

describe('background work and readiness', () => {
  it('logs the lease sweep, the loss and return of the listening connection; /ready follows the bus', async () => {
    const host = await registerHost(g, { leaseMs: 1_000 });
    const s = await createSession(g, { title: 'abandoned', directory: '/ops' });
    await begin(g, host, s.id);
    const swept = await line((l) => l.msg?.startsWith('lease sweep') && l.abandoned >= 1, 'the sweep', 20_000);
    expect(swept.level).toBe('info');

    expect((await fetch(new URL('/ready', url))).status).toBe(200);
    await g.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agent-history-gateway-listener' AND datname = current_database()`;
    await line((l) => l.msg === 'bus: the listening connection was lost', 'the loss');
    await line((l) => l.msg?.startsWith('bus: listening again'), 'the resync');
    await expect.poll(async () => (await fetch(new URL('/ready', url))).status, { timeout: 15_000 }).toBe(200);
    await app.gateway.bus.stop();
    const notReady = await fetch(new URL('/ready', url));
    expect(notReady.status).toBe(503);
    expect((await notReady.json()).status).toMatch(/not listening/);
    await app.gateway.bus.start();
  });

  it('/ready says why when the database stops answering (a network that drops packets), and the log names its host', async () => {
    // A proxy to this file's database that, once frozen, passes no byte either way and accepts connections it
    // never answers: what a database behind a dropped route looks like from the gateway.
    const target = new URL(g.dbUrl);
    const sockets = new Set<net.Socket>();
    let frozen = false;
    const proxy = net.createServer((client) => {
      sockets.add(client);
      client.on('error', () => {});
      if (frozen) return;
      const upstream = net.connect(Number(target.port), target.hostname);
      sockets.add(upstream);
      upstream.on('error', () => client.destroy());
      client.on('data', (d) => { if (!frozen) upstream.write(d); });
      upstream.on('data', (d) => { if (!frozen) client.write(d); });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const via = new URL(g.dbUrl);
    via.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const sql = connect(via.href, { max: 2, connectTimeoutMs: 1_000 });
    const behind = buildApp({ sql, logger });
    try {
      await behind.start();
      const ready = new URL('/ready', behind.url);
      expect((await fetch(ready)).status).toBe(200);
      frozen = true;
      const t0 = Date.now();
      const r = await fetch(ready);
      expect(r.status).toBe(503);
      expect(await r.json()).toEqual({ status: 'database unavailable', code: 'DATABASE_UNAVAILABLE', reason: 'the database did not answer within 2 s' });
      expect(Date.now() - t0).toBeLessThan(5_000);
      const logged = await line((l) => l.msg === 'ready: the database does not answer' && l.database === `${via.host}${via.pathname}`, 'the /ready warning');
      expect(logged).toMatchObject({ level: 'warn', status: 503, reason: 'the database did not answer within 2 s' });
    } finally {
      for (const s of sockets) s.destroy();
      proxy.close();
      await behind.stop().catch(() => {});
      await sql.end({ timeout: 1 }).catch(() => {});
    }
  });

  it('/health carries the version', async () => {
    expect(await (await fetch(new URL('/health', url))).json()).toEqual({ status: 'ok', version: VERSION });
  });
});

describe('config', () => {
  it('reads every option, with defaults, and names the variable of a bad one', () => {
    const c = loadConfig({}, '/srv/gw');
    expect(c).toMatchObject({ port: 4000, host: '127.0.0.1', dbPool: 20, dbConnectTimeoutMs: 10_000, dataDir: '/srv/gw/.data/pg', logLevel: 'info', metrics: { token: undefined, port: undefined } });
    expect(c.gateway).toEqual({ sweepIntervalMs: 1000, sweepWindowMs: 120000, sequencerSafetyMs: 60000, retentionIntervalMs: 600000, feedPollMs: 5000, sealMaxTimeoutMs: 120000, hostRequestMaxTimeoutMs: 120000, hostRequestRetentionMs: 86400000 });
    const d = loadConfig({ PORT: '0', MAX_COST: '1000', TOKEN_CACHE_TTL_MS: '0', LOG_LEVEL: 'WARN', DATABASE_URL: 'postgres://u:p@db/x', LEASE_SWEEP_MS: '250' });
    expect(d).toMatchObject({ port: 0, logLevel: 'warn', databaseUrl: 'postgres://u:p@db/x', limits: { maxCost: 1000 }, tokenCache: { ttlMs: 0 }, gateway: { sweepIntervalMs: 250 } });
    for (const [env, msg] of [
      [{ PORT: '70000' }, /^PORT must be an integer from 0 to 65535 \(got "70000"\)$/],
      [{ DB_POOL: '1.5' }, /^DB_POOL must be/],
      [{ DB_CONNECT_TIMEOUT_MS: '50' }, /^DB_CONNECT_TIMEOUT_MS must be an integer from 100 to 600000 \(got "50"\)$/],
      [{ FEED_POLL_MS: 'soon' }, /^FEED_POLL_MS must be/],
      [{ DATABASE_URL: 'http://x' }, /^DATABASE_URL must be a postgres:\/\/ URL/],
      [{ PORT: '4000', METRICS_PORT: '4000' }, /^METRICS_PORT must differ from PORT/],
      [{ HOST: 'a b' }, /^HOST must be/],
    ] as const) expect(() => loadConfig(env as Record<string, string>)).toThrow(msg);
    // The URL of a bad DATABASE_URL is never echoed (it may carry a password).
    expect(() => loadConfig({ DATABASE_URL: 'mysql://root:hunter2@x' })).toThrow(/^(?!.*hunter2)/);
  });
});
