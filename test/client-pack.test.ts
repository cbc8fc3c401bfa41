// The typed client as a user installs it: `npm pack` of client/, the tarball installed into a
// scratch project (dependencies from npm's cache when it has them), and scripts run there on this Node (20:
// no global WebSocket, so subscriptions need the `ws` the package depends on): ESM, and CommonJS through
// Node's require(esm).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_DIR } from '../db/index.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { begin, createSession, registerHost, settle } from './fixtures.js';

let g: TestGateway;
let tmp: string;
let scratch: string;
let tarball: string;
const npm = (args: string[], cwd: string) => spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'client-pack-'));
  scratch = path.join(tmp, 'app');
  fs.mkdirSync(scratch);
  // `npm pack` runs the package's `prepack` (its build).
  const packed = npm(['pack', '--pack-destination', tmp, '--json'], path.join(PROJECT_DIR, 'client'));
  expect(packed.status, packed.stderr).toBe(0);
  tarball = path.join(tmp, fs.readdirSync(tmp).find((f) => f.endsWith('.tgz'))!);
  fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true }));
  const installed = npm(['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], scratch);
  expect(installed.status, installed.stdout + installed.stderr).toBe(0);
  // Nothing asks the user to approve or install anything more.
  expect(installed.stdout + installed.stderr).not.toMatch(/install-scripts|peer dep|ERESOLVE|EBADENGINE/i);
  g = await startTestGateway();
}, 180_000);

afterAll(async () => {
  await g?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

it('packs its README, the built code with types and the operations, and nothing else', () => {
  const list = spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
  expect(list).toEqual(expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/generated.js', 'dist/generated.d.ts', 'operations/reads.graphql']));
  expect(list.filter((f) => /\.ts$/.test(f) && !/\.d\.ts$/.test(f))).toEqual([]);
  const manifest = JSON.parse(fs.readFileSync(path.join(scratch, 'node_modules/@agent-history/client/package.json'), 'utf8'));
  expect(manifest.type).toBe('module');
  expect(manifest.dependencies.ws).toBeTruthy();
  // Installed beside it, with no action of the user: ws (Node 20 subscriptions) and graphql (the peer).
  for (const dep of ['ws', 'graphql', 'graphql-ws']) expect(fs.existsSync(path.join(scratch, 'node_modules', dep, 'package.json')), dep).toBe(true);
});

/** Runs a script of the scratch project; answers its exit and output, calling `onLine` for each stdout line. */
function run(file: string, env: Record<string, string>, onLine: (line: string) => void = () => {}) {
  const p = spawn(process.execPath, [file], { cwd: scratch, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let buf = '';
  p.stdout.on('data', (b) => {
    out += b; buf += b;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) { onLine(buf.slice(0, i)); buf = buf.slice(i + 1); }
  });
  p.stderr.on('data', (b) => { err += b; });
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => p.on('exit', (code) => resolve({ code, out, err })));
}

it('an ESM script on Node 20: lists sessions, gets a tagged error, and receives a settlement over WebSocket', async () => {
  const host = await registerHost(g);
  const s = await createSession(g, { title: 'packed client', directory: '/packed' });
  const token = await g.token('plugin');
  fs.writeFileSync(path.join(scratch, 'app.mjs'), `
    import { GatewayClient, GatewayCallError, ListSessionsDocument, SealSessionDocument, ExecutionSettledDocument, LatestSettlementCursorDocument } from '@agent-history/client';
    const gw = new GatewayClient({ url: process.env.GATEWAY_URL, token: process.env.GATEWAY_TOKEN });
    const { sessions } = await gw.request(ListSessionsDocument, { first: 10 });
    console.log('sessions', JSON.stringify(sessions.edges.map((e) => e.node.title)));
    try { await gw.call(SealSessionDocument, { input: { sessionID: 'ses_missing', timeoutMs: 0 } }); }
    catch (e) { console.log('tag', e instanceof GatewayCallError ? e.error._tag : String(e)); }
    const { latestSettlementCursor: after } = await gw.request(LatestSettlementCursorDocument, { sessionID: process.env.SESSION });
    await new Promise((resolve, reject) => {
      gw.subscribe(ExecutionSettledDocument, { sessionID: process.env.SESSION, after }, {
        next: (d) => { console.log('settled', d.executionSettled.status); resolve(); },
        error: (e) => reject(e instanceof Error ? e : new Error(JSON.stringify(e))),
      });
      console.log('subscribed');
    });
    await gw.close();
  `);
  let subscribed!: () => void;
  const ready = new Promise<void>((r) => { subscribed = r; });
  const done = run('app.mjs', { GATEWAY_URL: g.url, GATEWAY_TOKEN: token, SESSION: s.id }, (l) => { if (l === 'subscribed') subscribed(); });
  await ready;
  // Settled after the script's cursor: delivered however late its WebSocket opens.
  const e = await begin(g, host, s.id);
  await settle(g, host, e.id, 'FAILED', { error: 'x' });
  const r = await done;
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out.split('\n').filter(Boolean)).toEqual([
    expect.stringMatching(/^sessions \[.*"packed client".*\]$/),
    'tag SessionNotFoundError',
    'subscribed',
    'settled FAILED',
  ]);
});

it('a CommonJS script: require() of the ESM package (Node 20.19+, 22.12+)', async () => {
  fs.writeFileSync(path.join(scratch, 'app.cjs'), `
    const { GatewayClient, ListSessionsDocument } = require('@agent-history/client');
    const gw = new GatewayClient({ url: process.env.GATEWAY_URL, token: process.env.GATEWAY_TOKEN });
    gw.request(ListSessionsDocument, { first: 1 }).then((d) => console.log('pages', d.sessions.pageInfo.hasNextPage !== undefined));
  `);
  const r = await run('app.cjs', { GATEWAY_URL: g.url, GATEWAY_TOKEN: await g.token('reader') });
  expect(r.code, r.err).toBe(0);
  expect(r.out.trim()).toBe('pages true');
});
