// The `gateway` command as a user installs it (docs/running.md, "Installing the command"): the tarball of
// `npm run package` installed into a scratch global prefix, run from a directory that has nothing to do
// with the checkout, with that prefix's bin first on PATH. The checkout's own `npx gateway` is not involved.
//
// Its subject is the package, not the database server: one of the files CI runs in its first leg only
// (vitest.config.ts, DATABASE_INDEPENDENT); its `gateway serve` uses a database of the run's server. It reuses
// dist/ when it is up to date (else `npm run package` builds it).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_DIR } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { openBrowser } from './support/browser.js';
import { until } from './support/until.js';

const run = promisify(execFile);
const VERSION = JSON.parse(fs.readFileSync(path.join(PROJECT_DIR, 'package.json'), 'utf8')).version as string;

/**
 * The environment of a user's shell, for the installed command: none of the npm_* variables `npm test` sets for
 * its scripts, nor vitest's (NODE_ENV=test among them).
 */
const userEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|VITEST|NODE_ENV$)/i.test(k))) as Record<string, string>;

let tmp: string;
let prefix: string;
let installed: string;
let project: string;
let env: Record<string, string>;
const timings: string[] = [];

/** Runs the installed `gateway` in the user's project; never throws: the exit code is in `code`. */
async function gateway(args: string[], extra: Record<string, string> = {}) {
  const r = await run('gateway', args, { cwd: project, env: { ...env, ...extra }, timeout: 60_000 })
    .then((x) => ({ ...x, code: 0 }))
    .catch((e: { stdout?: string; stderr?: string; code?: number }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: e.code ?? -1 }));
  return r as { stdout: string; stderr: string; code: number };
}

