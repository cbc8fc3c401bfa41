import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { SCHEMA_SQL_FILE, schemaSql } from '../db/schema-sql.js';
import { createTestDatabase } from './harness.js';

describe('db/schema.sql', () => {
  it('is the schema the migrations leave (else: npm run schema:sql)', async () => {
    const db = await createTestDatabase();
    const c = connect(db.url, { max: 1 });
    try {
      await migrate(c);
      const current = await schemaSql(c);
      expect(current).toContain('CREATE TABLE sessions (');
      expect(current).toContain('FUNCTION public.sequence_settlements(');
      expect(readFileSync(SCHEMA_SQL_FILE, 'utf8'), 'db/schema.sql is stale: run `npm run schema:sql`').toBe(current);
    } finally {
      await c.end();
      await db.drop();
    }
  });
});
