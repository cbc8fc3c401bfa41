import { afterAll, beforeAll, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import postgres from 'postgres';
import { createTestDatabase } from './harness.js';

/**
 * The patched dependency (patches/postgres+3.4.9.patch, porsager/postgres#1154 and #1208): a transaction
 * whose connection is terminated in the middle must reject, never throw from a timer (which killed the
 * process), never run its later queries (the rollback) on the connection's next session, and the pool
 * must be usable again at once (unpatched, the dead session's unsent bytes and last error leaked into
 * the next one: CONNECT_TIMEOUT after 30 s, or the next BEGIN failing with 57P01).
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
        await killer`SELECT pg_terminate_backend(${pid})`;
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
