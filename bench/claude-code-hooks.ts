/**
 * Claude Code hook latency: what the host's hooks add to a prompt and to a tool call.
 *
 * 1. Each hook as Claude Code runs it: the hook script (`bash <dir>/gateway-hook.sh <event> closed`, the JSON on
 *    stdin) against a running host and gateway, timed from spawn to exit, which is exactly how long Claude Code
 *    waits for it: PreToolUse of a Read call (admitWork), of a Bash call (admitWork + startJob), PostToolUse,
 *    UserPromptSubmit (worktree capture with the watcher + createSnapshot + beginExecution + appendMessage),
 *    Stop (answered at once; the turn is finished after). The same script against a closed port (the host
 *    down) and a bare `bash -c 'cat >/dev/null'` hook give the floor.
 * 2. The same scripted turn (a prompt, 3 Bash calls, a final answer: 2 + 3×2 + 1 hooks) run by the real
 *    `claude -p` with the host's hooks (through the launcher) and without any hook, medians of ROUNDS runs.
 *
 *   npx tsx bench/claude-code-hooks.ts [rounds]     (DATABASE_URL, or the embedded server through npm run bench)
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { openDatabase } from '../db/index.js';
import { createScratchDatabase } from '../db/scratch.js';
import { createToken } from '../domain/tokens.js';
import { buildApp } from '../server/app.js';
import { ClaudeCodeHost } from '../bridge/claude-code/host.js';
import { findClaudeBinary, launchClaude } from '../bridge/claude-code/launch.js';
import { writeHookScript } from '../bridge/claude-code/hook.js';
import { clientSecret, hostSecret, SECRET_HEADER } from '../bridge/claude-code/local-channel.js';
import { scriptPrompt, startScriptedAnthropic } from '../bridge/claude-code/scripted-model.js';

const ROUNDS = Number(process.argv[2] ?? process.env.ROUNDS ?? 7);
const HOOK_N = Number(process.env.HOOK_N ?? 50);

const pct = (xs: number[], p: number) => { const a = [...xs].sort((x, y) => x - y); return a[Math.min(a.length - 1, Math.floor(p * a.length))]; };
const fmt = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(1)} ms, p99 ${pct(xs, 0.99).toFixed(1)} ms (n=${xs.length})`;

type Timed = { ms: number; code: number | null; err: string };

// Runs one command with `input` on its standard input and answers how long it took, as Claude Code runs a hook.
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
 * A process that runs hooks the way Claude Code does: named `claude` (a link to node), in the worktree, with
 * its own HOME. The host takes a hook only from a Claude Code process whose directory and transcript folder
 * hold what the hook names (bridge/claude-code/host.ts verifyHook), so the hooks are timed from its children.
 */