describe('the installed `gateway` command', () => {
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-install-'));
    prefix = path.join(tmp, 'prefix');
    installed = path.join(prefix, 'lib', 'node_modules', 'agent-history-gateway');
    project = path.join(tmp, 'project');
    fs.mkdirSync(project);
    // A user's project of its own, where `npx gateway` used to answer "could not determine executable to run".
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'a-users-project', version: '1.0.0', private: true }));
    let t = Date.now();
    const packed = await run(process.execPath, [path.join(PROJECT_DIR, 'bin', 'package.mjs'), '--pack-destination', tmp], { cwd: PROJECT_DIR, timeout: 600_000 });
    const tarball = packed.stdout.trim();
    timings.push(`pack ${((Date.now() - t) / 1000).toFixed(1)} s`);
    t = Date.now();
    // --os=none leaves out the optional dependencies' platform binaries (Claude Code, OpenCode and PostgreSQL:
    // over 600 MB that this test does not run); --omit=optional would not, since npm applies no --omit to a
    // global install's dependencies (npm/cli#8284). npm's cache is warm after `npm ci`: nothing is downloaded.
    await run('npm', ['install', '-g', '--prefix', prefix, tarball, '--os=none', '--prefer-offline', '--no-audit', '--no-fund'],
      { cwd: tmp, timeout: 300_000 });
    timings.push(`install ${((Date.now() - t) / 1000).toFixed(1)} s`);
    env = {
      ...userEnv,
      PATH: `${path.join(prefix, 'bin')}${path.delimiter}${userEnv.PATH}`,
      HOME: path.join(tmp, 'home'),
      XDG_DATA_HOME: path.join(tmp, 'xdg-data'),
      DATABASE_URL: '',
      GATEWAY_DATA_DIR: '',
    };
  }, 900_000);

  afterAll(() => {
    if (timings.length) console.log(`install test: ${timings.join(', ')}`);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('`gateway --version` prints the version', async () => {
    expect(await gateway(['--version'])).toEqual({ stdout: `${VERSION}\n`, stderr: '', code: 0 });
  });

  it('`gateway claude-code --help`, `gateway host claude-code --help` and `gateway bridge opencode --help` print their usage', async () => {
    const launcher = await gateway(['claude-code', '--help']);
    expect(launcher).toMatchObject({ stderr: '', code: 0 });
    expect(launcher.stdout).toMatch(/^Usage: gateway claude-code /);
    const host = await gateway(['host', 'claude-code', '--help']);
    expect(host).toMatchObject({ stderr: '', code: 0 });
    expect(host.stdout).toMatch(/^Usage: gateway host claude-code /);
    const bridge = await gateway(['bridge', 'opencode', '--help']);
    expect(bridge).toMatchObject({ stderr: '', code: 0 });
    expect(bridge.stdout).toMatch(/^Usage: gateway bridge opencode /);
    expect(bridge.stdout).toContain('--serve');
  });

  it('the installed package runs on its runtime dependencies alone, at the versions the checkout tests', async () => {
    for (const dev of ['typescript', 'tsx', 'vite', 'vitest', 'patch-package']) expect(fs.existsSync(path.join(installed, 'node_modules', dev)), dev).toBe(false);
    // Every module of serve, the hosts, the bridge, the demo and replay loads (the --help runs above load few of them).
    const modules = ['server/app.js', 'bridge/claude-code/cli.js', 'bridge/opencode/cli.js', 'host/demo.js', 'domain/replay.js']
      .map((m) => new URL(`file://${path.join(installed, 'dist', m)}`).href);
    const loaded = await run(process.execPath, ['--input-type=module', '-e', `for (const m of ${JSON.stringify(modules)}) await import(m); console.log('loaded')`],
      { cwd: project, env, timeout: 60_000 });
    expect(loaded.stdout).toBe('loaded\n');
    // Pinned by the checkout's `overrides` (releases after it need Node 22): a global install reads no overrides,
    // the bundled copy keeps the pin. The postgres patch is applied in the bundled copy.
    const version = (p: string) => JSON.parse(fs.readFileSync(path.join(p, 'node_modules', '@whatwg-node', 'promise-helpers', 'package.json'), 'utf8')).version;
    expect(version(installed)).toBe(version(PROJECT_DIR));
    expect(fs.readFileSync(path.join(installed, 'node_modules', 'postgres', 'src', 'connection.js'), 'utf8')).toContain('Patched (porsager/postgres#1154');
    // @parcel/watcher's build from its patched source came along (not compiled again on this machine).
    expect(fs.existsSync(path.join(installed, 'node_modules', '@parcel', 'watcher', 'build', 'Release', 'watcher.node'))).toBe(true);
  });

  it('`gateway serve` runs in production and serves the review page it was packed with: signed in, it lists the sessions', async () => {
    // The unpacked bundle is older than what the package calls its sources (tar's order of extraction made it so):
    // a checkout would rebuild it, with Vite; the installed package serves it as packed.
    const now = new Date();
    fs.utimesSync(path.join(installed, 'client', 'persisted-documents.json'), now, now);
    fs.utimesSync(path.join(installed, 'client'), now, now);
    const db = await createScratchDatabase(inject('databaseUrl'), 'gw_install', { template: inject('templateDatabase') });
    const serve = spawn('gateway', ['serve'], { cwd: project, env: { ...env, DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    serve.stdout.on('data', (d) => { out += d; });
    serve.stderr.on('data', (d) => { err += d; });
    const exited = new Promise<number | null>((r) => serve.on('exit', (code) => r(code)));
    let browser: Awaited<ReturnType<typeof openBrowser>>['browser'] | undefined;
    try {
      const admin = await until('the first start to print its admin token', () => {
        if (serve.exitCode !== null) throw new Error(`gateway serve exited (${serve.exitCode}):\n${out}${err}`);
        return /First start: an admin token was created[^]*?\n\n {2}(\S+)\n/.exec(out)?.[1];
      }, 60_000);
      const listening = JSON.parse(out.split('\n').find((l) => l.includes('"msg":"listening"'))!);
      expect(listening.nodeEnv).toBe('production');
      const graphql = listening.url as string;
      const origin = graphql.replace(/\/graphql$/, '');
      const created = await fetch(graphql, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
        body: JSON.stringify({ query: 'mutation($input: CreateSessionInput!) { createSession(input: $input) { __typename ... on Session { id } } }', variables: { input: { title: 'installed', directory: project } } }),
      }).then((r) => r.json());
      const sessionID = created.data.createSession.id as string;
      const opened = await openBrowser(origin);
      browser = opened.browser;
      const { page, offsite } = opened;
      const response = await page.goto(`${origin}/review/`);
      expect(response?.status()).toBe(200);
      await page.locator('form.sign-in').waitFor();
      await page.fill('#token', admin);
      await page.click('form.sign-in button[type=submit]');
      await page.locator('h1', { hasText: 'Sessions' }).waitFor();
      await page.locator(`[data-session="${sessionID}"]`).waitFor();
      expect(await page.locator(`[data-session="${sessionID}"]`).innerText()).toContain('installed');
      expect(offsite).toEqual([]);
      expect(err).not.toContain('review page');
      expect(fs.readdirSync(path.join(installed, 'review', 'dist')).filter((e) => e !== 'index.html' && e !== 'assets')).toEqual([]); // nothing built beside it
    } finally {
      await browser?.close();
      serve.kill('SIGTERM');
      expect(await exited).toBe(0);
      await db.drop();
    }
  });

  it('`gateway serve` keeps its embedded database in the user\'s data folder, not in the directory it runs from', async () => {
    // The embedded server's binaries were left out of this install (--os=none above): the start stops there,
    // naming the folder it would use and what to do.
    const r = await gateway(['serve'], { PORT: '0' });
    expect(r.code).toBe(1);
    const dir = path.join(tmp, 'xdg-data', 'agent-history-gateway', 'pg');
    expect(r.stderr).toContain(`gateway: cannot start the embedded PostgreSQL in ${dir}: `);
    expect(r.stderr).toMatch(/optional dependencies: install them, or set DATABASE_URL to a PostgreSQL server\)\n$/);
    expect(fs.readdirSync(project)).toEqual(['package.json']);
  });
});
