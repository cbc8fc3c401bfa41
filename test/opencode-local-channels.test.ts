// The OpenCode bridge's local channels, tried as another local user would: the admission proxy (nothing
// reaches OpenCode without the proxy password, and a CORS preflight reaches it without OpenCode's own), the
// fence folder the gateway-fence plugin reads (private, or the bridge does not start and changes nothing),
// the port of the private `opencode serve` (its password is sent to no other user's listener). The state
// file's mode is tested with the store (test/bridge-opencode-store.test.ts). Fakes stand in for OpenCode and
// the gateway here: what is checked is what reaches them.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { PROJECT_DIR } from '../db/index.js';
import { OpencodeProxy } from '../bridge/opencode/proxy.js';
import { OpencodeBridge } from '../bridge/opencode/bridge.js';
import { BridgeContext, type BridgeOptions } from '../bridge/opencode/context.js';
import { FileBridgeStore } from '../bridge/opencode/store.js';
import { emptyState } from '../bridge/opencode/mapping.js';
import { loopbackListeners, startOpencode } from '../bridge/opencode/launch.js';
import { FENCE_PLUGIN } from '../bridge/opencode/serve.js';
import { ensurePrivateDir } from '../bridge/common/private-files.js';

const asRoot = process.getuid?.() === 0;
const hasProcNet = fs.existsSync('/proc/net/tcp');
const NOBODY = 65534;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

let tmp: string;
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oc-local-')); });
afterAll(() => { if (tmp) fs.rmSync(tmp, { recursive: true, force: true }); });
let n = 0;
const fresh = (name: string) => path.join(tmp, `${name}-${++n}`);

