import { describe, expect, it } from 'vitest';
import { connect } from '../db/connection.js';
import { migrate, migrationFiles } from '../db/migrate.js';
import { createTestDatabase } from './harness.js';

describe('migrations', () => {
  it('apply each file once, in order, even when several instances start at once', async () => {
    const db = await createTestDatabase();
    const conns = Array.from({ length: 4 }, () => connect(db.url, { max: 1 }));
    try {
      const results = await Promise.all(conns.map((c) => migrate(c)));
      const all = results.flat();
      expect(all).toEqual(migrationFiles().map((m) => m.name));
      const rows = await conns[0]`SELECT version FROM schema_migrations ORDER BY version`;
      expect(rows.map((r) => r.version)).toEqual(migrationFiles().map((m) => m.version));
      expect(await migrate(conns[0])).toEqual([]);
    } finally {
      for (const c of conns) await c.end();
      await db.drop();
    }
  });
});
