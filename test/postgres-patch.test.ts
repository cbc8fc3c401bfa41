import { afterAll, beforeAll, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import postgres from 'postgres';
import { createTestDatabase } from './harness.js';

/**
 * The patched dependency (patches/postgres+3.4.9.patch, porsager/postgres#1154, #1208, #1119): a transaction
 * whose connection is terminated in the middle must reject, never throw from a timer (which killed the
 * process), never run its later queries (the rollback) on the connection's next session, and the pool
 * must be usable again at once (unpatched, the dead session's unsent bytes and last error leaked into
 * the next one: CONNECT_TIMEOUT after 30 s, or the next BEGIN failing with 57P01). No result is read at
 * the wrong place: a query that failed mid-rows, or a session that died during its array-type fetch, must
 * not leave the row count behind (unpatched, the next query's rows came after holes: a one-row token
 * lookup read as no row, the outage test's 401).
 */
let db: { url: string; drop(): Promise<void> };
const crashes: unknown[] = [];
const onCrash = (e: unknown) => { crashes.push(e); };
beforeAll(async () => {
  db = await createTestDatabase();
  process.on('uncaughtException', onCrash);
});
afterAll(async () => {
  process.off('uncaughtException', onCrash);
  await db.drop();
});

test('the installed postgres.js is the patched one (npm ci runs patch-package from postinstall)', () => {
  // `require.resolve('postgres')` is cjs/src/index.js (the package exports no ./package.json).
  const dir = path.resolve(path.dirname(createRequire(import.meta.url).resolve('postgres')), '..', '..');
  for (const f of ['src/connection.js', 'cjs/src/connection.js', 'src/index.js', 'cjs/src/index.js']) {
    expect(readFileSync(path.join(dir, f), 'utf8'), f).toContain('patched');
  }
  for (const f of ['src/connection.js', 'cjs/src/connection.js']) {
    expect(readFileSync(path.join(dir, f), 'utf8'), f).toContain('porsager/postgres#1119'); // the row-count fix
  }
});

test('transactions whose connection is terminated mid-way reject cleanly, 40 times, and the pool serves at once', async () => {
  const sql = postgres(db.url, { max: 2, onnotice: () => {}, connect_timeout: 10 });
  const killer = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const t0 = Date.now();
      const r = await sql.begin(async (tx) => {
        const [{ pid }] = await tx`SELECT pg_backend_pid() AS pid`;
        // Typed: Citus adds a pg_terminate_backend(bigint, bigint) that makes an untyped argument ambiguous.
        await killer`SELECT pg_terminate_backend(${pid}::int)`;
        await tx`SELECT 1`;
        return 'committed';
      }).catch((e: { code?: string }) => e.code ?? 'error');
      outcomes.set(String(r), (outcomes.get(String(r)) ?? 0) + 1);
      // The next query gets a fresh session straight away (no CONNECT_TIMEOUT, no leaked 57P01).
      const [{ x }] = await sql`SELECT 1 AS x`;
      expect(x).toBe(1);
      expect(Date.now() - t0).toBeLessThan(5_000);
    }
    // Rejected as a lost connection (or the server's own 57P01 "terminating connection"), never anything else.
    for (const k of outcomes.keys()) expect(['CONNECTION_CLOSED', '57P01']).toContain(k);
    expect(crashes).toEqual([]);
  } finally {
    await sql.end({ timeout: 1 });
    await killer.end({ timeout: 1 });
  }
}, 120_000);

