/**
 * Codex hook latency: what the Codex host's hooks add to a prompt and to a tool call.
 *
 * 1. Each hook as Codex runs it: the kit's hook script (`bash <dir>/gateway-hook.sh <event> closed`, the JSON on
 *    stdin) against a running host and gateway, timed from spawn to exit (how long Codex waits for it), run by a
 *    process named `codex` (the host takes a hook only from a Codex process whose directory and `$CODEX_HOME`
 *    hold what the hook names): UserPromptSubmit (worktree capture + beginExecution), PreToolUse of a shell
 *    (startJob), of an MCP tool (admitWork), PostToolUse, Stop. A bare `bash -c 'cat >/dev/null'` hook is the floor.
 * 2. The same scripted turn (a prompt, 3 shell calls, an answer) run by the real `codex exec` through the launcher
 *    (the host's hooks) and without any hook, medians of ROUNDS runs, alternating.
 *
 *   npm run bench -- codex-hooks        (needs the codex binary: .ci/codex-install, or CODEX_BIN)
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
import { CodexHost } from '../bridge/codex/host.js';
import { findCodexBinary, launchCodex } from '../bridge/codex/launch.js';
import { clientSecret, SECRET_HEADER } from '../bridge/hooks-host/local-channel.js';
import { codexScript, startScriptedResponses } from '../bridge/codex/scripted-model.js';
import { CODEX_NAMES } from '../bridge/codex/launch.js';

const ROUNDS = Number(process.argv[2] ?? process.env.ROUNDS ?? 7);
const HOOK_N = Number(process.env.HOOK_N ?? 40);

const pct = (xs: number[], p: number) => { const a = [...xs].sort((x, y) => x - y); return a[Math.min(a.length - 1, Math.floor(p * a.length))]; };
const fmt = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(1)} ms, p99 ${pct(xs, 0.99).toFixed(1)} ms (n=${xs.length})`;

type Timed = { ms: number; code: number | null; err: string };
// Runs one command with `input` on its standard input and answers how long it took, as Codex runs a hook.
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

/**
 * A process that runs hooks the way Codex does: named `codex` (a link to node), in the worktree, with its own
 * CODEX_HOME, so the host's checks of a hook against the process that ran it pass.
 */
