/**
 * Gemini CLI hook latency: what the Gemini host's hooks add to a prompt and to a tool call.
 *
 * 1. Each hook as Gemini CLI runs it: the kit's hook script (`bash <dir>/gateway-hook.sh <event> auto`, the JSON on
 *    stdin, the launch token in its environment) against a running host and gateway, timed from spawn to exit (how
 *    long Gemini CLI waits for it), run by a process named `gemini` (the host takes a hook only from a Gemini CLI
 *    process whose directory and `~/.gemini` hold what the hook names): BeforeAgent (worktree capture +
 *    beginExecution), BeforeTool of a shell (startJob), of another tool (admitWork), AfterTool, AfterAgent. A bare
 *    `bash -c 'cat >/dev/null'` hook is the floor.
 * 2. The same scripted turn (a prompt, 3 shell calls, an answer) run by the real `gemini -p` through the launcher
 *    (the host's hooks) and without any hook, medians of ROUNDS runs, alternating.
 *
 *   npm run bench -- gemini-hooks        (needs Gemini CLI: .ci/gemini-install, or GEMINI_BIN)
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { createToken } from '../domain/tokens.js';
import { buildApp } from '../server/app.js';
import { GeminiHost } from '../bridge/gemini/host.js';
import { findGeminiBinary, GEMINI_NAMES, launchGemini, LAUNCH_VAR } from '../bridge/gemini/launch.js';
import { clientSecret, SECRET_HEADER } from '../bridge/hooks-host/local-channel.js';
import { geminiScript, startScriptedGemini } from '../bridge/gemini/scripted-model.js';

const ROUNDS = Number(process.argv[2] ?? process.env.ROUNDS ?? 5);
const HOOK_N = Number(process.env.HOOK_N ?? 40);

const pct = (xs: number[], p: number) => { const a = [...xs].sort((x, y) => x - y); return a[Math.min(a.length - 1, Math.floor(p * a.length))]; };
const fmt = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(1)} ms, p99 ${pct(xs, 0.99).toFixed(1)} ms (n=${xs.length})`;

type Timed = { ms: number; code: number | null; err: string };
// Runs one command with `input` on its standard input and answers how long it took, as Gemini CLI runs a hook.
const RUNNER = `const { spawn } = require('node:child_process');
const { performance } = require('node:perf_hooks');
process.on('message', (m) => {
  const t0 = performance.now();
  const c = spawn(m.cmd, m.args, { env: m.env, stdio: ['pipe', 'ignore', 'pipe'] });
  let err = '';
  c.stderr.on('data', (d) => { err += d; });
  c.once('exit', (code) => process.send({ id: m.id, ms: performance.now() - t0, code, err }));
  c.stdin.end(m.input);
});`;

/** A process that runs hooks the way Gemini CLI does: named `gemini` (a link to node), in the worktree, with its own HOME. */
function hookRunner(dir: string, cwd: string, env: NodeJS.ProcessEnv) {
  const link = path.join(dir, 'gemini');
  fs.symlinkSync(process.execPath, link);
  const child = spawn(link, ['-e', RUNNER], { cwd, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, (t: Timed) => void>();
  let next = 0;
  child.on('message', (m: Timed & { id: number }) => { waiting.get(m.id)?.(m); waiting.delete(m.id); });
  return {
    pid: child.pid!,
    time(cmd: string, args: string[], input: unknown, hookEnv: NodeJS.ProcessEnv): Promise<Timed> {
      const id = next++;
      return new Promise((resolve) => { waiting.set(id, resolve); child.send({ id, cmd, args, env: hookEnv, input: JSON.stringify(input) }); });
    },
    stop() { child.kill(); },
  };
}

async function main() {
  const bin = findGeminiBinary();
  if (!bin) throw new Error('Gemini CLI not found (run .ci/gemini-install, or set GEMINI_BIN)');
  const server = await openDatabase();
  const scratch = await createScratchDatabase(server.url, 'gw_bench_gemini_hooks');
  const sql = connect(scratch.url, { max: 10 });
  await migrate(sql);
  const app = buildApp({ sql, gateway: { sweepIntervalMs: 1_000 } });
  await app.start();
  const admin = (await createToken(sql, { role: 'admin' })).secret;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-gemini-'));
  const repo = path.join(tmp, 'repo');
  const home = path.join(tmp, 'home');
  for (const d of [path.join(home, '.gemini'), repo, path.join(tmp, 'tmp')]) fs.mkdirSync(d, { recursive: true });
  const g = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'pipe' });
  g('init', '-q');
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(repo, `f${i}.txt`), `file ${i}\n`.repeat(50));
  g('add', '.');
  g('-c', 'user.email=b@e', '-c', 'user.name=b', 'commit', '-qm', 'c');
  g('gc', '-q');
  const model = await startScriptedGemini();
  const base = { security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, sessionRetention: { enabled: false } }, telemetry: { enabled: false } };
  const settingsFile = path.join(home, '.gemini', 'settings.json');
  fs.writeFileSync(settingsFile, JSON.stringify(base));
  const dir = path.join(tmp, 'host');
  const env = { ...process.env, HOME: home, TMPDIR: path.join(tmp, 'tmp'), GOOGLE_GEMINI_BASE_URL: model.url, GEMINI_API_KEY: 'fake', GEMINI_CLI_NO_RELAUNCH: 'true' };
  const host = new GeminiHost({ gatewayUrl: app.url, hostToken: admin, dir, geminiEnv: env, geminiBin: bin });
  await host.start();
  const steps = [{ shell: [1, 2, 3].map((i) => `echo step ${i}`) }, { text: 'done' }];
  const args = (p: string) => ['--yolo', '-m', 'gemini-2.5-flash', '-p', p];
  try {
    // 2. Whole turns, with and without the host (alternating, so load drifts hit both alike).
    const withHost: number[] = [];
    const without: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      let t0 = performance.now();
      const l = await launchGemini({ dir, args: args(geminiScript(`bench ${r}`, steps)), cwd: repo, env, stdio: 'pipe', detached: true, bin });
      l.child.stdout!.resume();
      l.child.stderr!.resume();
      await new Promise((res) => l.child.once('exit', res));
      withHost.push(performance.now() - t0);
      const x = await l.exited;
      if (x.code !== 0) throw new Error(`gemini with the host exited ${x.code}`);
      await host.settled();
      // The same settings without the hooks the launcher wrote.
      const withHooks = fs.readFileSync(settingsFile, 'utf8');
      fs.writeFileSync(settingsFile, JSON.stringify(base));
      t0 = performance.now();
      const c = spawn(process.execPath, [bin, '--skip-trust', ...args(geminiScript(`bench plain ${r}`, steps))], { cwd: repo, env, stdio: 'ignore' });
      const code = await new Promise((res) => c.once('exit', res));
      without.push(performance.now() - t0);
      fs.writeFileSync(settingsFile, withHooks);
      if (code !== 0) throw new Error(`gemini without hooks exited ${code}`);
    }

    // 1. Each hook as Gemini CLI runs it, in a session the host fronts.
    const script = path.join(dir, 'gateway-hook.sh');
    const runnerHome = path.join(tmp, 'runner-home');
    const runner = hookRunner(tmp, repo, { ...process.env, HOME: runnerHome });
    const toHost = (route: string, body: unknown) => fetch(`http://127.0.0.1:${host.port}${route}`, {
      method: 'POST', headers: { [SECRET_HEADER]: clientSecret(dir, GEMINI_NAMES) }, body: JSON.stringify(body) });
    const launch = await (await toHost('/launch', { cwd: repo })).json() as { token: string };
    await toHost('/launched', { token: launch.token, pid: runner.pid });
    const henv = { ...process.env, [LAUNCH_VAR]: launch.token };
    const session = randomUUID();
    const hist = { session_id: session, transcript_path: path.join(runnerHome, '.gemini', 'tmp', 'repo', 'chats', `session-2026-01-01T00-00-${session.slice(0, 8)}.jsonl`), cwd: repo };
    const hook = (ev: string, extra: Record<string, unknown>) => runner.time('bash', [script, ev, 'auto'], { ...hist, hook_event_name: ev, ...extra }, henv);
    const must = async (p: Promise<Timed>) => { const r = await p; if (r.code !== 0) throw new Error(`hook refused: ${r.err}`); return r.ms; };
    await must(hook('SessionStart', { source: 'startup' }));
    const figures: Record<string, number[]> = { BeforeAgent: [], 'BeforeTool shell': [], 'BeforeTool other': [], AfterTool: [], AfterAgent: [] };
    // The floor, timed within the same rounds (a load drift hits both alike).
    const floor: number[] = [];
    for (let i = 0; i < HOOK_N; i++) {
      floor.push((await runner.time('bash', ['-c', 'cat >/dev/null'], hist, henv)).ms);
      fs.writeFileSync(path.join(repo, 'f0.txt'), `changed ${i}\n`);
      figures.BeforeAgent.push(await must(hook('BeforeAgent', { prompt: `prompt ${i}` })));
      figures['BeforeTool shell'].push(await must(hook('BeforeTool', { tool_name: 'run_shell_command', tool_input: { command: 'true' } })));
      figures['BeforeTool other'].push(await must(hook('BeforeTool', { tool_name: 'write_file', tool_input: { file_path: 'x.txt', content: 'x' } })));
      figures.AfterTool.push(await must(hook('AfterTool', { tool_name: 'run_shell_command', tool_input: { command: 'true' },
        tool_response: { llmContent: 'Output: (empty)\nProcess Group PGID: 1', returnDisplay: '' } })));
      // The turn as Gemini CLI writes it before AfterAgent (the host reads it from the history).
      fs.mkdirSync(path.dirname(hist.transcript_path), { recursive: true });
      fs.appendFileSync(hist.transcript_path, [{ id: `p${i}`, type: 'user', content: [{ text: `prompt ${i}` }] },
        { id: `g${i}`, type: 'gemini', content: 'ok', tokens: { input: 10, output: 1, cached: 0, thoughts: 0 }, model: 'gemini-2.5-flash' }].map((l) => JSON.stringify(l)).join('\n') + '\n');
      figures.AfterAgent.push(await must(hook('AfterAgent', { prompt: `prompt ${i}`, prompt_response: 'ok', stop_hook_active: false })));
      await host.settled();
    }
    runner.stop();
    console.log(`hooks as Gemini CLI runs them (bash ${script.split('/').pop()}, loopback HTTP to the host):`);
    for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(18)} ${fmt(v)}  (+${(pct(v, 0.5) - pct(floor, 0.5)).toFixed(1)} ms over the floor)`);
    console.log(`  ${'bare bash hook'.padEnd(18)} ${fmt(floor)}  (a hook that does nothing: the floor)`);
    console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (${os.cpus().length} cores)`);
    const m = (xs: number[]) => pct(xs, 0.5);
    const hooks = 2 + 1 + 3 * 2 + 1; // SessionStart, SessionEnd, BeforeAgent, 3 × (BeforeTool, AfterTool), AfterAgent
    console.log(`whole turn (prompt, 3 shell calls, answer; gemini -p; ${ROUNDS} rounds): with the host ${fmt(withHost)}; without hooks ${fmt(without)}`);
    console.log(`  difference of medians ${(m(withHost) - m(without)).toFixed(0)} ms over ${hooks} hooks = ${((m(withHost) - m(without)) / hooks).toFixed(1)} ms per hook`);
  } finally {
    await host.stop();
    await model.close();
    await app.stop();
    await sql.end({ timeout: 1 });
    await scratch.drop();
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
