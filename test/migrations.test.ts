import { describe, expect, it } from 'vitest';
import { connect } from '../db/connection.js';
import { migrate, migrationFiles } from '../db/migrate.js';
import { splitStatements } from '../db/sql-statements.js';
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

  it('split into statements as PostgreSQL reads them (what a Citus coordinator is sent, one at a time): every file, and the quoting of a script', async () => {
    // Semicolons in comments, strings, identifiers, dollar-quoted bodies and parentheses end nothing; comment-only pieces are left out.
    expect(splitStatements(`-- a; b
SELECT 1; /* x; /* nested; */ y; */ SELECT 'a;''b', E'\\';', "c;""d";
CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $body$ BEGIN PERFORM 1; RETURN $$;$$::int; END $body$;
DO $$ BEGIN RAISE NOTICE ';'; END $$; SELECT $1, a$b; CREATE RULE r AS ON INSERT TO t DO ALSO (SELECT 1; SELECT 2);
-- the end;
`)).toEqual([
      '-- a; b\nSELECT 1',
      `/* x; /* nested; */ y; */ SELECT 'a;''b', E'\\';', "c;""d"`,
      'CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $body$ BEGIN PERFORM 1; RETURN $$;$$::int; END $body$',
      "DO $$ BEGIN RAISE NOTICE ';'; END $$",
      'SELECT $1, a$b',
      'CREATE RULE r AS ON INSERT TO t DO ALSO (SELECT 1; SELECT 2)',
    ]);
    expect(() => splitStatements(`SELECT 'open`)).toThrow(/unterminated/);
    expect(() => splitStatements(`CREATE FUNCTION g() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END`)).toThrow(/BEGIN ATOMIC/);

    // Every migration file: nothing but the separating semicolons is lost or added, and PostgreSQL is the judge that
    // each piece is one whole statement (the extended protocol refuses several in one; a cut one is a syntax error).
    const files = migrationFiles();
    const bare = (s: string) => s.replace(/--[^\n]*/g, '').replace(/[\s;]+/g, '');
    for (const m of files) expect(splitStatements(m.sql).map(bare).join(''), m.name).toBe(bare(m.sql));
    const bodies = files.flatMap((m) => splitStatements(m.sql)).filter((s) => /\$\$[\s\S]*;[\s\S]*\$\$/.test(s));
    expect(bodies.length).toBeGreaterThan(5); // functions and DO blocks whose bodies hold semicolons, kept whole
    const db = await createTestDatabase();
    const c = connect(db.url, { max: 1 });
    try {
      let n = 0;
      await c.begin(async (tx) => {
        for (const m of files) for (const s of splitStatements(m.sql)) { await tx.unsafe(s); n++; }
      });
      expect(n).toBeGreaterThan(files.length * 2);
      const [{ cols }] = await c`SELECT count(*)::int AS cols FROM information_schema.columns WHERE table_name = 'executions' AND column_name LIKE 'cache_write_%'`;
      expect(cols).toBe(3);
      const [{ fns }] = await c`SELECT count(*)::int AS fns FROM pg_proc WHERE proname LIKE 'sequence_settlements%'`;
      expect(fns).toBeGreaterThan(0);
    } finally {
      await c.end();
      await db.drop();
    }
  });
});
