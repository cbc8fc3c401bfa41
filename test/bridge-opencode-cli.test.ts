// A bridge a supervisor can run. `bin/gateway.mjs bridge opencode --serve` is one process
// (tsx loaded in-process; its only child is the private OpenCode), it serves OpenCode through the admission
// proxy, survives a gateway restart, and stops cleanly on SIGTERM and SIGINT: exit code 0, no unhandled
// rejection, its OpenCode gone with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestGateway, type TestGateway } from './harness.js';
import { OpencodeClient } from '../bridge/opencode/client.js';
import { findOpencodeBinary, freePort, isolatedOpencodeEnv } from '../bridge/opencode/launch.js';
import { until } from './support/opencode-kit.js';
import { scriptPrompt, startScriptedModel, type ScriptedModel } from '../bridge/opencode/scripted-model.js';

const bin = findOpencodeBinary();
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function childrenOf(pid: number): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const d of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push({ pid: Number(d), cmd: fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() });
    } catch { /* gone */ }
  }
  return out;
}
const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

describe.skipIf(!bin)('bridge opencode --serve as a supervised process', { timeout: 900_000 }, () => {
  let gw: TestGateway;
  let model: ScriptedModel;
  let tmp: string;
  let project: string;
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oc-cli-'));
    project = path.join(tmp, 'project');
    fs.mkdirSync(project);
    // bin/gateway.mjs builds dist/ when it is older than the sources: done once here (minutes on a loaded
    // machine), so each start below measures the bridge, not the build.
    const built = spawnSync(process.execPath, [path.join(root, 'bin', 'gateway.mjs'), 'help'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    if (!fs.existsSync(path.join(root, 'dist', 'cli', 'main.js'))) throw new Error(`build failed: ${built.stderr}`);
    model = await startScriptedModel();
    gw = await startTestGateway();
  }, 600_000);
  afterAll(async () => {
    await model?.close().catch(() => {});
    await gw?.stop().catch(() => {});
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function start(name: string) {
    const port = await freePort();
    const env = { ...isolatedOpencodeEnv(path.join(tmp, name), model.url), OPENCODE_BIN: bin!, OPENCODE_PROXY_PASSWORD: 'pw-cli', GATEWAY_TOKEN: gw.admin };
    const p: ChildProcess = spawn(process.execPath, [path.join(root, 'bin', 'gateway.mjs'), 'bridge', 'opencode', '--serve',
      '--directory', project, '--listen', `127.0.0.1:${port}`, '--gateway', gw.url,
      '--state', path.join(tmp, `${name}.json`), '--lease-ms', '5000'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (b) => { stdout += b; });
    p.stderr!.on('data', (b) => { stderr += b; if (process.env.BRIDGE_DEBUG) process.stderr.write(b); });
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) => p.once('exit', (code, signal) => r({ code, signal })));
    await until('the proxy is listening', async () => {
      if (p.exitCode !== null) throw new Error(`exited: ${stderr}`);
      return stdout.includes('admission proxy');
    }, 480_000); // OpenCode installs packages for the fence plugin when it loads it: minutes on a loaded machine
    return { p, port, exited, out: () => stdout, err: () => stderr, url: `http://127.0.0.1:${port}` };
  }

  it('one process; survives a gateway restart; SIGTERM stops it and its OpenCode cleanly (exit 0, no unhandled rejection)', async () => {
    const b = await start('term');
    // One process: the PID we started runs the bridge itself. No node or tsx child (the old chain was
    // npx → spawnSync → tsx → node); its children are OpenCode and tsx's esbuild transform service.
    const all = childrenOf(b.p.pid!);
    const exe = (k: { cmd: string }) => path.basename(k.cmd.split(' ')[0]);
    expect(all.filter((k) => ['node', 'tsx', 'npx', 'npm', 'sh'].includes(exe(k)))).toEqual([]);
    const kids = all.filter((k) => exe(k) === 'opencode');
    expect(kids).toHaveLength(1);
    expect(kids[0].cmd).toContain('serve');
    expect(all.every((k) => ['opencode', 'esbuild'].includes(exe(k))), JSON.stringify(all)).toBe(true);
    const client = new OpencodeClient(b.url, { password: 'pw-cli' });
    const oc = (await client.createSession({ title: 'cli' })).id;
    const seen = async () => (await gw.gql(`{ sessions(first: 50) { edges { node { id title } } } }`)).data.sessions.edges.some((e: any) => e.node.title === 'cli');
    await until('mirrored', seen, 60_000);
    // The gateway restarts: the bridge rides it out (requests retried, subscriptions re-made).
    await gw.restart();
    await client.promptAsync(oc, scriptPrompt('after restart', [{ text: 'hello after the restart' }]));
    await until('the turn after the restart mirrored', async () => {
      const r = await gw.gql(`{ sessions(first: 50) { edges { node { title executions(first: 5) { edges { node { status } } } } } } }`);
      const s = r.data.sessions.edges.find((e: any) => e.node.title === 'cli');
      return s?.node.executions.edges.some((e: any) => e.node.status === 'SUCCEEDED');
    }, 120_000);
    b.p.kill('SIGTERM');
    const { code, signal } = await b.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(b.err()).not.toMatch(/unhandled|UnhandledPromiseRejection/i);
    await until('its OpenCode gone', async () => !alive(kids[0].pid), 10_000);
  });

  it('SIGINT while the gateway is down (calls retrying) still exits 0 at once, without an unhandled rejection', async () => {
    const b = await start('int');
    const kids = childrenOf(b.p.pid!).filter((k) => k.cmd.includes('opencode'));
    expect(kids).toHaveLength(1);
    const client = new OpencodeClient(b.url, { password: 'pw-cli' });
    let down!: () => void;
    const wentDown = new Promise<void>((r) => (down = r));
    let release!: () => void;
    const restarted = gw.restart(async () => {
      down();
      await new Promise<void>((r) => (release = r));
    });
    await wentDown;
    // Work arrives while the gateway is down: the bridge's calls retry.
    await client.createSession({ title: 'while down' });
    await until('a gateway call is retrying', async () => b.err().includes('gateway unreachable'), 30_000);
    b.p.kill('SIGINT');
    const { code } = await b.exited;
    release();
    await restarted;
    expect(code).toBe(0);
    expect(b.err()).not.toMatch(/unhandled|UnhandledPromiseRejection/i);
    await until('its OpenCode gone', async () => !kids.some((k) => alive(k.pid)), 10_000);
  });
});
