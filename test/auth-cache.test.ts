import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { connect, type Sql } from '../db/connection.js';
import { hashToken } from '../domain/tokens.js';
import { newId } from '../domain/ids.js';
import { buildApp, type App } from '../server/app.js';
import { gql, startTestGateway, type TestGateway } from './harness.js';
import { until } from './support/until.js';

/**
 * The authenticated-token cache (server/token-cache.ts), over two instances on one database: a revoked
 * token is refused at once by the instance that revoked it and within milliseconds by the others
 * (notification), misses are not cached, and the cache is dropped and unused while the notification
 * bus is not known healthy.
 */

let g: TestGateway;
let A: App;
let B: App;
const extra: { app: App; sql: Sql }[] = [];

beforeAll(async () => {
  g = await startTestGateway();
  A = g.app;
  B = await g.startInstance();
});
afterAll(async () => {
  for (const e of extra) { await e.app.stop().catch(() => {}); await e.sql.end({ timeout: 1 }); }
  await g?.stop();
});

const Q = '{ __typename }';
const status = async (app: App, secret: string) => (await gql(app.url, secret, Q)).status;

async function newToken(role = 'reader'): Promise<{ id: string; secret: string }> {
  const r = await g.gql(`mutation($r: TokenRole!) { createToken(input: { role: $r }) { ... on CreatedToken { id secret } } }`, { r: role });
  expect(r.errors).toBeUndefined();
  return r.data.createToken;
}

async function revokeThrough(app: App, id: string) {
  const r = await gql(app.url, g.admin, `mutation($id: ID!) { revokeToken(tokenID: $id) }`, { id });
  expect(r.data?.revokeToken).toBe(true);
}

/** Uses the token until the instance serves it from its cache (asserts it does). */
async function warm(app: App, secret: string) {
  expect(await status(app, secret)).toBe(200);
  const hits = app.tokens.stats.hits;
  expect(await status(app, secret)).toBe(200);
  expect(app.tokens.stats.hits).toBe(hits + 1);
}

/** Token notices reach `app`'s bus `ms` late (everything else on time). */
function delayTokenNotices(app: App, ms: number): () => void {
  const bus = app.gateway.bus as unknown as { dispatch(topic: string, n: unknown): void };
  const original = bus.dispatch;
  bus.dispatch = function (topic, n) {
    if (topic === 'tokens') setTimeout(() => original.call(this, topic, n), ms);
    else original.call(this, topic, n);
  };
  return () => { bus.dispatch = original; };
}

/** Revokes a token with its notice lost: the trigger (migration 010) does not fire in replica mode. */
async function revokeSilently(id: string) {
  await g.sql.begin(async (tx) => {
    await tx`SET LOCAL session_replication_role = replica`;
    await tx`UPDATE tokens SET revoked_at = now() WHERE id = ${id}`;
  });
}

/** How long `pred` took to hold (failing after `ms`). */
async function waitFor(pred: () => boolean | Promise<boolean>, ms: number): Promise<number> {
  const t0 = Date.now();
  await until('the condition', pred, ms);
  return Date.now() - t0;
}

