import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PROJECT_DIR } from '../db/index.js';
import { createTestDatabase } from './harness.js';
import { until } from './support/until.js';

/**
 * The production entry and `npm start`: the compiled gateway runs
 * with node alone as one process; a signal to whichever PID of `npm start` a supervisor holds (npm, or
 * node, which the script's shell `exec`s into) or to its process group (Ctrl-C) stops the gateway and
 * its embedded PostgreSQL, leaving nothing running; bad options and a port in use stop the start
 * with one line.
 */
const pgDir = mkdtempSync(path.join(tmpdir(), 'gateway-signals-'));
const children: ChildProcess[] = [];
let db: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  // Builds dist/ when it is stale, as `npm start` would.
  const r = spawnSync(process.execPath, ['bin/gateway.mjs', '--version'], { cwd: PROJECT_DIR, encoding: 'utf8', timeout: 300_000 });
  expect(r.status, r.stderr).toBe(0);
  db = await createTestDatabase();
}, 320_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) try { process.kill(-c.pid!, 'SIGKILL'); } catch {}
  await db?.drop();
  rmSync(pgDir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); } catch { return false; }
  // A zombie (exited, not yet reaped) is not running.
  try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; }
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}


/** `npm start` in its own process group, on the embedded PostgreSQL in pgDir. */
async function npmStart() {
  const port = await freePort();
  const child = spawn('npm', ['start'], {
    cwd: PROJECT_DIR,
    detached: true,
    env: { ...process.env, DATABASE_URL: '', PORT: String(port), GATEWAY_DATA_DIR: pgDir, EMBEDDED_PG_PORT: String(await freePort()), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => { exitCode = code; r(code); }));
  // Fails at once when it exits first, and says what it printed either way.
  const line = await until('the gateway to listen', () => {
    const l = out.split('\n').find((x) => x.includes('"msg":"listening"'));
    if (!l && exitCode !== undefined) throw new Error(`npm start exited (${exitCode}) before listening:\n${out.slice(-4000)}`);
    return l;
  }, 120_000).catch((e: Error) => { throw exitCode === undefined ? new Error(`${e.message}; it printed:\n${out.slice(-4000)}`) : e; });
  const listening = JSON.parse(line);
  const pgPid = Number(readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return { child, npm: child.pid!, node: listening.pid as number, pg: pgPid, port, exited, output: () => out };
}

describe('npm start', () => {
  it('runs the compiled gateway in production mode, as npm → node (the shell execs)', async () => {
    const s = await npmStart();
    expect(parentOf(s.node)).toBe(s.npm);
    const cmd = readFileSync(`/proc/${s.node}/cmdline`, 'utf8').split('\0');
    expect(cmd.slice(0, 3)).toEqual([cmd[0], 'bin/gateway.mjs', 'serve']);
    expect(cmd[0]).toMatch(/node$/);
    expect(s.output()).toContain('"nodeEnv":"production"');
    const health = await (await fetch(`http://127.0.0.1:${s.port}/health`)).json();
    expect(health.version).toBe(JSON.parse(readFileSync(path.join(PROJECT_DIR, 'package.json'), 'utf8')).version);
    process.kill(s.npm, 'SIGTERM');
    expect(await s.exited).toBe(0);
    await until('node and postgres to end', () => !alive(s.node) && !alive(s.pg), 30_000);
  }, 180_000);

  for (const [target, signal] of [['npm', 'SIGINT'], ['node', 'SIGTERM'], ['node', 'SIGINT'], ['group', 'SIGINT']] as const) {
    it(`stops cleanly on ${signal} to ${target === 'group' ? 'the process group (Ctrl-C)' : `the ${target} PID`}`, async () => {
      const s = await npmStart();
      if (target === 'group') process.kill(-s.npm, signal);
      else process.kill(target === 'npm' ? s.npm : s.node, signal);
      await s.exited;
      await until('node and postgres to end', () => !alive(s.node) && !alive(s.pg), 30_000);
      expect(s.output()).toContain(`"signal":"${signal}"`);
      expect(s.output()).not.toMatch(/\n\s+at /); // no stack trace
      // PostgreSQL shut down by the gateway (its pid file removed), nothing left in the group.
      expect(existsSync(path.join(pgDir, 'postmaster.pid'))).toBe(false);
      // A helper the gateway started (esbuild's service, when the review page was being built at the
      // first start) ends with its parent's pipe: the group is empty a moment later, never left running.
      await until('the process group to be empty', () => { try { process.kill(-s.npm, 0); return false; } catch { return true; } }, 15_000);
    }, 180_000);
  }
});

describe('the production entry (node dist/cli/main.js)', () => {
  const run = (args: string[], env: Record<string, string>) =>
    spawnSync(process.execPath, ['dist/cli/main.js', ...args], { cwd: PROJECT_DIR, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });

  it('prints its version', () => {
    const r = run(['--version'], {});
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('refuses a bad option with one line and exit code 2, before touching the database', () => {
    for (const [name, value, says] of [
      ['PORT', 'eighty', 'PORT must be an integer from 0 to 65535 (got "eighty")'],
      ['DB_POOL', '-3', 'DB_POOL must be an integer'],
      ['LOG_LEVEL', 'chatty', 'LOG_LEVEL must be one of'],
      ['MAX_DEPTH', '0', 'MAX_DEPTH must be an integer from 1'],
      ['DATABASE_URL', 'mysql://x', 'DATABASE_URL must be a postgres:// URL'],
      ['METRICS_TOKEN', 'short', 'METRICS_TOKEN must be at least 16 characters'],
    ]) {
      const r = run(['serve'], { [name]: value, GATEWAY_DATA_DIR: path.join(pgDir, 'never') });
      expect(r.status, `${name}=${value}`).toBe(2);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain(says);
      expect(existsSync(path.join(pgDir, 'never'))).toBe(false);
    }
  });

  it('a port in use is one clear line, no stack, and exit code 1', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const r = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const c = spawn(process.execPath, ['dist/cli/main.js', 'serve'], { cwd: PROJECT_DIR, env: { ...process.env, DATABASE_URL: db.url, PORT: String(port) } });
        let stderr = '';
        c.stderr.on('data', (d) => { stderr += d; });
        c.on('exit', (status) => resolve({ status, stderr }));
      });
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toBe(`gateway: port ${port} on 127.0.0.1 is already in use (another gateway is running? set PORT)`);
    } finally {
      blocker.close();
    }
  }, 60_000);
});