/** An HTTP server that records every request (and upgrade) it receives: a stand-in for OpenCode or the gateway. */
async function recorder() {
  const seen: { method: string; url: string; authorization?: string }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
    req.resume();
    req.on('end', () => {
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { 'access-control-allow-origin': String(req.headers.origin ?? '*'), 'access-control-allow-methods': 'GET, POST' });
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      }
    });
  });
  server.on('upgrade', (req, socket) => {
    seen.push({ method: `UPGRADE ${req.method}`, url: req.url!, authorization: req.headers.authorization });
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { seen, url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('the admission proxy', () => {
  const PASSWORD = 'the-proxy-password-1';
  const UPSTREAM = 'opencode-private-password';
  let upstream: Awaited<ReturnType<typeof recorder>>;
  let proxy: OpencodeProxy;
  const admitted: string[] = [];
  beforeAll(async () => {
    upstream = await recorder();
    proxy = new OpencodeProxy({
      upstream: upstream.url, upstreamPassword: UPSTREAM, password: PASSWORD,
      admit: async (id) => { admitted.push(id); return { ok: true }; }, exists: async () => true,
    });
    await proxy.start();
  });
  afterAll(async () => { await proxy?.stop(); await upstream?.close(); });
  afterEach(() => { upstream.seen.length = 0; admitted.length = 0; });

  it('without the proxy password nothing reaches OpenCode and nothing is admitted: reads, work, stops, health, refused spellings', async () => {
    const requests: [string, string, unknown?][] = [
      ['GET', '/global/health'], ['GET', '/global/event'], ['GET', '/session/ses_abcdefgh/message'], ['POST', '/sync/history', {}],
      ['POST', '/session', {}], ['POST', '/session/ses_abcdefgh/prompt_async', { parts: [{ type: 'text', text: 'hi' }] }],
      ['POST', '/session/ses_abcdefgh/abort'], ['DELETE', '/session/ses_abcdefgh'], ['PATCH', '/config', { model: 'x' }],
      ['POST', '/session/%73es_abcdefgh/message', {}], ['HEAD', '/'],
    ];
    const credentials = [undefined, basic('opencode', 'wrong'), basic('someone', PASSWORD), basic('opencode', `${PASSWORD}x`),
      basic('opencode', PASSWORD.slice(0, -1)), basic('opencode', ''), `Bearer ${PASSWORD}`, basic('opencode', UPSTREAM)];
    for (const [method, p, body] of requests) {
      for (const authorization of credentials) {
        const r = await fetch(proxy.url + p, {
          method, headers: { ...(authorization ? { authorization } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        await r.arrayBuffer();
        expect([method, p, authorization, r.status]).toEqual([method, p, authorization, 401]);
        expect(r.headers.get('www-authenticate')).toContain('Basic');
      }
    }
    expect(upstream.seen).toEqual([]);
    expect(admitted).toEqual([]);
    // A WebSocket upgrade (PTY) without the password: refused before anything is opened to OpenCode.
    for (const headers of [{}, { authorization: basic('opencode', 'wrong') }]) {
      const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/pty/pty_abcdefgh/connect`, { headers });
      const status = await new Promise<number>((resolve) => {
        ws.on('unexpected-response', (_q, res) => { resolve(res.statusCode ?? 0); res.resume(); });
        ws.on('error', () => resolve(-1));
      });
      expect(status).toBe(401);
    }
    expect(upstream.seen).toEqual([]);
  });

  it('a CORS preflight passes without the proxy password, and reaches OpenCode without OpenCode\'s password', async () => {
    for (const authorization of [undefined, basic('opencode', 'wrong'), basic('opencode', PASSWORD)]) {
      const r = await fetch(`${proxy.url}/session/ses_abcdefgh/prompt_async`, {
        method: 'OPTIONS', headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'POST', ...(authorization ? { authorization } : {}) },
      });
      expect(r.status).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    }
    expect(upstream.seen).toEqual(Array(3).fill({ method: 'OPTIONS', url: '/session/ses_abcdefgh/prompt_async', authorization: undefined }));
    expect(admitted).toEqual([]);
  });

  it('with the proxy password, a request goes to OpenCode with OpenCode\'s password (never the client\'s)', async () => {
    const r = await fetch(`${proxy.url}/session/ses_abcdefgh/prompt_async`, {
      method: 'POST', headers: { authorization: basic('opencode', PASSWORD), 'content-type': 'application/json' }, body: '{}',
    });
    expect(r.status).toBe(200);
    expect(upstream.seen).toEqual([{ method: 'POST', url: '/session/ses_abcdefgh/prompt_async', authorization: basic('opencode', UPSTREAM) }]);
    expect(admitted).toEqual(['ses_abcdefgh']);
  });
});

describe('the fence folder', () => {
  /** A bridge whose OpenCode and gateway are recorders: what its start sent anywhere is what they saw. */
  async function tryStart(fenceDir: string) {
    const peer = await recorder();
    const stateFile = path.join(fresh('state'), 'bridge.json');
    const store = new FileBridgeStore(stateFile);
    const bridge = new OpencodeBridge({ opencodeUrl: peer.url, gatewayUrl: `${peer.url}/graphql`, hostToken: 'host-token', store, fenceDir, pollMs: 60_000 });
    try {
      const error = await bridge.start().then(() => null, (e: Error) => e);
      return { error, seen: [...peer.seen], stateWritten: fs.existsSync(stateFile) };
    } finally {
      await bridge.stop().catch(() => {});
      await store.close();
      await peer.close();
    }
  }
  /** A fence folder of `mode` holding one fence, and what it holds. */
  function fenceDirOf(mode: number) {
    const dir = fresh('fence');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'ses_sealedsession'), '{}\n', { mode: 0o600 });
    fs.chmodSync(dir, mode);
    return dir;
  }

  it('one others can write, or read: the bridge does not start, says what fixes it, and registers, reads and writes nothing', async () => {
    for (const mode of [0o777, 0o775, 0o755, 0o701]) {
      const dir = fenceDirOf(mode);
      const r = await tryStart(dir);
      expect(r.error?.message).toBe(`the fence folder (--fence-dir) ${dir} can be read or changed by other users (mode 0${mode.toString(8)}): run \`chmod 700 ${dir}\``);
      expect(r.seen).toEqual([]);
      expect(r.stateWritten).toBe(false);
      expect(fs.readdirSync(dir)).toEqual(['ses_sealedsession']);
      expect(fs.statSync(dir).mode & 0o777).toBe(mode); // refused, not changed
    }
  });

  it('one inside a folder others can write (who could replace it), or a symbolic link: refused the same way', async () => {
    const open = fresh('open');
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o777);
    const dir = path.join(open, 'fence');
    fs.mkdirSync(dir, { mode: 0o700 });
    const r = await tryStart(dir);
    expect(r.error?.message).toBe(`the fence folder (--fence-dir) ${dir} is inside ${open}, which other users can write to (mode 0777), and so replace it: `
      + `run \`chmod go-w ${open}\`, or use a folder of your own`);
    expect(r.seen).toEqual([]);
    fs.chmodSync(open, 0o1777); // sticky, as /tmp: others cannot rename or remove what is not theirs
    expect(ensurePrivateDir(dir, 'the fence folder')).toBe(dir);
    const link = fresh('link');
    fs.symlinkSync(fenceDirOf(0o700), link);
    expect((await tryStart(link)).error?.message).toMatch(/is a symbolic link: give the folder it points to instead$/);
  });

  it.skipIf(!asRoot)('one of another user: refused (as root: a folder chowned to nobody)', async () => {
    const dir = fenceDirOf(0o700);
    fs.chownSync(dir, NOBODY, NOBODY);
    const r = await tryStart(dir);
    expect(r.error?.message).toMatch(new RegExp(`^the fence folder \\(--fence-dir\\) ${dir} belongs to another user \\(uid ${NOBODY}; you are uid 0\\)`));
    expect(r.seen).toEqual([]);
  });

  it('a missing one is made 0700; a fence is a new 0600 file, never written through a link planted in its place', () => {
    const dir = path.join(fresh('made'), 'a', 'fence');
    expect(ensurePrivateDir(dir, 'the fence folder')).toBe(dir);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const logs: string[] = [];
    const ctx = new BridgeContext({ fenceDir: dir, log: (m: string) => { logs.push(m); } } as Partial<BridgeOptions> as BridgeOptions, null as never, null as never);
    const live = (id: string) => ({ st: emptyState(), row: { ocSessionID: id, sessionID: `gw_${id}`, lastSeq: 0, state: emptyState() } });
    ctx.fence(live('ses_fencedone'));
    expect(fs.statSync(path.join(dir, 'ses_fencedone')).mode & 0o777).toBe(0o600);
    ctx.fence(live('ses_fencedone')); // idempotent, quietly
    const victim = path.join(fresh('victim'));
    fs.symlinkSync(victim, path.join(dir, 'ses_plantedlink'));
    ctx.fence(live('ses_plantedlink'));
    expect(fs.existsSync(victim)).toBe(false);
    expect(logs).toEqual([`fence ${path.join(dir, 'ses_plantedlink')}: something other than a file is in its place; not written`]);
    expect(fs.lstatSync(path.join(dir, 'ses_plantedlink')).isSymbolicLink()).toBe(true);
  });

  it.skipIf(!asRoot)('another user can neither forge a fence nor lift one in the folder the bridge made', () => {
    const parent = fresh('shared');
    fs.mkdirSync(parent, { mode: 0o755 });
    fs.chmodSync(tmp, 0o755); // the test's own folder, so that nobody can reach the fence folder's door
    try {
      const dir = ensurePrivateDir(path.join(parent, 'fence'), 'the fence folder');
      fs.writeFileSync(path.join(dir, 'ses_sealedsession'), '{}\n', { mode: 0o600 });
      const asNobody = (code: string) => spawnSync(process.execPath, ['-e', code], { uid: NOBODY, gid: NOBODY, cwd: '/', encoding: 'utf8' });
      const forge = asNobody(`require('fs').writeFileSync(${JSON.stringify(path.join(dir, 'ses_opensession'))}, '')`);
      const lift = asNobody(`require('fs').rmSync(${JSON.stringify(path.join(dir, 'ses_sealedsession'))})`);
      const swap = asNobody(`require('fs').renameSync(${JSON.stringify(dir)}, ${JSON.stringify(`${dir}-moved`)})`);
      for (const r of [forge, lift, swap]) expect(r.stderr).toMatch(/EACCES|EPERM/);
      expect(fs.readdirSync(dir)).toEqual(['ses_sealedsession']);
    } finally {
      fs.chmodSync(tmp, 0o700);
    }
  });
});

describe('the gateway-fence plugin', () => {
  const load = async (dir: string) => {
    const before = process.env.OPENCODE_GATEWAY_FENCE_DIR;
    process.env.OPENCODE_GATEWAY_FENCE_DIR = dir;
    try {
      const { GatewayFence } = await import(FENCE_PLUGIN);
      return await GatewayFence({ directory: '/project', client: { session: { get: async () => ({ data: { id: 'x', parentID: null } }) } } });
    } finally {
      if (before === undefined) delete process.env.OPENCODE_GATEWAY_FENCE_DIR; else process.env.OPENCODE_GATEWAY_FENCE_DIR = before;
    }
  };

  it('makes its folders 0700 and its files 0600, and refuses a fenced session\'s work', async () => {
    const dir = path.join(fresh('plugin'), 'fence');
    const hooks = await load(dir);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, '.plugin')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, '.plugin', `${process.pid}.json`)).mode & 0o777).toBe(0o600);
    fs.writeFileSync(path.join(dir, 'ses_fencedsession'), '{}\n', { mode: 0o600 });
    await expect(hooks['chat.message']({ sessionID: 'ses_fencedsession', messageID: 'msg_1' })).rejects.toThrow(/is sealed; refused chat.message/);
    await expect(hooks['chat.message']({ sessionID: 'ses_opensession', messageID: 'msg_2' })).resolves.toBeUndefined();
    expect(fs.statSync(path.join(dir, '.plugin', 'refusals.log')).mode & 0o777).toBe(0o600);
  });

  it('logs an error for a folder others can read or write', async () => {
    const dir = fresh('plugin-open');
    fs.mkdirSync(dir);
    fs.chmodSync(dir, 0o777);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      await load(dir);
      expect(errors.mock.calls.map((c) => String(c[0]))).toContain(
        `gateway-fence: other users can read or write ${dir} (mode 0777), and so lift or forge fences: run chmod 700 ${dir}`);
    } finally {
      errors.mockRestore();
    }
  });
});