/** A FATAL ErrorResponse `57P01 terminating connection due to administrator command` (protocol v3). */
function fatal57P01(): Buffer {
  const fields = Buffer.concat([
    ...[['S', 'FATAL'], ['V', 'FATAL'], ['C', '57P01'], ['M', 'terminating connection due to administrator command']]
      .map(([k, v]) => Buffer.from(`${k}${v}\0`)),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

test('a connection that dies while it fetches the array types leaves no unhandled rejection (which killed the process), and the instance serves', async () => {
  // A TCP relay in front of the server that drops the connection the moment the client sends
  // postgres.js' array-type query (its first query on every new connection, sent from a handler nobody
  // awaits): the same as a backend terminated or a server restarted at that instant, every time.
  const net = await import('node:net');
  const target = new URL(db.url);
  let drops = 0;
  const dropNext = { n: 5 };
  const relay = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    client.on('data', (chunk) => {
      if (dropNext.n > 0 && chunk.includes('typarray')) {
        dropNext.n--;
        drops++;
        // What the server sends when its backend is terminated (pg_terminate_backend, a fast shutdown).
        client.end(fatal57P01());
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  const u = new URL(db.url);
  u.hostname = '127.0.0.1';
  u.port = String((relay.address() as { port: number }).port);
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => { rejections.push(e); };
  process.on('unhandledRejection', onRejection);
  try {
    const outcomes: string[] = [];
    for (let i = 0; i < 8; i++) {
      const sql = postgres(u.toString(), { max: 1, onnotice: () => {}, connect_timeout: 10 });
      const r = await sql`SELECT 1 AS x`.then((rows) => `ok ${rows[0].x}`, (e: { code?: string }) => e.code ?? 'error');
      outcomes.push(r);
      // The same instance serves afterwards (on a new connection).
      let next: string | null = null;
      for (let attempt = 0; attempt < 10 && next === null; attempt++) {
        next = await sql`SELECT 2 AS x`.then((rows) => `ok ${rows[0].x}`, (e: { code?: string; message?: string }) => {
          expect(e.code, e.message).toBe('57P01'); // sent while the relay still drops: failed with its connection
          return null;
        });
      }
      expect(next).toBe('ok 2');
      await sql.end({ timeout: 1 });
    }
    await new Promise((r) => setImmediate(r));
    expect(drops).toBe(5);
    expect(outcomes.filter((o) => o === 'ok 1').length).toBeGreaterThanOrEqual(3);
    expect(rejections).toEqual([]);
    expect(crashes).toEqual([]);
  } finally {
    process.off('unhandledRejection', onRejection);
    await new Promise<void>((r) => relay.close(() => r()));
  }
});

test('a query that fails after some of its rows does not shift the rows of the next query on its connection (porsager/postgres#1119)', async () => {
  // One connection: the failing query and the next one share its row counter. Unpatched, the counter stayed
  // at the failed query's row count and the next result came back with that many holes before its rows.
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    for (const failing of [5, 40]) {
      const e = await sql`SELECT CASE WHEN g < ${failing} THEN g ELSE 1 / (g - g) END AS v FROM generate_series(1, 1000) g`
        .then(() => null, (err: { code?: string }) => err);
      expect(e?.code).toBe('22012'); // division by zero, after `failing - 1` rows were sent
      const rows = await sql`SELECT g AS v FROM generate_series(1, 3) g`;
      expect(rows.length).toBe(3);
      expect([...rows]).toEqual([{ v: 1 }, { v: 2 }, { v: 3 }]);
      const [one] = await sql`SELECT ${'t1'}::text AS id`;
      expect(one).toEqual({ id: 't1' });
    }
  } finally {
    await sql.end({ timeout: 1 });
  }
});

test('a connection cut in the middle of its array-type rows starts its next session clean: the waiting query runs there, a one-row lookup reads its row', async () => {
  // The outage test's 401: a token lookup (one row) answered as no row. A connection's session died while
  // the rows of postgres.js' array-type query (its first query on every new connection) were coming in
  // (the backend terminated, or the server stopping). Unpatched, that session's last error and row count
  // went on into the next session on the same connection: the query waiting for the connection failed
  // there with the dead session's 57P01, the type fetch was skipped, and the next query's rows came after
  // as many holes as the type rows received (`const [row] = rows` was undefined).
  // A relay in front of the server lets the first rows of the array-type answer through, then sends what
  // the server sends when the backend is terminated (FATAL 57P01) and closes; later sessions pass untouched.
  const net = await import('node:net');
  const target = new URL(db.url);
  const cut = { remaining: 1, rowsBeforeCut: 3, cuts: 0 };
  const relay = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    let armed = false; // this session's array-type query has been sent and is to be cut
    let pending = Buffer.alloc(0);
    let rows = 0;
    client.on('data', (chunk) => {
      if (cut.remaining > 0 && chunk.includes('typarray')) { cut.remaining--; armed = true; }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!armed) { client.write(chunk); return; }
      // Forward whole messages (type byte, then an int32 length that counts itself) up to the cut.
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
        const size = 1 + pending.readInt32BE(1);
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        client.write(message);
        if (message[0] === 0x44 /* D: DataRow */ && ++rows === cut.rowsBeforeCut) {
          cut.cuts++;
          client.end(fatal57P01());
          upstream.destroy();
          return;
        }
      }
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  const u = new URL(db.url);
  u.hostname = '127.0.0.1';
  u.port = String((relay.address() as { port: number }).port);
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => { rejections.push(e); };
  process.on('unhandledRejection', onRejection);
  const sql = postgres(u.toString(), { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    // The first query waits for the connection, whose first session is cut: it runs on the next one.
    const first = await sql`SELECT 1 AS x`.then((rows) => [...rows], (e: { code?: string }) => e.code ?? 'error');
    expect(cut.cuts).toBe(1);
    expect.soft(first).toEqual([{ x: 1 }]);
    // A lookup of one row by a bytea key (as the token lookup), on the same connection.
    const key = Buffer.from('a1b2c3', 'hex');
    const rows = await sql`SELECT ${key} AS hash, 'token' AS id`;
    expect(rows.length).toBe(1);
    expect(rows[0]).toEqual({ hash: key, id: 'token' });
    // The new session fetched the array types again: an array parameter round-trips as an array.
    const [{ ids }] = await sql`SELECT ${sql.array([1, 2, 3])}::int[] AS ids`;
    expect(ids).toEqual([1, 2, 3]);
    await new Promise((r) => setImmediate(r));
    expect(rejections).toEqual([]);
    expect(crashes).toEqual([]);
  } finally {
    process.off('unhandledRejection', onRejection);
    await sql.end({ timeout: 1 });
    await new Promise<void>((r) => relay.close(() => r()));
  }
});
