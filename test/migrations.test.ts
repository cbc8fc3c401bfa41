import { describe, expect, it } from 'vitest';
import { connect } from '../db/connection.js';
import { migrate, migrationFiles } from '../db/migrate.js';
import { createTestDatabase } from './harness.js';
import { GraphQLEnumType } from 'graphql';
import { schema } from '../schema/index.js';

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

  it('the host_commands kind check accepts every HostCommandKind of the schema (migrations written side by side once dropped some)', async () => {
    const db = await createTestDatabase();
    const c = connect(db.url, { max: 1 });
    try {
      await migrate(c);
      const [{ def }] = await c`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'host_commands_kind_check'`;
      const kinds = (schema.getType('HostCommandKind') as GraphQLEnumType).getValues().map((v) => v.name);
      expect(kinds.length).toBeGreaterThan(4);
      for (const k of kinds) expect(def, k).toContain(`'${k}'`);
    } finally {
      await c.end();
      await db.drop();
    }
  });
});