describe('token cache', () => {
  it('a known token costs no database round trip', async () => {
    const t = await newToken();
    await warm(A, t.secret);
    g.queries.reset();
    for (let i = 0; i < 5; i++) expect(await status(A, t.secret)).toBe(200);
    expect(g.queries.log.filter((q) => q.includes('FROM tokens WHERE hash'))).toEqual([]);
  });

  it('a token used on B and revoked through A is refused by B as soon as the notification arrives', async () => {
    const t = await newToken();
    await warm(B, t.secret);
    await revokeThrough(A, t.id);
    const ms = await waitFor(async () => (await status(B, t.secret)) === 401, 2_000);
    expect(ms).toBeLessThan(2_000);
    expect(await status(A, t.secret)).toBe(401);
  });

  it('an operator\'s manual UPDATE or DELETE of a token reaches every instance too (trigger notice)', async () => {
    // Revoked by hand: refused by both instances within milliseconds, not at the cache's TTL.
    const t = await newToken();
    await warm(A, t.secret);
    await warm(B, t.secret);
    await g.sql`UPDATE tokens SET revoked_at = now() WHERE id = ${t.id}`;
    expect(await waitFor(async () => (await status(A, t.secret)) === 401 && (await status(B, t.secret)) === 401, 2_000)).toBeLessThan(2_000);
    // A role changed by hand: the cached admin actor is dropped, the next request reads the new role.
    const admin = await newToken('admin');
    const adminOnly = `mutation { createToken(input: { role: reader }) { __typename } }`;
    expect((await gql(B.url, admin.secret, adminOnly)).data?.createToken?.__typename).toBe('CreatedToken');
    await warm(B, admin.secret);
    await g.sql`UPDATE tokens SET role = 'reader' WHERE id = ${admin.id}`;
    await waitFor(async () => ((await gql(B.url, admin.secret, adminOnly)).errors?.[0]?.extensions?.code) === 'FORBIDDEN', 2_000);
    // Deleted by hand.
    const d = await newToken();
    await warm(B, d.secret);
    await g.sql`DELETE FROM tokens WHERE id = ${d.id}`;
    await waitFor(async () => (await status(B, d.secret)) === 401, 2_000);
  });

  it('the revoking instance refuses the token at once, without waiting for its notification', async () => {
    const t = await newToken();
    await warm(A, t.secret);
    await warm(B, t.secret);
    const restore = delayTokenNotices(A, 1_500);
    try {
      await revokeThrough(A, t.id);
      expect(await status(A, t.secret)).toBe(401); // no polling: the very next request
      expect(A.tokens.stats.hits).toBeGreaterThan(0);
      // B (notices on time) follows within milliseconds.
      await waitFor(async () => (await status(B, t.secret)) === 401, 2_000);
    } finally {
      restore();
    }
  });

  it('a newly created token works at once on every instance, even right after being refused', async () => {
    const secret = 'gw_' + randomBytes(24).toString('base64url');
    expect(await status(A, secret)).toBe(401);
    expect(await status(B, secret)).toBe(401);
    await g.sql`INSERT INTO tokens (id, hash, role, directory, label) VALUES (${newId('token')}, ${hashToken(secret)}, 'reader', NULL, 'late')`;
    expect(await status(A, secret)).toBe(200);
    expect(await status(B, secret)).toBe(200);
    const t = await newToken();
    expect(await status(B, t.secret)).toBe(200);
  });

  it('is not used while the bus is not known healthy (pings not coming back)', async () => {
    const t = await newToken();
    await warm(B, t.secret);
    // Revoked with its notification lost.
    await revokeSilently(t.id);
    expect(await status(B, t.secret)).toBe(200); // still cached: nothing told B
    // B's last pong is older than two ping periods (but not three, which would make it relisten).
    const bus = B.gateway.bus as unknown as { lastPong: number };
    bus.lastPong = Date.now() - 5_000;
    expect(B.gateway.bus.healthy).toBe(false);
    expect(await status(B, t.secret)).toBe(401);
    expect(B.tokens.size).toBe(0);
    // Healthy again after the next pong, and the cache works again.
    await waitFor(() => B.gateway.bus.healthy, 5_000);
    const u = await newToken();
    await warm(B, u.secret);
  });

  it('is cleared when the listening connection is lost, so a missed revocation does not survive the reconnect', async () => {
    const t = await newToken();
    await warm(A, t.secret);
    await warm(B, t.secret);
    await revokeSilently(t.id); // its notice is lost
    expect(await status(B, t.secret)).toBe(200);
    const before = [A.gateway.bus.resyncs + A.gateway.bus.relistens, B.gateway.bus.resyncs + B.gateway.bus.relistens];
    const epochs = [A.gateway.bus.healthEpoch, B.gateway.bus.healthEpoch];
    const killed = await g.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND query ILIKE 'listen%' AND pid <> pg_backend_pid()`;
    expect(killed.length).toBe(2);
    // The loss itself is noticed (connection closed), before LISTEN is back: A is asked meanwhile.
    await waitFor(() => A.gateway.bus.healthEpoch > epochs[0] && B.gateway.bus.healthEpoch > epochs[1], 5_000);
    expect(await status(A, t.secret)).toBe(401);
    // B is asked nothing until its bus is healthy again: its entries, filled before the loss, are gone.
    await waitFor(() => A.gateway.bus.resyncs + A.gateway.bus.relistens > before[0] && B.gateway.bus.resyncs + B.gateway.bus.relistens > before[1], 10_000);
    await waitFor(() => A.gateway.bus.healthy && B.gateway.bus.healthy, 10_000);
    expect(await status(B, t.secret)).toBe(401);
    // And notifications work again: a revocation after the reconnect still reaches B.
    const u = await newToken();
    await warm(B, u.secret);
    await revokeThrough(A, u.id);
    await waitFor(async () => (await status(B, u.secret)) === 401, 2_000);
  });

  it('is not used from the moment the listening connection closes until LISTEN is back (reconnection refused for a while)', async () => {
    const t = await newToken();
    await warm(B, t.secret);
    await revokeSilently(t.id); // its notice is lost
    expect(await status(B, t.secret)).toBe(200);
    const [{ db }] = await g.sql`SELECT current_database() AS db`;
    const comebacks = B.gateway.bus.resyncs + B.gateway.bus.relistens;
    // New connections are refused, so postgres.js's re-subscription cannot succeed for now.
    const server = connect(inject('databaseUrl'), { max: 1 }); // ALTER DATABASE from another database
    await server.unsafe(`ALTER DATABASE ${db} ALLOW_CONNECTIONS false`);
    try {
      await g.sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'listen%' AND pid <> pg_backend_pid()`;
      await waitFor(() => !B.gateway.bus.healthy, 300); // the closed connection is noticed, well within two ping periods of the last pong
      expect(await status(B, t.secret)).toBe(401); // B's pool still has its connections
    } finally {
      await server.unsafe(`ALTER DATABASE ${db} ALLOW_CONNECTIONS true`);
      await server.end();
    }
    // LISTEN comes back (postgres.js retrying, or the bus subscribing anew); the cache works again.
    await waitFor(() => B.gateway.bus.resyncs + B.gateway.bus.relistens > comebacks && B.gateway.bus.healthy, 15_000);
    const u = await newToken();
    await warm(B, u.secret);
    await revokeThrough(A, u.id);
    await waitFor(async () => (await status(B, u.secret)) === 401, 2_000);
  }, 30_000);

  it('is bounded (least recently used first) and entries expire', async () => {
    const sql = connect(g.dbUrl, { max: 4 });
    const C = buildApp({ sql, gateway: { sweepIntervalMs: 0 }, tokenCache: { maxEntries: 2, ttlMs: 400 } });
    await C.start();
    extra.push({ app: C, sql });
    const [t1, t2, t3] = [await newToken(), await newToken(), await newToken()];
    for (const t of [t1, t2, t1, t3]) expect(await status(C, t.secret)).toBe(200);
    expect(C.tokens.size).toBe(2);
    let misses = C.tokens.stats.misses;
    expect(await status(C, t1.secret)).toBe(200); // recently used: kept
    expect(C.tokens.stats.misses).toBe(misses);
    expect(await status(C, t2.secret)).toBe(200); // the least recently used was dropped
    expect(C.tokens.stats.misses).toBe(misses + 1);
    // A revocation whose notice is lost holds at the latest after the TTL.
    await revokeSilently(t2.id);
    expect(await status(C, t2.secret)).toBe(200);
    const now = C.tokens.now;
    C.tokens.now = () => now() + 400; // the TTL has passed
    misses = C.tokens.stats.misses;
    expect(await status(C, t2.secret)).toBe(401);
    expect(C.tokens.stats.misses).toBe(misses + 1);
  });
});
