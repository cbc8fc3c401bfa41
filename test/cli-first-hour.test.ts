// What a new user meets on the command line (--help: test/cli-help.test.ts): a busy port reported
// before the database starts, database errors naming DATABASE_URL and the host, a "stopped" log line, and
// the demo's temporary worktree removed. The CLI runs from the sources (tsx), as `npm run dev` does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_DIR } from '../db/index.js';
import { connect } from '../db/connection.js';
import { cli } from './support/cli.js';
import { createTestDatabase, startTestGateway } from './harness.js';
import { runDemo } from '../host/demo.js';


let tmp: string;
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-first-hour-')); });
afterAll(() => { if (tmp) fs.rmSync(tmp, { recursive: true, force: true }); });

it('a busy port stops the start at once, before the embedded database is started', async () => {
  const busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
  const port = (busy.address() as net.AddressInfo).port;
  try {
    const pgDir = path.join(tmp, 'pg-never');
    const r = cli(['serve'], { PORT: String(port), GATEWAY_DATA_DIR: pgDir });
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(`gateway: port ${port} on 127.0.0.1 is already in use (another gateway is running? set PORT)`);
    expect(fs.existsSync(pgDir)).toBe(false); // no database was initialised or started
  } finally {
    busy.close();
  }
});

it('an unreachable database is one line naming DATABASE_URL and the host (never the password)', () => {
  for (const args of [['serve'], ['migrate'], ['token', 'create', '--role', 'reader']]) {
    const r = cli(args, { PORT: '0', DATABASE_URL: 'postgres://someone:s3cret-pw@127.0.0.1:1/gw' });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([expect.stringMatching(/^gateway: cannot use the database of DATABASE_URL \(127\.0\.0\.1:1\/gw\): ECONNREFUSED/)]);
    expect(r.stderr + r.stdout).not.toContain('s3cret-pw');
  }
});

it('a database that never answers is given up on after DB_CONNECT_TIMEOUT_MS, logged with its host, and the exit says why', async () => {
  // A server that takes connections and never says a word (postgres.js waits for its answer to the startup):
  // what a DATABASE_URL behind a route that drops packets looks like. (While spawnSync waits, the kernel still
  // completes the connections of the listening socket.)
  const silent = net.createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as net.AddressInfo).port;
  try {
    for (const args of [['serve'], ['token', 'create', '--role', 'reader']]) {
      const t0 = Date.now();
      const r = cli(args, { PORT: '0', DATABASE_URL: `postgres://someone:s3cret-pw@127.0.0.1:${port}/gw`, DB_CONNECT_TIMEOUT_MS: '500' });
      expect(r.status).toBe(1);
      expect(Date.now() - t0).toBeLessThan(30_000);
      const why = `cannot use the database of DATABASE_URL (127.0.0.1:${port}/gw): it did not answer within 0.5 s (CONNECT_TIMEOUT; DB_CONNECT_TIMEOUT_MS sets how long to wait)`;
      expect(r.stderr.trim().split('\n')).toEqual([`gateway: ${why} (is PostgreSQL running there, and is DATABASE_URL right?)`]);
      expect(r.stderr + r.stdout).not.toContain('s3cret-pw');
      if (args[0] !== 'serve') continue;
      const log = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(log.map((l) => [l.level, l.msg, l.database])).toEqual([
        ['info', 'connecting to the database', `127.0.0.1:${port}/gw`], ['error', 'cannot use the database', `127.0.0.1:${port}/gw`],
      ]);
      expect(log[0].timeoutMs).toBe(500);
    }
  } finally {
    silent.close();
  }
});

