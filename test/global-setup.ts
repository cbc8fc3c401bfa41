import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbedded, type EmbeddedServer } from '../db/embedded.js';
import { PROJECT_DIR } from '../db/index.js';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { createScratchDatabase, freezeTemplate } from '../db/scratch.js';

let embedded: EmbeddedServer | null = null;

/**
 * Tests run against CITUS_URL when it is set (a Citus coordinator with workers: each test file's database
 * is then made on every node and its tables distributed by migrate, see db/scratch.ts), else against
 * DATABASE_URL when it is set (a real server), otherwise against an embedded PostgreSQL started once for
 * the run. Each test file then creates its own database on that server.
 */
export default async function setup(project: TestProject) {
  const citus = !!process.env.CITUS_URL;
  let url = process.env.CITUS_URL || process.env.DATABASE_URL;
  if (!url) {
    // Test databases are thrown away: no fsync (EMBEDDED_PG_DURABLE=1 to test with it on).
    runs.enter();
    embedded = await startEmbedded({ dir: path.join(PROJECT_DIR, '.data', 'test-pg'), durable: process.env.EMBEDDED_PG_DURABLE === '1' });
    url = embedded.url;
  }
  project.provide('databaseUrl', url);
  project.provide('citus', citus);
  // Every test gateway's database is a copy of one migrated once for the run (CREATE DATABASE … TEMPLATE):
  // a copy costs tens of milliseconds, migrating every one of them again most of a second on a loaded
  // machine. On a cluster the template is made, migrated and distributed on every node, and each copy is
  // made on every node (db/scratch.ts), which spares each file the Citus extension, the nodes and the
  // placement of every table as well.
  const template = await createScratchDatabase(url, 'gw_template');
  const sql = connect(template.url, { max: 1 });
  try { await migrate(sql); } finally { await sql.end({ timeout: 5 }); }
  await freezeTemplate(url, template.name);
  project.provide('templateDatabase', template.name);
  return async () => {
    await template.drop();
    // Another run of the suite in this checkout may share the embedded server (startEmbedded reuses a live
    // one): the server stops only when no other run is using it, else it stays up for them (and later runs).
    if (embedded && runs.leave()) await embedded.stop();
  };
}

/** The runs of the suite using the embedded server of `.data/test-pg`: one file per run, named by its PID. */
const runs = {
  dir: path.join(PROJECT_DIR, '.data', 'test-pg.runs'),
  enter() {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(path.join(this.dir, String(process.pid)), '');
  },
  /** Leaves; true when no other live run is left. */
  leave(): boolean {
    rmSync(path.join(this.dir, String(process.pid)), { force: true });
    return readdirSync(this.dir).every((name) => {
      try { process.kill(Number(name), 0); return false; } catch { rmSync(path.join(this.dir, name), { force: true }); return true; }
    });
  },
};

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** True when databaseUrl is CITUS_URL's coordinator. */
    citus: boolean;
    /** A database migrated for this run that test gateways' databases are copies of. */
    templateDatabase: string;
  }
}