describe.skipIf(!hasProcNet)('the private OpenCode\'s port', () => {
  it('loopbackListeners: who listens on a port where 127.0.0.1 lands', async () => {
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const port = (s.address() as net.AddressInfo).port;
    expect(loopbackListeners(port)).toEqual([process.getuid!()]);
    await new Promise<void>((r) => s.close(() => r()));
    expect(loopbackListeners(port)).toEqual([]);
  });

  it.skipIf(!asRoot)('taken by another user\'s process before OpenCode binds it: OpenCode is stopped, the password is never sent there', async () => {
    // Another user listens on the port the bridge picked (as if between freePort and OpenCode's bind).
    const thief = spawn(process.execPath, ['-e', `
      const s = require('net').createServer((c) => { console.log('connection'); c.destroy(); });
      s.listen(0, '127.0.0.1', () => console.log('port ' + s.address().port));`], { uid: NOBODY, gid: NOBODY, cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    thief.stdout!.on('data', (b) => { out += b; });
    try {
      await vi.waitFor(() => { if (!/port \d+/.test(out)) throw new Error('not listening yet'); }, { timeout: 30_000 });
      const port = Number(/port (\d+)/.exec(out)![1]);
      // A stand-in for OpenCode that never listens (its own bind would fail): it records its pid.
      const pidFile = path.join(fresh('standin'), 'pid');
      fs.mkdirSync(path.dirname(pidFile));
      const bin = path.join(path.dirname(pidFile), 'opencode');
      fs.writeFileSync(bin, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 60\n`, { mode: 0o755 });
      const started = startOpencode({ bin, directory: tmp, home: fresh('home'), modelUrl: 'http://127.0.0.1:1/v1', port, password: 'never-sent' });
      await expect(started).rejects.toThrow(`port ${port} on 127.0.0.1 was taken by another user's process (uid ${NOBODY}) before OpenCode could listen there; nothing was sent to it`);
      expect(out).not.toContain('connection');
      const pid = Number(fs.readFileSync(pidFile, 'utf8'));
      expect(() => process.kill(pid, 0)).toThrow(); // the stand-in was stopped
    } finally {
      thief.kill();
    }
  });
});

it('`gateway bridge opencode` with a fence folder others can write stops at once with the fix (no retry loop), its state untouched', () => {
  const dir = fresh('cli-fence');
  fs.mkdirSync(dir);
  fs.chmodSync(dir, 0o777);
  const state = path.join(fresh('cli-state'), 'state.json');
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'bridge', 'opencode', '--url', 'http://127.0.0.1:1', '--fence-dir', dir, '--state', state], {
    cwd: PROJECT_DIR, encoding: 'utf8', timeout: 120_000, env: { ...process.env, GATEWAY_TOKEN: 'a-token', DATABASE_URL: '' },
  });
  expect(r.status).toBe(1);
  expect(r.stderr.trim()).toBe(`gateway: the fence folder (--fence-dir) ${dir} can be read or changed by other users (mode 0777): run \`chmod 700 ${dir}\``);
  expect(fs.existsSync(state)).toBe(false);
});