function hookRunner(dir: string, cwd: string, env: NodeJS.ProcessEnv) {
  const link = path.join(dir, 'claude');
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
  const bin = findClaudeBinary();
  if (!bin) throw new Error('no claude binary (npm ci installs @anthropic-ai/claude-code-linux-x64)');
  const server = await openDatabase();
  const scratch = await createScratchDatabase(server.url, 'gw_bench_cc_hooks');
  const sql = connect(scratch.url, { max: 10 });
  await migrate(sql);
  const app = buildApp({ sql, gateway: { sweepIntervalMs: 1_000 } });
  await app.start();
  const admin = (await createToken(sql, { role: 'admin' })).secret;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cc-'));
  const repo = path.join(tmp, 'repo');
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home);
  fs.mkdirSync(repo);
  const g = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'pipe' });
  g('init', '-q');
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(repo, `f${i}.txt`), `file ${i}\n`.repeat(50));
  g('add', '.');
  g('-c', 'user.email=b@e', '-c', 'user.name=b', 'commit', '-qm', 'c');
  g('gc', '-q');
  const model = await startScriptedAnthropic();
  const dir = path.join(tmp, 'host');
  const host = new ClaudeCodeHost({ gatewayUrl: app.url, hostToken: admin, dir });
  await host.start();
  const env = { ...process.env, HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'sk-bench', DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1' };
  const permissions = { permissions: { allow: ['Bash', 'Read', 'Write', 'Edit'] } };
  const steps = [
    ...[1, 2, 3].map((i) => ({ tools: [{ name: 'Bash', input: { command: `echo step ${i}`, description: `step ${i}` } }] })),
    { text: 'done' },
  ];
  try {
    // 2. Whole turns, with and without the host (alternating, so load drifts hit both alike).
    const withHost: number[] = [];
    const without: number[] = [];
    const plain = path.join(tmp, 'plain-settings.json');
    fs.writeFileSync(plain, JSON.stringify(permissions));
    for (let r = 0; r < ROUNDS; r++) {
      let t0 = performance.now();
      const l = await launchClaude({ dir, args: ['-p', scriptPrompt(`bench ${r}`, steps)], cwd: repo, env, settings: permissions, stdio: 'pipe', detached: true, bin });
      l.child.stdout!.resume();
      l.child.stderr!.resume();
      await new Promise((res) => l.child.once('exit', res));
      withHost.push(performance.now() - t0); // Claude Code's own run (the launcher's report to the host is after it)
      const x = await l.exited;
      if (x.code !== 0) throw new Error(`claude with the host exited ${x.code}`);
      await host.settled();
      t0 = performance.now();
      const c = spawn(bin, ['--settings', plain, '-p', scriptPrompt(`bench plain ${r}`, steps)], { cwd: repo, env, stdio: 'ignore' });
      const code = await new Promise((res) => c.once('exit', res));
      without.push(performance.now() - t0);
      if (code !== 0) throw new Error(`claude without hooks exited ${code}`);
    }

    // 1. Each hook as Claude Code runs it, in a session the host fronts.
    const script = path.join(dir, 'gateway-hook.sh');
    const runnerHome = path.join(tmp, 'runner-home');
    const runner = hookRunner(tmp, repo, { ...process.env, HOME: runnerHome });
    const toHost = (route: string, body: unknown) => fetch(`http://127.0.0.1:${host.port}${route}`, {
      method: 'POST', headers: { [SECRET_HEADER]: clientSecret(dir) }, body: JSON.stringify(body) });
    const launch = await (await toHost('/launch', { cwd: repo })).json() as { token: string };
    await toHost('/launched', { token: launch.token, pid: runner.pid });
    const henv = { ...process.env, GATEWAY_CLAUDE_LAUNCH: launch.token };
    const sessionId = randomUUID();
    const base = { session_id: sessionId, transcript_path: path.join(runnerHome, '.claude', 'projects', 'bench', `${sessionId}.jsonl`), cwd: repo };
    const timeHook = (cmd: string, args: string[], input: unknown, env: NodeJS.ProcessEnv) => runner.time(cmd, args, input, env);
    const hook = (ev: string, extra: Record<string, unknown>) => timeHook('bash', [script, ev, 'closed'], { ...base, hook_event_name: ev, ...extra }, henv);
    const must = async (p: Promise<{ ms: number; code: number | null; err: string }>) => { const r = await p; if (r.code !== 0) throw new Error(`hook refused: ${r.err}`); return r.ms; };
    await must(hook('SessionStart', { source: 'startup' }));
    const figures: Record<string, number[]> = { UserPromptSubmit: [], 'PreToolUse Read': [], 'PreToolUse Bash': [], PostToolUse: [], Stop: [] };
    for (let i = 0; i < HOOK_N; i++) {
      const prompt_id = randomUUID();
      fs.writeFileSync(path.join(repo, 'f0.txt'), `changed ${i}\n`);
      figures.UserPromptSubmit.push(await must(hook('UserPromptSubmit', { prompt_id, prompt: `prompt ${i}` })));
      figures['PreToolUse Read'].push(await must(hook('PreToolUse', { prompt_id, tool_name: 'Read', tool_input: { file_path: path.join(repo, 'f1.txt') }, tool_use_id: `toolu_r${i}` })));
      figures['PreToolUse Bash'].push(await must(hook('PreToolUse', { prompt_id, tool_name: 'Bash', tool_input: { command: 'true', description: 'b' }, tool_use_id: `toolu_b${i}` })));
      figures.PostToolUse.push(await must(hook('PostToolUse', { prompt_id, tool_name: 'Bash', tool_input: { command: 'true' }, tool_response: { stdout: '', interrupted: false }, tool_use_id: `toolu_b${i}` })));
      figures.Stop.push(await must(hook('Stop', { prompt_id, last_assistant_message: '' })));
      await host.settled();
    }
    const floor: number[] = [];
    const open: number[] = [];
    const down: number[] = [];
    // The host down: the same script beside a host.port naming a port nobody listens on.
    const deadDir = path.join(tmp, 'dead');
    const dead = writeHookScript(deadDir);
    hostSecret(deadDir); // a host ran there once
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    fs.writeFileSync(path.join(deadDir, 'host.port'), `${(probe.address() as net.AddressInfo).port}\n`);
    await new Promise((r) => probe.close(r));
    for (let i = 0; i < HOOK_N; i++) {
      floor.push((await timeHook('bash', ['-c', 'cat >/dev/null'], base, henv)).ms);
      open.push((await timeHook('bash', [script, 'PostToolUse', 'open'], { ...base, session_id: randomUUID() }, henv)).ms);
      const r = await timeHook('bash', [dead, 'PreToolUse', 'closed'], base, henv);
      if (r.code !== 2) throw new Error(`a fronted session's tool call went through with the host down (exit ${r.code})`);
      down.push(r.ms);
    }
    runner.stop();
    console.log(`hooks as Claude Code runs them (bash ${script.split('/').pop()}, loopback HTTP to the host):`);
    for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(18)} ${fmt(v)}`);
    console.log(`  ${'bare bash hook'.padEnd(18)} ${fmt(floor)}  (a hook that does nothing: the floor)`);
    console.log(`  ${'unknown session'.padEnd(18)} ${fmt(open)}  (PostToolUse of a session the host does not know: answered at once)`);
    console.log(`  ${'host down'.padEnd(18)} ${fmt(down)}  (PreToolUse of a fronted session, connection refused: exit 2)`);
    console.log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (${os.cpus().length} cores)`);
    const m = (xs: number[]) => pct(xs, 0.5);
    const hooks = 2 + 3 * 2 + 1; // SessionStart, UserPromptSubmit, 3 × (PreToolUse, PostToolUse), Stop (SessionEnd runs after the answer)
    console.log(`whole turn (prompt, 3 Bash calls, answer; claude -p; ${ROUNDS} rounds): with the host ${fmt(withHost)}; without hooks ${fmt(without)}`);
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