it('token create refuses where no gateway has run (naming the folder or URL and how to name the right one); it says which database it wrote to', async () => {
  // Another data folder (another GATEWAY_DATA_DIR, or another HOME of an installed package): nothing is created there.
  const elsewhere = path.join(tmp, 'not-the-gateways', 'pg');
  const none = cli(['token', 'create', '--role', 'admin'], { GATEWAY_DATA_DIR: elsewhere });
  expect(none.status).toBe(1);
  expect(none.stdout).toBe('');
  expect(none.stderr.trim().split('\n')).toEqual([`gateway: no gateway database in ${elsewhere} (GATEWAY_DATA_DIR): no gateway has run with this data folder, `
    + 'so no gateway would accept a token made here. Run this command with the GATEWAY_DATA_DIR (or DATABASE_URL) of the gateway that should accept it: '
    + 'its start prints its folder ("with embedded PostgreSQL in <folder>"); or start a gateway here first (gateway serve)']);
  expect(fs.existsSync(path.dirname(elsewhere))).toBe(false);

  // A PostgreSQL database no gateway has used: refused, and left without the gateway's tables.
  const empty = await createTestDatabase();
  const migrated = await createTestDatabase({ migrated: true });
  try {
    const address = (url: string) => { const u = new URL(url); return `${u.hostname}:${u.port}${u.pathname}`; };
    for (const args of [['token', 'create', '--role', 'reader'], ['token', 'revoke', 'tok_x']]) {
      const r = cli(args, { DATABASE_URL: empty.url });
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toBe(`gateway: no gateway database at DATABASE_URL (${address(empty.url)}): it holds no gateway tables, so no gateway would accept a token made there. `
        + 'Set DATABASE_URL to the database of the gateway that should accept it, or start a gateway on this one first (gateway serve, or gateway migrate)');
    }
    const sql = connect(empty.url, { max: 1 });
    try {
      expect(await sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`).toEqual([]);
    } finally {
      await sql.end();
    }

    // A gateway's database: the token, with where it was written (the URL without its user or password).
    const made = cli(['token', 'create', '--role', 'reader', '--label', 'review'], { DATABASE_URL: migrated.url });
    expect(made.status, made.stderr).toBe(0);
    const [head, secret] = made.stdout.trim().split('\n');
    expect(head).toMatch(new RegExp(`^token tok_\\S+ \\(reader\\), written to DATABASE_URL \\(${address(migrated.url).replace(/[.]/g, '\\.')}\\):$`));
    expect(secret).toMatch(/^gw_[\w-]{32}$/);
    const id = /^token (\S+)/.exec(head)![1];
    const revoked = cli(['token', 'revoke', id], { DATABASE_URL: migrated.url });
    expect({ out: revoked.stdout.trim(), err: revoked.stderr }).toEqual({ out: `revoked ${id} in DATABASE_URL (${address(migrated.url)})`, err: "" });
  } finally {
    await empty.drop();
    await migrated.drop();
  }
}, 120_000);

it('logs "stopped" when a signal has stopped it', async () => {
  const db = await createTestDatabase();
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'serve'], {
      cwd: PROJECT_DIR, env: { ...process.env, DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'info', DB_POOL: '2' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b) => { out += b; });
    child.stderr.on('data', (b) => { out += b; });
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    await expect.poll(() => out.includes('"msg":"listening"'), { timeout: 60_000, interval: 100 }).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    expect(lines.map((l) => l.msg).slice(-2)).toEqual(['stopping', 'stopped']);
    expect(lines.at(-1)).toMatchObject({ level: 'info', signal: 'SIGTERM' });
  } finally {
    await db.drop();
  }
}, 90_000);

it('the demo removes its temporary worktree (its changesets stay frozen on the gateway); --keep-worktree keeps it', async () => {
  const g = await startTestGateway();
  try {
    const demo = await runDemo(['--url', g.url], () => {}, { GATEWAY_TOKEN: g.admin });
    expect(fs.existsSync(demo.worktree)).toBe(false);
    const r = await g.gql(`query($id: ID!) { execution(id: $id) { changeset { files { path status } } } }`, { id: demo.changedID });
    expect(r.data.execution.changeset.files.map((f: any) => f.path).sort()).toEqual(['greeting.txt', 'notes.md']);
    const kept = await runDemo(['--url', g.url, '--keep-worktree'], () => {}, { GATEWAY_TOKEN: g.admin });
    expect(fs.existsSync(path.join(kept.worktree, 'greeting.txt'))).toBe(true);
    fs.rmSync(kept.worktree, { recursive: true, force: true });
    // A token the gateway refuses: the demo says whose token, which it was, and the command that makes one.
    const temp = fs.mkdtempSync(path.join(tmp, 'demo-refused-'));
    await expect(runDemo(['--url', g.url], () => {}, { GATEWAY_TOKEN: `gw_${'x'.repeat(32)}`, TMPDIR: temp })).rejects.toThrow(
      `the gateway at ${g.url} did not accept the token of GATEWAY_TOKEN: The gateway refused this token: it is unknown or revoked. `
      + 'Make a new one where the gateway runs (with its data folder or DATABASE_URL): gateway token create --role reader (or plugin, host, admin). '
      + '(The demo needs an admin token, or a host token with a plugin token in GATEWAY_PLUGIN_TOKEN.)');
    expect(fs.readdirSync(temp)).toEqual([]);
  } finally {
    await g.stop();
  }
}, 120_000);

it('`npx gateway` runs the linked bin at once: no install of the project into npx\'s cache, no read of the tree', () => {
  // The command comes from the workspace bin/npx (linked into node_modules/.bin), not a root `bin`, which
  // made npx install the project into its cache and read the whole dependency tree on every call.
  expect(JSON.parse(fs.readFileSync(path.join(PROJECT_DIR, 'package.json'), 'utf8')).bin).toBeUndefined();
  expect(fs.realpathSync(path.join(PROJECT_DIR, 'node_modules', '.bin', 'gateway'))).toBe(path.join(PROJECT_DIR, 'bin', 'npx', 'gateway.mjs'));
  const r = spawnSync('npm', ['exec', '--loglevel=silly', '--', 'gateway', '--version'], { cwd: PROJECT_DIR, encoding: 'utf8', timeout: 300_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout.trim().split('\n').at(-1)).toBe(JSON.parse(fs.readFileSync(path.join(PROJECT_DIR, 'package.json'), 'utf8')).version);
  expect(r.stderr).not.toMatch(/shrinkwrap|_npx|reify|loadActual/);
}, 300_000);