function hookRunner(dir: string, cwd: string, env: NodeJS.ProcessEnv) {
  const link = path.join(dir, 'codex');
  fs.symlinkSync(process.execPath, link);
  const child = spawn(link, ['-e', RUNNER], { cwd, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map<number, (t: Timed) => void>();
  let next = 0;
  child.on('message', (m: any) => { waiting.get(m.id)?.(m); waiting.delete(m.id); });
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
  const bin = findCodexBinary();
  if (!bin) throw new Error('no codex binary (run .ci/codex-install, or set CODEX_BIN)');
  const server = await openDatabase();
  const scratch = await createScratchDatabase(server.url, 'gw_bench_codex_hooks');
  const sql = connect(scratch.url, { max: 10 });
  await migrate(sql);
  const app = buildApp({ sql, gateway: { sweepIntervalMs: 1_000 } });
  await app.start();
  const admin = (await createToken(sql, { role: 'admin' })).secret;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-codex-'));
  const repo = path.join(tmp, 'repo');
  const home = path.join(tmp, 'home');
  const codexHome = path.join(tmp, 'codex-home');
  for (const d of [home, codexHome, repo]) fs.mkdirSync(d);
  const g = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'pipe' });
  g('init', '-q');
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(repo, `f${i}.txt`), `file ${i}\n`.repeat(50));
  g('add', '.');
  g('-c', 'user.email=b@e', '-c', 'user.name=b', 'commit', '-qm', 'c');
  g('gc', '-q');
  const model = await startScriptedResponses();
  fs.writeFileSync(path.join(codexHome, 'config.toml'), ['model = "gpt-5.5"', 'model_provider = "fake"', '[model_providers.fake]', 'name = "fake"',
    `base_url = "${model.url}"`, 'wire_api = "responses"', 'env_key = "FAKE_OPENAI_KEY"', ''].join('\n'));
  const dir = path.join(tmp, 'host');
  const host = new CodexHost({ gatewayUrl: app.url, hostToken: admin, dir });
  await host.start();
  const env = { ...process.env, HOME: home, CODEX_HOME: codexHome, FAKE_OPENAI_KEY: 'sk-bench' };
  const steps = [...[1, 2, 3].map((i) => ({ shell: [`echo step ${i}`] })), { text: 'done' }];
  try {
    // 2. Whole turns, with and without the host (alternating, so load drifts hit both alike).
    const withHost: number[] = [];
    const without: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      let t0 = performance.now();
      const l = await launchCodex({ dir, args: ['exec', '--dangerously-bypass-approvals-and-sandbox', codexScript(`bench ${r}`, steps)], cwd: repo, env, stdio: 'pipe', detached: true, bin });
      l.child.stdout!.resume();
      l.child.stderr!.resume();
      await new Promise((res) => l.child.once('exit', res));
      withHost.push(performance.now() - t0);
      const x = await l.exited;
      if (x.code !== 0) throw new Error(`codex with the host exited ${x.code}`);
      await host.settled();
      t0 = performance.now();
      const c = spawn(bin, ['exec', '--dangerously-bypass-approvals-and-sandbox', codexScript(`bench plain ${r}`, steps)], { cwd: repo, env, stdio: 'ignore' });
      const code = await new Promise((res) => c.once('exit', res));
      without.push(performance.now() - t0);
      if (code !== 0) throw new Error(`codex without hooks exited ${code}`);
    }

    // 1. Each hook as Codex runs it, in a thread the host fronts.
    const script = path.join(dir, 'gateway-hook.sh');
    const runnerHome = path.join(tmp, 'runner-codex-home');
    const runner = hookRunner(tmp, repo, { ...process.env, CODEX_HOME: runnerHome });
    const toHost = (route: string, body: unknown) => fetch(`http://127.0.0.1:${host.port}${route}`, {
      method: 'POST', headers: { [SECRET_HEADER]: clientSecret(dir, CODEX_NAMES) }, body: JSON.stringify(body) });
    const launch = await (await toHost('/launch', { cwd: repo })).json() as { token: string };
    await toHost('/launched', { token: launch.token, pid: runner.pid });
    const henv = { ...process.env, GATEWAY_CODEX_LAUNCH: launch.token };
    const thread = randomUUID();
    const base = { session_id: thread, transcript_path: path.join(runnerHome, 'sessions', '2026', '01', '01', `rollout-2026-01-01T00-00-00-${thread}.jsonl`), cwd: repo };
    const hook = (ev: string, extra: Record<string, unknown>) => runner.time('bash', [script, ev, 'closed'], { ...base, hook_event_name: ev, ...extra }, henv);
    const must = async (p: Promise<Timed>) => { const r = await p; if (r.code !== 0) throw new Error(`hook refused: ${r.err}`); return r.ms; };
    await must(hook('SessionStart', { source: 'startup' }));
    const figures: Record<string, number[]> = { UserPromptSubmit: [], 'PreToolUse shell': [], 'PreToolUse MCP': [], PostToolUse: [], Stop: [] };
    for (let i = 0; i < HOOK_N; i++) {
      const turn_id = randomUUID();
      fs.writeFileSync(path.join(repo, 'f0.txt'), `changed ${i}\n`);
      figures.UserPromptSubmit.push(await must(hook('UserPromptSubmit', { turn_id, prompt: `prompt ${i}` })));
      figures['PreToolUse shell'].push(await must(hook('PreToolUse', { turn_id, tool_name: 'Bash', tool_input: { command: 'true' }, tool_use_id: `call_b${i}` })));
      figures['PreToolUse MCP'].push(await must(hook('PreToolUse', { turn_id, tool_name: 'mcp__x__y', tool_input: { a: 1 }, tool_use_id: `call_m${i}` })));
      figures.PostToolUse.push(await must(hook('PostToolUse', { turn_id, tool_name: 'Bash', tool_input: { command: 'true' }, tool_response: 'Process exited with code 0', tool_use_id: `call_b${i}` })));
      figures.Stop.push(await must(hook('Stop', { turn_id, last_assistant_message: '' })));
      await host.settled();
    }
    const floor: number[] = [];
    for (let i = 0; i < HOOK_N; i++) floor.push((await runner.time('bash', ['-c', 'cat >/dev/null'], base, henv)).ms);
    runner.stop();
    console.log(`hooks as Codex runs them (bash ${script.split('/').pop()}, loopback HTTP to the host):`);
    for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(18)} ${fmt(v)}`);
    console.log(`  ${'bare bash hook'.padEnd(18)} ${fmt(floor)}  (a hook that does nothing: the floor)`);
    console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (${os.cpus().length} cores)`);
    const m = (xs: number[]) => pct(xs, 0.5);
    const hooks = 2 + 3 * 2 + 2; // SessionStart, UserPromptSubmit, 3 × (PreToolUse, PostToolUse), Stop, SessionEnd
    console.log(`whole turn (prompt, 3 shell calls, answer; codex exec; ${ROUNDS} rounds): with the host ${fmt(withHost)}; without hooks ${fmt(without)}`);
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
