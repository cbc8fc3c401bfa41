// End to end: the real `codex` binary (npm @openai/codex 0.169.0, its linux-x64 platform package, installed by
// .ci/codex-install into a cache outside the clone), offline against a scripted local Responses API server, on a
// git repository with commits and packs, with the Codex host (bridge/codex/, on the host kit bridge/hooks-host/)
// between it and a real in-process gateway on a real Postgres.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestGateway, type TestGateway } from './harness.js';
import { CodexHost } from '../bridge/codex/host.js';
import { checkCodexArgs, findCodexBinary, hookConfigArgs, launchCodex, sessionArgs, writeHookScript } from '../bridge/codex/launch.js';
import { hostSecret } from '../bridge/hooks-host/local-channel.js';
import { parseRollout, rewriteRollout, turnOf } from '../bridge/codex/rollout.js';
import { codexScript, startScriptedResponses, type CodexScriptStep, type ScriptedResponses } from '../bridge/codex/scripted-model.js';
import { FileBridgeStore } from '../bridge/opencode/store.js';
import { processesWith } from './support/processes.js';
import { missedTurnsImportedOnce } from './support/missed-turns.js';
import { cli } from './support/cli.js';
import { commandOf, helpOf } from '../cli/commands.js';
import { until } from './support/until.js';

const __dirname = path.dirname(fileURLToPath(import.meta.url));
const bin = findCodexBinary();
if (!bin) console.warn('codex-host.test.ts: no codex binary (run .ci/codex-install, or set CODEX_BIN): the end-to-end tests are skipped');

const SESSION_Q = `query($id: ID!) { session(id: $id) { id directory status metadata
  executions(first: 50) { edges { node { id sequence status interruptReason trigger error
    boundary { __typename ... on BoundaryUnavailable { reason detail } }
    changeset { coverage { __typename ... on CoverageUnavailable { reason } } files { path status } }
    jobs(first: 10) { edges { node { kind status background command exitCode } } } } } }
  messages(first: 100) { edges { node { id role origin execution { id }
    parts { id __typename ... on TextPart { text } ... on ReasoningPart { text } ... on ToolPart { tool status input output } } } } } } }`;
const SEAL_M = `mutation($i: SealSessionInput!) { sealSession(input: $i) { __typename
  ... on SessionSealed { sealedAt interruptedExecution { id status interruptReason } cancelledJobs { id status background } }
  ... on SealUnsupportedError { reason } ... on SealTimeoutError { pendingExecution { id } } ... on Error { message } } }`;

function gitRepo(dir: string) {
  const g = (...a: string[]) => execFileSync('git', a, { cwd: dir, stdio: 'pipe' });
  fs.mkdirSync(dir, { recursive: true });
  g('init', '-q', '-b', 'main');
  for (let i = 0; i < 3; i++) {
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`.repeat(20));
    g('add', '.');
    g('-c', 'user.email=t@e', '-c', 'user.name=t', 'commit', '-qm', `c${i}`);
  }
  g('gc', '-q');
}

it('finds the codex binary (the vendored one of @openai/codex-linux-x64 0.169.0)', () => {
  if (!bin) return; // said above: skipped where it is not installed; .ci/run installs it
  expect(execFileSync(bin, ['--version'], { env: { ...process.env, CODEX_HOME: fs.mkdtempSync(path.join(os.tmpdir(), 'cx-v-')) } }).toString()).toContain('0.169.0');
});

describe('the launcher\'s arguments', () => {
  it('refuses every argument that would switch the host\'s hooks off or replace them', () => {
    for (const bad of [['--disable', 'hooks'], ['--disable=hooks'], ['--disable', 'codex_hooks'], ['exec', '-c', 'features.hooks=false', 'x'],
      ['-c', 'features.codex_hooks=false'], ['--config', 'hooks.PreToolUse=[]'], ['-c', 'hooks={}'], ['-c', 'features={hooks=false}']]) {
      expect(() => checkCodexArgs(bad), bad.join(' ')).toThrow(/hooks/);
    }
    expect(() => checkCodexArgs(['exec', '--dangerously-bypass-approvals-and-sandbox', '-c', 'model="gpt-5.5"', '--disable', 'web_search', 'hi'])).not.toThrow();
    expect(sessionArgs(['exec', 'resume', '--json', '01a24e9d-0c7d-7051-bae6-d03530bd3d36', 'go'])).toEqual({ names: '01a24e9d-0c7d-7051-bae6-d03530bd3d36', anyInCwd: false });
    expect(sessionArgs(['exec', 'resume', '--last', 'go'])).toEqual({ names: null, anyInCwd: true });
    expect(sessionArgs(['exec', 'go'])).toEqual({ names: null, anyInCwd: false });
    const args = hookConfigArgs('/x/gateway-hook.sh', 'closed');
    expect(args.filter((a) => a === '-c').length).toBe(8);
    expect(args).toContain(`hooks.PreToolUse=[{matcher="*",hooks=[{type="command",command="bash '/x/gateway-hook.sh' PreToolUse closed",timeout=60}]}]`);
  });
});

describe('the rollout reader', () => {
  it('skips what it does not know and never throws; a rewrite replaces the text in every line that carries it', () => {
    const T = 'turn-1';
    const lines = [
      { type: 'session_meta', payload: { id: 'thread-1' } },
      { type: 'event_msg', payload: { type: 'task_started', turn_id: T } },
      { type: 'turn_context', payload: { turn_id: T, model: 'gpt-x' } },
      { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>x</environment_context>' }] } },
      { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'the prompt SECRET-P' }], internal_chat_message_metadata_passthrough: { turn_id: T } } },
      { type: 'response_item', payload: { type: 'reasoning', id: 'rs1', summary: [{ type: 'summary_text', text: 'thinking' }] } },
      { type: 'response_item', payload: { type: 'function_call', id: 'fc1', name: 'exec_command', arguments: '{"cmd":"exit 3"}', call_id: 'c1' } },
      { type: 'token_usage_record', payload: { turn_id: T, usage: { input_tokens: 10, cached_input_tokens: 4, output_tokens: 2, reasoning_output_tokens: 1 } } },
      { type: 'event_msg', payload: { type: 'item_completed', item: { type: 'CommandExecution', id: 'c1', exit_code: 3 } } },
      { type: 'response_item', payload: { type: 'function_call_output', call_id: 'c1', output: 'Chunk ID: a\nProcess exited with code 3\nOutput:\n' } },
      { type: 'something_new', payload: { x: 1 } },
      { type: 'response_item', payload: { type: 'message', id: 'm2', role: 'assistant', content: [{ type: 'output_text', text: 'the key is SECRET-K' }] } },
      { type: 'event_msg', payload: { type: 'item_completed', item: { type: 'AgentMessage', id: 'm2', content: [{ type: 'Text', text: 'the key is SECRET-K' }] } } },
      { type: 'token_usage_record', payload: { turn_id: T, usage: { input_tokens: 20, output_tokens: 3 } } },
      { type: 'event_msg', payload: { type: 'task_complete', turn_id: T, last_agent_message: 'the key is SECRET-K' } },
    ].map((l) => JSON.stringify(l));
    const text = [...lines.slice(0, 5), 'not json', '[1]', ...lines.slice(5), '{"torn'].join('\n');
    const { lines: parsed, skipped } = parseRollout(text);
    expect(skipped).toBe(3);
    const t = turnOf(parsed, T);
    expect(t.prompt).toBe('the prompt SECRET-P');
    expect(t.model).toBe('gpt-x');
    expect(t.usage).toEqual({ inputTokens: 30, outputTokens: 5, cacheReadTokens: 4, cacheWriteTokens: 0, reasoningTokens: 1 });
    expect(t.steps.map((s) => s.parts.map((p) => p.type))).toEqual([['REASONING', 'TOOL'], ['TEXT']]);
    expect(t.steps[0].parts[1]).toMatchObject({ tool: 'exec_command', input: { cmd: 'exit 3' }, status: 'error', externalID: 'c1' });
    expect(t.shells).toEqual([{ callId: 'c1', command: 'exit 3', exitCode: 3, running: false, done: true, killed: false }]);
    expect(t.end).toEqual({ kind: 'complete', lastText: 'the key is SECRET-K' });
    expect(() => turnOf(parseRollout('\u0000{{{\n\n').lines, 'x')).not.toThrow();
    const r = rewriteRollout(text, [{ kind: 'correct', at: t.steps[1].locators[0], text: 'the key is [redacted]' },
      { kind: 'retract', at: [{ kind: 'prompt', turnId: T }], placeholder: '[retracted]' }]);
    expect(r.applied).toBe(2);
    const out = r.text;
    expect(out).not.toContain('SECRET-K');
    expect(out).not.toContain('SECRET-P');
    expect(out).toContain('<environment_context>');
    expect(r.text.split('\n').length).toBe(text.split('\n').length);
    expect(r.text).toContain('not json');
  });
});

describe.skipIf(!bin)('Codex host (real codex binary)', { timeout: 300_000 }, () => {
  let gw: TestGateway;
  let model: ScriptedResponses;
  let host: CodexHost;
  let tmp: string;
  let repo: string;
  let home: string;
  let codexHome: string;
  let hostDir: string;
  let tuiRepo: string;

  const env = () => ({ ...process.env, HOME: home, CODEX_HOME: codexHome, FAKE_OPENAI_KEY: 'sk-fake-local', CODEX_BIN: '' });
  const newHost = () => new CodexHost({ gatewayUrl: gw.url, hostToken: gw.admin, dir: hostDir, leaseMs: 10_000, codexEnv: env(), codexBin: bin!,
    models: ['gpt-5.5'], log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[codex] ${m}`); } });
  const agentRequests = () => model.requests.filter((r) => Array.isArray(r.body?.tools) && r.body.tools.length > 0);

  /** One `codex exec` run through the launcher (`gateway codex exec …`); answers its thread ID, output and exit. */
  async function run(prompt: string, opts: { resume?: string; onStart?: (pid: number) => void } = {}) {
    const args = opts.resume ? ['exec', 'resume', '--dangerously-bypass-approvals-and-sandbox', opts.resume, prompt] : ['exec', '--dangerously-bypass-approvals-and-sandbox', prompt];
    const l = await launchCodex({ dir: hostDir, args, cwd: repo, env: env(), stdio: 'pipe', detached: true, bin: bin! });
    let out = '';
    let err = '';
    let thread: string | null = opts.resume ?? null;
    const threadSeen: (() => void)[] = [];
    l.child.stdout!.on('data', (d) => { out += d; });
    l.child.stderr!.on('data', (d) => {
      err += d;
      const m = /session id: ([0-9a-f-]{36})/.exec(err);
      if (m && !thread) { thread = m[1]; threadSeen.splice(0).forEach((f) => f()); }
    });
    opts.onStart?.(l.child.pid!);
    const started = new Promise<string>((r) => (thread ? r(thread) : threadSeen.push(() => r(thread!))));
    const done = (async () => {
      const x = await l.exited;
      await host.settled();
      return { thread: thread as string | null, code: x.code, signal: x.signal, out, err, refused: x.refused };
    })();
    return { pid: l.child.pid!, started, done };
  }
  const runToEnd = async (prompt: string, opts: { resume?: string } = {}) => (await run(prompt, opts)).done;
  const session = async (id: string) => (await gw.gql(SESSION_Q, { id })).data!.session;
  const seal = async (id: string, timeoutMs = 60_000) => (await gw.gql(SEAL_M, { i: { sessionID: id, timeoutMs } })).data!.sealSession;
  const rolloutOf = (thread: string) => {
    const walk = (d: string): string[] => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
    return walk(path.join(codexHome, 'sessions')).find((f) => f.endsWith(`-${thread}.jsonl`))!;
  };

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-host-'));
    repo = path.join(tmp, 'repo');
    home = path.join(tmp, 'home');
    codexHome = path.join(tmp, 'codex-home');
    hostDir = path.join(tmp, 'host');
    tuiRepo = path.join(tmp, 'tui-repo');
    gitRepo(tuiRepo);
    fs.mkdirSync(home);
    fs.mkdirSync(codexHome);
    gitRepo(repo);
    gw = await startTestGateway();
    model = await startScriptedResponses();
    // gpt-5.5: a slug of Codex's bundled catalog (apply_patch offered), served by the scripted provider.
    fs.writeFileSync(path.join(codexHome, 'config.toml'), ['model = "gpt-5.5"', 'model_provider = "fake"', '[model_providers.fake]', 'name = "fake"',
      `base_url = "${model.url}"`, 'wire_api = "responses"', 'env_key = "FAKE_OPENAI_KEY"',
      // The interactive TUI's first-run screens answered as a user answers them once (Codex writes the same).
      // disable_paste_burst: keys sent at once are typing, not a paste (whose Enter would be a newline).
      '[tui]', 'screen_reader_detection_done = true', 'disable_paste_burst = true', '[tui.model_availability_nux]', '"gpt-6.1-sol" = 1',
      '[notice.model_migrations]', '"gpt-5.5" = "gpt-6-sol"', `[projects."${tuiRepo}"]`, 'trust_level = "trusted"', ''].join('\n'));
    host = newHost();
    await host.start();
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    await gw?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('mirrors a thread as a session and each turn as an execution (the turn ID its externalID): reasoning, shells with exit codes, apply_patch, text, usage, model, changesets with shell-made changes; a host restart mirrors nothing twice', async () => {
    const patch = '*** Begin Patch\n*** Add File: patched.txt\n+made by apply_patch\n*** End Patch\n';
    const steps: CodexScriptStep[] = [
      { reasoning: 'the file must be written by a shell', shell: ['printf "made by a shell\\n" > shell.txt && echo wrote'], usage: { input_tokens: 100, cached_tokens: 7, output_tokens: 20, reasoning_tokens: 5 } },
      { shell: ['printf "more\\n" >> f0.txt', 'echo no; exit 3'], usage: { input_tokens: 110, output_tokens: 5 } },
      { patch: [patch], usage: { input_tokens: 120, output_tokens: 6 } },
      { text: 'All done.', usage: { input_tokens: 130, output_tokens: 4 } },
    ];
    const r1 = await runToEnd(codexScript('write shell.txt', steps));
    expect(r1.code, r1.err).toBe(0);
    expect(r1.out.trim()).toBe('All done.');
    const thread = r1.thread!;
    const id = host.gatewaySessionOf(thread)!;
    expect(id).toMatch(/^ses_/);
    const r2 = await runToEnd(codexScript('second turn', [{ shell: ['echo second > second.txt'] }, { text: 'ok' }]), { resume: thread });
    expect(r2.code, r2.err).toBe(0);

    const s = await session(id);
    expect(s.metadata.codex).toMatchObject({ threadID: thread, launched: true });
    expect(s.directory).toBe(repo);
    const ex = s.executions.edges.map((e: any) => e.node).sort((a: any, b: any) => a.sequence - b.sequence);
    expect(ex.map((e: any) => [e.sequence, e.status, e.trigger])).toEqual([[1, 'SUCCEEDED', 'PROMPT'], [2, 'SUCCEEDED', 'PROMPT']]);
    expect(ex[0].boundary.__typename).toBe('SnapshotBoundary');
    expect(ex[0].changeset.files.map((f: any) => [f.path, f.status]).sort()).toEqual([['f0.txt', 'MODIFIED'], ['patched.txt', 'ADDED'], ['shell.txt', 'ADDED']]);
    expect(ex[1].changeset.files.map((f: any) => [f.path, f.status])).toEqual([['second.txt', 'ADDED']]);
    // The turn ID (the hooks' turn_id, the rollout's task_started) is the execution's externalID.
    const lines = parseRollout(fs.readFileSync(rolloutOf(thread), 'utf8')).lines;
    const turns = lines.filter((l) => l.type === 'event_msg' && l.payload?.type === 'task_started').map((l) => l.payload.turn_id);
    const [row] = await gw.sql`SELECT * FROM executions WHERE id = ${ex[0].id}`;
    expect(row).toMatchObject({ externalId: turns[0], providerId: 'openai', modelId: 'gpt-5.5', finishReason: 'stop' });
    expect([row.inputTokens, row.outputTokens, row.cacheReadTokens, row.reasoningTokens].map(Number)).toEqual([460, 35, 7, 5]);
    // Each model response a call of its own, with its usage and the rollout's times (its token_usage_record's).
    const calls = (await gw.gql(`query($id: ID!) { execution(id: $id) { modelCalls { index externalID model { providerID modelID } startedAt endedAt timesFrom finishReason usage { inputTokens outputTokens reasoningTokens cacheReadTokens cacheWriteTokens cost } } } }`, { id: ex[0].id })).data!.execution;
    expect(calls.modelCalls.map((c: any) => [c.index, c.model.modelID, c.timesFrom, c.usage.inputTokens, c.usage.outputTokens])).toEqual([
      [0, 'gpt-5.5', 'AGENT', 100, 20], [1, 'gpt-5.5', 'AGENT', 110, 5], [2, 'gpt-5.5', 'AGENT', 120, 6], [3, 'gpt-5.5', 'AGENT', 130, 4]]);
    const records = lines.filter((l) => l.type === 'token_usage_record' && l.payload?.turn_id === turns[0]).map((l) => new Date(l.timestamp!).toISOString());
    expect(calls.modelCalls.map((c: any) => c.endedAt)).toEqual(records);
    for (const [i, c] of calls.modelCalls.entries()) {
      expect(c.startedAt <= c.endedAt, `call ${i}`).toBe(true);
      if (i) expect(c.startedAt >= calls.modelCalls[i - 1].endedAt, `call ${i} after the one before`).toBe(true);
    }
    const jobs = ex[0].jobs.edges.map((e: any) => e.node).map((j: any) => [j.kind, j.status, j.exitCode, j.command]).sort();
    expect(jobs).toEqual([['SHELL', 'COMPLETED', 0, 'printf "made by a shell\\n" > shell.txt && echo wrote'], ['SHELL', 'COMPLETED', 0, 'printf "more\\n" >> f0.txt'], ['SHELL', 'ERROR', 3, 'echo no; exit 3']]);
    const msgs = s.messages.edges.map((e: any) => e.node);
    const first = msgs.filter((m: any) => m.execution?.id === ex[0].id);
    expect(first[0]).toMatchObject({ role: 'USER', origin: 'PROMPT' });
    expect(first[0].parts[0].text).toContain('write shell.txt');
    expect(first.slice(1).map((m: any) => m.parts.map((p: any) => p.__typename).join(','))).toEqual(['ReasoningPart,ToolPart', 'ToolPart,ToolPart', 'ToolPart', 'TextPart']);
    // Each tool call with its own times, as the rollout has them (its call's line, its result's).
    const tq = await gw.gql(`query($id: ID!) { execution(id: $id) { messages(first: 50) { edges { node { parts { __typename ... on ToolPart { tool startedAt endedAt } } } } } } }`, { id: ex[0].id });
    const toolTimes = tq.data!.execution.messages.edges.flatMap((e: any) => e.node.parts).filter((p: any) => p.__typename === 'ToolPart');
    expect(toolTimes.length).toBe(4);
    for (const p of toolTimes) expect(!!p.startedAt && !!p.endedAt && p.startedAt <= p.endedAt, JSON.stringify(p)).toBe(true);

    expect(first[1].parts[0].text).toBe('the file must be written by a shell');
    expect(first[1].parts[1]).toMatchObject({ tool: 'exec_command', status: 'completed', input: { cmd: expect.stringContaining('shell.txt') } });
    expect(first[1].parts[1].output).toContain('wrote');
    expect(first[2].parts[1]).toMatchObject({ status: 'error' });
    expect(first[2].parts[1].output).toContain('Process exited with code 3');
    expect(first[3].parts[0]).toMatchObject({ tool: 'apply_patch', status: 'completed', input: { input: patch } });
    expect(first[4].parts[0].text).toBe('All done.');

    // A host restart: everything stored is mirrored once (idempotency keys and the state file).
    const before = JSON.stringify(await session(id));
    await host.stop();
    const stored = new FileBridgeStore(path.join(hostDir, 'state.jsonl'));
    expect((await stored.sessions()).filter((r) => r.ocSessionID.startsWith('launch:'))).toEqual([]);
    await stored.close();
    host = newHost();
    await host.start();
    await host.settled();
    expect(JSON.stringify(await session(id))).toBe(before);
    const r3 = await runToEnd(codexScript('third', [{ text: 'three' }]), { resume: thread });
    expect(r3.code, r3.err).toBe(0);
    const after = await session(id);
    expect(after.executions.edges.length).toBe(3);
    expect(after.messages.edges.length).toBe(msgs.length + 2);
  });

  it('shells that outlive their yield end honestly: one seen exiting by a `write_stdin` poll with its exit code, one Codex ends with the turn CANCELLED (a background job by then); the thread can still be sealed with proof', async () => {
    const steps: CodexScriptStep[] = [
      { shell: [{ cmd: 'sleep 1; echo bye; exit 4', yield_time_ms: 200 }] },
      { calls: [{ name: 'write_stdin', arguments: { session_id: '$SHELL_SESSION', chars: '', yield_time_ms: 5000 } }] },
      { shell: [{ cmd: 'sleep 31; echo never', yield_time_ms: 200 }] },
      { text: 'leaving it running' },
    ];
    const r = await runToEnd(codexScript('outlive', steps));
    expect(r.code, r.err).toBe(0);
    const id = host.gatewaySessionOf(r.thread!)!;
    const s = await session(id);
    const jobs = s.executions.edges[0].node.jobs.edges.map((e: any) => e.node).sort((a: any, b: any) => a.command.localeCompare(b.command));
    // Codex answered "still running" for both; no PostToolUse came for either. Their ends are Codex's
    // CommandExecution items in the rollout: exit code 4, and -1 for the terminal it ended with the turn.
    expect(jobs.map((j: any) => [j.command, j.status, j.exitCode, j.background])).toEqual([
      ['sleep 1; echo bye; exit 4', 'ERROR', 4, false],
      ['sleep 31; echo never', 'CANCELLED', null, true],
    ]);
    expect(processesWith('sleep 31')).toEqual([]);
    const tools = s.messages.edges.flatMap((e: any) => e.node.parts).filter((p: any) => p.__typename === 'ToolPart');
    // The message says what the model was told at the turn's end: the second shell still running (its job says how it ended).
    expect(tools.map((p: any) => [p.tool, p.status])).toEqual([['exec_command', 'error'], ['write_stdin', 'completed'], ['exec_command', 'running']]);
    expect(tools[1].output).toContain('Process exited with code 4');
    // Nothing of the thread is left LOST: its seal is proven (a LOST job would make it SealUnsupportedError(JOB_LOST)).
    expect((await seal(id)).__typename).toBe('SessionSealed');
  });

  it('seals a launched thread: the running turn is stopped, its shell left running in a background terminal killed with Codex, SessionSealed, a later prompt refused before any model request', async () => {
    const marker = path.join(tmp, `seal-${Date.now()}`);
    const steps: CodexScriptStep[] = [
      // Outlives its yield: unified exec keeps it running as a terminal `write_stdin` could reach (no hook gates that).
      { shell: [{ cmd: `timeout 67 tail -f /dev/null; touch ${marker}`, yield_time_ms: 300 }] },
      { text: 'never', gate: 'seal-hold' },
    ];
    const r = await run(codexScript('slow shell', steps));
    const thread = await r.started;
    const id = await host.waitSession(thread);
    await model.waitGate('seal-hold');
    await until('the shell running', () => processesWith('timeout 67 tail').length > 0);
    // Codex sends no PostToolUse for a command still running past its yield: the job runs until its end is seen.
    expect((await gw.sql`SELECT status FROM jobs WHERE session_id = ${id}`).map((j: any) => j.status)).toEqual(['RUNNING']);
    const sealed = await seal(id);
    expect(sealed.__typename, JSON.stringify(sealed)).toBe('SessionSealed');
    expect(sealed.interruptedExecution).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'SEAL' });
    expect(sealed.cancelledJobs).toMatchObject([{ status: 'CANCELLED' }]);
    // Gone when the seal answered: the host acknowledged only after the kill.
    expect(processesWith('timeout 67 tail')).toEqual([]);
    const x = await r.done;
    expect(x.signal).toBe('SIGKILL');
    expect(fs.existsSync(marker)).toBe(false);
    model.release('seal-hold');
    const requests = model.requests.length;
    const again = await runToEnd(codexScript('after the seal', [{ shell: [`touch ${marker}`] }]), { resume: thread });
    expect(again.refused.join('\n')).toMatch(/sealed by the gateway/);
    expect(model.requests.length).toBe(requests);
    expect(fs.existsSync(marker)).toBe(false);
    const s = await session(id);
    expect(s.status).toBe('SEALED');
    expect(s.executions.edges.length).toBe(1);
  });

  it('a correction and a retraction are written into the rollout while another thread runs a turn: the next `codex exec resume` sends the corrected context', async () => {
    const secret = 'sk-SECRET-CODEX-1234';
    const promptSecret = 'PROMPT-SECRET-4242';
    const r1 = await runToEnd(codexScript(`remember ${promptSecret}`, [{ reasoning: 'I will print it', text: `the key is ${secret}` }]));
    expect(r1.code, r1.err).toBe(0);
    const thread = r1.thread!;
    const id = host.gatewaySessionOf(thread)!;
    const file = rolloutOf(thread);
    expect(fs.readFileSync(file, 'utf8')).toContain(secret);
    // Another thread of the same host runs a turn, held at the model.
    const other = await run(codexScript('hold', [{ text: 'held', gate: 'other-thread' }]));
    await model.waitGate('other-thread');
    const msgs = (await session(id)).messages.edges.map((e: any) => e.node);
    const prompt = msgs.find((m: any) => m.role === 'USER');
    const answer = msgs.find((m: any) => m.role === 'ASSISTANT');
    const part = answer.parts.find((p: any) => p.text?.includes(secret));
    const c = await gw.gql(`mutation($i: CorrectMessagePartInput!) { correctMessagePart(input: $i) { __typename } }`,
      { i: { messageID: answer.id, partID: part.id, text: 'the key is [redacted]' } });
    expect(c.data.correctMessagePart.__typename).toBe('MessagePartCorrected');
    const rt = await gw.gql(`mutation($i: RetractMessageInput!) { retractMessage(input: $i) { __typename } }`, { i: { messageID: prompt.id, reason: 'secret' } });
    expect(rt.data.retractMessage.__typename).toBe('MessageRetracted');
    await until('both edits in the rollout', () => { const t = fs.readFileSync(file, 'utf8'); return !t.includes(secret) && !t.includes(promptSecret); }, 15_000);
    const text = fs.readFileSync(file, 'utf8');
    expect(parseRollout(text).skipped).toBe(0);
    expect(text).toContain('the key is [redacted]');
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.includes('.tmp'))).toEqual([]);
    // Resumed while the other thread still runs: the model gets the corrected context.
    const before = model.requests.length;
    const r2 = await runToEnd(codexScript('next', [{ text: 'fine' }]), { resume: thread });
    expect(r2.code, r2.err).toBe(0);
    const sent = JSON.stringify(model.requests.slice(before).map((q) => q.body.input));
    expect(sent).toContain('the key is [redacted]');
    expect(sent).not.toContain(secret);
    expect(sent).not.toContain(promptSecret);
    model.release('other-thread');
    expect((await other.done).code).toBe(0);
  });

  it('imports the turns a rollout holds from before the host saw the thread, with honest boundaries, once', async () => {
    // Codex run without the host's hooks (no launcher): the host never hears of it.
    const earlier = codexScript('an earlier turn', [{ reasoning: 'before', shell: ['echo early; exit 2'], usage: { input_tokens: 40, output_tokens: 4 } },
      { text: 'earlier answer', usage: { input_tokens: 50, output_tokens: 6 } }]);
    const child = spawn(bin!, ['exec', '--dangerously-bypass-approvals-and-sandbox', earlier], { cwd: repo, env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d) => { err += d; });
    expect(await new Promise((r) => child.once('exit', r))).toBe(0);
    const thread = /session id: ([0-9a-f-]{36})/.exec(err)![1];
    expect(host.gatewaySessionOf(thread)).toBeNull();
    const r = await runToEnd(codexScript('now with the host', [{ text: 'live answer' }]), { resume: thread });
    expect(r.code, r.err).toBe(0);
    const id = host.gatewaySessionOf(thread)!;
    const s = await session(id);
    const ex = s.executions.edges.map((e: any) => e.node).sort((a: any, b: any) => a.sequence - b.sequence);
    expect(ex.map((e: any) => [e.sequence, e.status, e.boundary.__typename])).toEqual([[1, 'SUCCEEDED', 'BoundaryUnavailable'], [2, 'SUCCEEDED', 'SnapshotBoundary']]);
    expect(ex[0].boundary).toMatchObject({ reason: 'START_NOT_CAPTURED' });
    expect(ex[0].boundary.detail).toContain('imported');
    expect(ex[0].jobs.edges.map((e: any) => e.node)).toMatchObject([{ kind: 'SHELL', status: 'ERROR', exitCode: 2 }]);
    const texts = s.messages.edges.map((e: any) => e.node).map((m: any) => `${m.role}:${m.parts.map((p: any) => p.__typename).join(',')}`);
    expect(texts).toEqual(['USER:TextPart', 'ASSISTANT:ReasoningPart,ToolPart', 'ASSISTANT:TextPart', 'USER:TextPart', 'ASSISTANT:TextPart']);
    const [row] = await gw.sql`SELECT input_tokens, output_tokens FROM executions WHERE id = ${ex[0].id}`;
    expect([Number(row.inputTokens), Number(row.outputTokens)]).toEqual([90, 10]);
  });

  it('a turn Codex runs on a mirrored thread while the host is down (its hooks failing open), or without its hooks, is imported once, in order, with honest boundaries', async () => {
    let thread: string | null = null;
    await missedTurnsImportedOnce({
      gw,
      async turn(how, file, w, whileRunning) {
        const hooks = how === 'hooks' ? ['--dangerously-bypass-hook-trust', ...hookConfigArgs(host.scriptPath, 'open')] : [];
        const gate = `missed-${w}`;
        const prompt = codexScript(`turn ${w}`, [{ shell: [`echo ${w} > ${file}`] }, { text: w, ...(whileRunning ? { gate } : {}) }]);
        const args = [...hooks, 'exec', ...(thread ? ['resume', '--dangerously-bypass-approvals-and-sandbox', thread] : ['--dangerously-bypass-approvals-and-sandbox']), prompt];
        const child = spawn(bin!, args, { cwd: repo, env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr!.on('data', (d) => { err += d; });
        const exited = new Promise((r) => child.once('exit', r));
        if (whileRunning) {
          await model.waitGate(gate);
          await whileRunning();
          model.release(gate);
        }
        expect(await exited, err).toBe(0);
        thread ??= /session id: ([0-9a-f-]{36})/.exec(err)![1];
        if (!host.stopped) await host.settled();
      },
      sessionID: () => host.gatewaySessionOf(thread!)!,
      stopHost: () => host.stop(),
      async startHost() { host = newHost(); await host.start(); await host.settled(); },
    });
  });

  it('a turn the Responses API fails is FAILED with its error', async () => {
    const r = await runToEnd(codexScript('fail', [{ fail: 'scripted failure: model overloaded' }]));
    const id = host.gatewaySessionOf(r.thread!)!;
    const ex = (await session(id)).executions.edges.map((e: any) => e.node);
    expect(ex).toMatchObject([{ status: 'FAILED' }]);
    expect(ex[0].error).toContain('scripted failure: model overloaded');
    expect(r.code).toBe(1);
  });

  it('an MCP tool call is admitted by the gateway and mirrored as a ToolPart with its result; after the seal it is refused and does not run', async () => {
    const mcp = ['-m', 'fake-model', '-c', `mcp_servers.testmcp.command="node"`, '-c', `mcp_servers.testmcp.args=["${path.join(__dirname, 'support', 'mcp-touch-server.mjs')}"]`];
    const target = path.join(repo, 'mcp.txt');
    const step = (p: string): CodexScriptStep => ({ calls: [{ namespace: 'mcp__testmcp', name: 'touch_file', arguments: { path: p } }] });
    const l = await launchCodex({ dir: hostDir, args: ['exec', ...mcp, '--dangerously-bypass-approvals-and-sandbox', codexScript('mcp', [step(target), { text: 'touched' }])], cwd: repo, env: env(), stdio: 'pipe', bin: bin! });
    let err = '';
    l.child.stderr!.on('data', (d) => { err += d; });
    expect((await l.exited).code, err).toBe(0);
    await host.settled();
    const thread = /session id: ([0-9a-f-]{36})/.exec(err)![1];
    const id = host.gatewaySessionOf(thread)!;
    expect(fs.existsSync(target)).toBe(true);
    const s = await session(id);
    const tool = s.messages.edges.map((e: any) => e.node).flatMap((m: any) => m.parts).find((p: any) => p.__typename === 'ToolPart');
    expect(tool).toMatchObject({ tool: 'mcp__testmcp__touch_file', status: 'completed', input: { path: target } });
    expect(tool.output).toContain(`touched ${target}`);
    expect((await gw.sql`SELECT route FROM admissions WHERE session_id = ${id}`).map((r: any) => r.route)).toContain('codex PreToolUse mcp__testmcp__touch_file');
    expect(s.executions.edges[0].node.changeset.files.map((f: any) => f.path)).toEqual(['mcp.txt']);
    expect((await seal(id)).__typename).toBe('SessionSealed');
    // The sealed thread resumed: refused at its prompt, so no tool call is even attempted.
    const after = path.join(repo, 'mcp-after.txt');
    const l2 = await launchCodex({ dir: hostDir, args: ['exec', ...mcp, 'resume', '--dangerously-bypass-approvals-and-sandbox', thread, codexScript('again', [step(after)])], cwd: repo, env: env(), stdio: 'pipe', bin: bin! });
    expect((await l2.exited).refused.join('\n')).toMatch(/sealed/);
    expect(fs.existsSync(after)).toBe(false);
  });

  it('a subagent (multi_agent_v1 spawn_agent) is a child session with its own execution, messages and jobs, admitted against its parent', async () => {
    const child = codexScript('child task', [{ reasoning: 'the child thinks', shell: ['echo child > child.txt'] }, { text: 'child done' }]);
    const steps: CodexScriptStep[] = [
      { calls: [{ namespace: 'multi_agent_v1', name: 'spawn_agent', arguments: { message: child } }] },
      { calls: [{ namespace: 'multi_agent_v1', name: 'wait_agent', arguments: { targets: ['$AGENT_ID'], timeout_ms: 60_000 } }] },
      { text: 'parent done' },
    ];
    const l = await launchCodex({ dir: hostDir, args: ['exec', '-m', 'fake-model', '--dangerously-bypass-approvals-and-sandbox', codexScript('parent', steps)], cwd: repo, env: env(), stdio: 'pipe', bin: bin! });
    let err = '';
    let out = '';
    l.child.stderr!.on('data', (d) => { err += d; });
    l.child.stdout!.on('data', (d) => { out += d; });
    const x = await l.exited;
    await host.settled();
    expect(x.code, err).toBe(0);
    expect(out.trim()).toBe('parent done');
    expect(x.refused).toEqual([]);
    const thread = /session id: ([0-9a-f-]{36})/.exec(err)![1];
    const id = host.gatewaySessionOf(thread)!;
    const [kid] = await gw.sql`SELECT id, parent_id, metadata FROM sessions WHERE parent_id = ${id}`;
    expect(kid).toBeTruthy();
    const s = await session(kid.id);
    expect(s.metadata.codex).toMatchObject({ parentThreadID: thread, launched: true });
    const ex = s.executions.edges.map((e: any) => e.node);
    expect(ex).toMatchObject([{ status: 'SUCCEEDED', trigger: 'SYNTHETIC' }]);
    expect(ex[0].jobs.edges.map((e: any) => e.node)).toMatchObject([{ kind: 'SHELL', status: 'COMPLETED', exitCode: 0, command: 'echo child > child.txt' }]);
    expect(ex[0].changeset.files.map((f: any) => f.path)).toContain('child.txt');
    const msgs = s.messages.edges.map((e: any) => e.node);
    expect(msgs.map((m: any) => `${m.role}/${m.origin}:${m.parts.map((p: any) => p.__typename).join(',')}`)).toEqual(['USER/SYNTHETIC:TextPart', 'ASSISTANT/MODEL:ReasoningPart,ToolPart', 'ASSISTANT/MODEL:TextPart']);
    expect(msgs[0].parts[0].text).toContain('child task');
    // The parent's turn, and its spawn and wait calls, are the parent's; the child's shell is admitted against the parent.
    const parent = await session(id);
    expect(parent.executions.edges.map((e: any) => e.node.status)).toEqual(['SUCCEEDED']);
    expect(parent.messages.edges.map((e: any) => e.node).flatMap((m: any) => m.parts).filter((p: any) => p.__typename === 'ToolPart').map((p: any) => p.tool))
      .toEqual(['multi_agent_v1__spawn_agent', 'multi_agent_v1__wait_agent']);
    expect((await gw.sql`SELECT route FROM admissions WHERE session_id = ${id}`).map((r: any) => r.route)).toContain('codex PreToolUse Bash');
  });

  /** A turn whose shell ran and whose model answer is held, its Codex sent `signal`: the thread's session and its executions. */
  async function signalMidTurn(signal: NodeJS.Signals, file: string) {
    const gate = `held-${signal}`;
    const r = await run(codexScript(`signal me ${signal}`, [{ shell: [`echo first > ${file}`] }, { text: 'never', gate }]));
    const thread = await r.started;
    await model.waitGate(gate);
    process.kill(r.pid, signal);
    const x = await r.done;
    model.release(gate);
    const id = host.gatewaySessionOf(thread)!;
    const ex = (await session(id)).executions.edges.map((e: any) => e.node);
    // What the rollout holds of the turn is kept: its shell's end, its changes.
    expect(ex[0].jobs.edges.map((e: any) => e.node), JSON.stringify(x)).toMatchObject([{ kind: 'SHELL', status: 'COMPLETED', exitCode: 0 }]);
    expect(ex[0].changeset.files.map((f: any) => f.path)).toContain(file);
    return { thread, id, ex, x };
  }

  it('a turn the user interrupts (SIGINT while the model answers) is INTERRUPTED(USER), with what the rollout holds of it', async () => {
    const { ex } = await signalMidTurn('SIGINT', 'interrupted.txt');
    expect(ex).toMatchObject([{ status: 'INTERRUPTED', interruptReason: 'USER' }]);
  });

  it('a turn whose Codex crashes (SIGKILL from outside while the model answers) is INTERRUPTED(SHUTDOWN), not the user\'s; the thread goes on with the next resume', async () => {
    const { thread, id, ex, x } = await signalMidTurn('SIGKILL', 'crashed.txt');
    expect(x.signal).toBe('SIGKILL');
    expect(ex).toMatchObject([{ status: 'INTERRUPTED', interruptReason: 'SHUTDOWN' }]);
    const again = await runToEnd(codexScript('after the crash', [{ text: 'back' }]), { resume: thread });
    expect(again.code, again.err).toBe(0);
    const after = (await session(id)).executions.edges.map((e: any) => e.node).sort((a: any, b: any) => a.sequence - b.sequence);
    expect(after.map((e: any) => e.status)).toEqual(['INTERRUPTED', 'SUCCEEDED']);
  });

  it('the interactive TUI through `gateway codex` (in a terminal): each prompt an execution; idle between turns, the seal ends it (SessionSealed) and nothing is admitted after', async () => {
    const term = `codex-tui-${process.pid}`;
    const tmux = (...a: string[]) => execFileSync('tmux', a, { encoding: 'utf8' });
    const screen = () => tmux('capture-pane', '-p', '-t', term);
    const envArgs = Object.entries({ HOME: home, CODEX_HOME: codexHome, FAKE_OPENAI_KEY: 'sk-fake-local', CODEX_BIN: bin!, TERM: 'xterm-256color' }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    // `gateway codex --dir <host dir> …` from the sources, as a user types it; the pane stays after it exits.
    const cmd = [process.execPath, '--import', path.join(__dirname, '..', 'node_modules', 'tsx', 'dist', 'loader.mjs'), path.join(__dirname, '..', 'cli', 'main.ts'), 'codex', '--dir', hostDir, '--dangerously-bypass-approvals-and-sandbox']
      .map((a) => `'${a}'`).join(' ');
    tmux('new-session', '-d', '-s', term, '-x', '160', '-y', '45', '-c', tuiRepo, ...envArgs, `${cmd}; echo "LAUNCHER EXITED $?"; sleep 600`);
    try {
      await until('the TUI ready for a prompt', () => /GPT-5\.5 default/.test(screen()), 60_000).catch((e) => { console.log('SCREEN', screen()); throw e; });
      const type = (text: string) => { tmux('send-keys', '-t', term, '-l', text); tmux('send-keys', '-t', term, 'Enter'); };
      const sessionID = async () => (await gw.sql`SELECT id FROM sessions WHERE directory = ${tuiRepo}`)[0]?.id as string | undefined;
      const settled = async (n: number) => {
        const id = await sessionID();
        return !!id && (await gw.sql`SELECT 1 FROM executions WHERE session_id = ${id} AND status <> 'RUNNING'`).length === n;
      };
      type(`SCRIPT:${JSON.stringify([{ shell: ['echo tui > tui.txt'] }, { text: 'TUI-ONE' }])}`);
      await until('the first turn settled', () => settled(1), 60_000).catch((e) => { console.log('SCREEN', screen()); throw e; });
      type(`SCRIPT:${JSON.stringify([{ text: 'TUI-TWO' }])}`);
      await until('the second turn settled', () => settled(2), 60_000);
      await until('the answer on the screen', () => /TUI-TWO/.test(screen()));
      const id = (await sessionID())!;
      const s = await session(id);
      expect(s.metadata.codex).toMatchObject({ launched: true });
      const ex = s.executions.edges.map((e: any) => e.node).sort((a: any, b: any) => a.sequence - b.sequence);
      expect(ex.map((e: any) => e.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
      expect(ex[0].jobs.edges.map((e: any) => e.node)).toMatchObject([{ kind: 'SHELL', status: 'COMPLETED', exitCode: 0, command: 'echo tui > tui.txt' }]);
      expect(ex[0].changeset.files.map((f: any) => f.path)).toEqual(['tui.txt']);
      // Idle between turns, still running: the seal stops it (its admissions were the launcher's process).
      expect(screen()).not.toContain('LAUNCHER EXITED');
      const sealed = await seal(id);
      expect(sealed.__typename, JSON.stringify(sealed)).toBe('SessionSealed');
      expect(sealed.interruptedExecution).toBeNull();
      await until('the TUI gone', () => /LAUNCHER EXITED/.test(screen()));
      expect((await session(id)).executions.edges.length).toBe(2);
      const asked = model.requests.length;
      const again = await runToEnd(codexScript('after the seal', [{ text: 'never' }]), { resume: (s.metadata.codex as any).threadID });
      expect(again.refused.join('\n')).toMatch(/sealed by the gateway/);
      expect(model.requests.length).toBe(asked);
    } finally {
      try { tmux('kill-session', '-t', term); } catch { /* gone */ }
    }
  });

  it('generation is a hidden `codex exec --ephemeral` with the model asked for (a model the host does not offer is ModelNotFoundError); compaction is Codex\'s own, through its app-server (the next resume sends its summary)', async () => {
    const r1 = await runToEnd(codexScript('remember PINEAPPLE-77', [{ text: 'noted PINEAPPLE-77' }]));
    const id = host.gatewaySessionOf(r1.thread!)!;
    const G = `mutation($i: GenerateInput!) { generate(input: $i) { __typename ... on Generation { text providerID modelID }
      ... on ModelNotFoundError { message } ... on Error { message } } }`;
    const n = model.requests.length;
    const g = await gw.gql(G, { i: { sessionID: id, prompt: 'REPLY:generated text', model: { providerID: 'openai', modelID: 'gpt-5.5' }, timeoutMs: 60_000 } });
    expect(g.data.generate, JSON.stringify(g)).toMatchObject({ __typename: 'Generation', text: 'generated text', providerID: 'openai', modelID: 'gpt-5.5' });
    const sent = model.requests.slice(n);
    expect(sent.map((q) => q.body?.model)).toEqual(['gpt-5.5']);
    expect(JSON.stringify(sent[0].body.input)).toContain('PINEAPPLE-77'); // the gateway's context
    const missing = await gw.gql(G, { i: { sessionID: id, prompt: 'x', model: { providerID: 'openai', modelID: 'gpt-nonexistent-1' } } });
    expect(missing.data.generate.__typename).toBe('ModelNotFoundError');
    expect((await session(id)).executions.edges.length).toBe(1); // the hidden run is not mirrored
    const c = await gw.gql(`mutation($i: CompactSessionInput!) { compactSession(input: $i) { __typename
      ... on SessionCompacted { summary { parts { ... on TextPart { text } } } } ... on Error { message } } }`, { i: { sessionID: id, timeoutMs: 60_000 } });
    expect(c.data.compactSession.__typename, JSON.stringify(c)).toBe('SessionCompacted');
    expect(c.data.compactSession.summary.parts[0].text).toContain('SCRIPTED SUMMARY');
    expect(c.data.compactSession.summary.parts[0].text).toContain('PINEAPPLE-77');
    expect((await session(id)).executions.edges.length).toBe(1); // the compaction run is the host's own, not a turn
    const m = model.requests.length;
    const r2 = await runToEnd(codexScript('after compaction', [{ text: 'ok' }]), { resume: r1.thread! });
    expect(r2.code, r2.err).toBe(0);
    expect(JSON.stringify(model.requests[m].body.input)).toContain('SCRIPTED SUMMARY');
  });

  it('a thread Codex runs without the launcher (the host\'s hooks in its own config): observed, its seal ADMISSION_NOT_EXCLUSIVE', async () => {
    const child = spawn(bin!, ['--dangerously-bypass-hook-trust', ...hookConfigArgs(host.scriptPath, 'open'), 'exec', '--dangerously-bypass-approvals-and-sandbox',
      codexScript('observed', [{ text: 'hi', usage: { input_tokens: 5, output_tokens: 1 } }])], { cwd: repo, env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d) => { err += d; });
    expect(await new Promise((r) => child.once('exit', r))).toBe(0);
    await host.settled();
    const thread = /session id: ([0-9a-f-]{36})/.exec(err)![1];
    const id = await host.waitSession(thread);
    await until('the turn settled', async () => (await gw.sql`SELECT status FROM executions WHERE session_id = ${id}`)[0]?.status === 'SUCCEEDED');
    const s = await session(id);
    expect(s.metadata.codex).toMatchObject({ threadID: thread, launched: false });
    const sealed = await seal(id);
    expect(sealed).toMatchObject({ __typename: 'SealUnsupportedError', reason: 'ADMISSION_NOT_EXCLUSIVE' });
    // The message names the agent and what its user does for a seal that is proven.
    expect(sealed.message).toContain('Codex can start work in it without the gateway');
    expect(sealed.message).toContain('start Codex threads with `gateway codex`');
    expect(sealed.message).not.toContain('OpenCode');
  });

  it('`gateway host codex --trust` trusts the host\'s hooks installed in $CODEX_HOME (Codex skips untrusted ones silently): a plain `codex` is then observed', async () => {
    const home2 = path.join(tmp, 'codex-home-trust');
    fs.mkdirSync(home2);
    fs.copyFileSync(path.join(codexHome, 'config.toml'), path.join(home2, 'config.toml'));
    const printed = cli(['host', 'codex', '--print-hooks', '--dir', hostDir]);
    expect(printed.status, printed.stderr).toBe(0);
    fs.writeFileSync(path.join(home2, 'hooks.json'), printed.stdout);
    const plain = async (w: string) => {
      const child = spawn(bin!, ['exec', '--dangerously-bypass-approvals-and-sandbox', codexScript(w, [{ text: w }])], { cwd: repo, env: { ...env(), CODEX_HOME: home2 }, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr!.on('data', (d) => { err += d; });
      expect(await new Promise((r) => child.once('exit', r)), err).toBe(0);
      await host.settled();
      return /session id: ([0-9a-f-]{36})/.exec(err)![1];
    };
    // Installed, not trusted: Codex ran the thread without them.
    expect(host.gatewaySessionOf(await plain('UNTRUSTED'))).toBeNull();
    const trust = () => cli(['host', 'codex', '--trust', '--dir', hostDir], { CODEX_HOME: home2, CODEX_BIN: bin! });
    const r = trust();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^trusted 8 hook\(s\) of the Codex host/);
    expect(r.stderr).toBe('');
    const thread = await plain('TRUSTED');
    const id = host.gatewaySessionOf(thread)!;
    expect(id).toMatch(/^ses_/);
    expect((await session(id)).metadata.codex).toMatchObject({ threadID: thread, launched: false });
    expect(trust().stdout).toMatch(/^trusted 0 hook\(s\) of the Codex host .*; 8 were trusted already/);
    // No hooks of the host there: says what to do.
    fs.rmSync(path.join(home2, 'hooks.json'));
    const none = trust();
    expect(none.status).toBe(1);
    expect(none.stderr).toContain('gateway host codex --print-hooks');
  });

  it('the --prompt-args example `host codex --help` gives is what codex 0.169.0 accepts after `exec resume` (its --full-auto it refuses)', () => {
    const example = /e\.g\. (.+)$/m.exec(helpOf(commandOf('host codex')))![1];
    const resume = (args: string[]) => spawnSync(bin!, ['exec', 'resume', ...args, '01a24e9d-0c7d-7051-bae6-d03530bd3d36', 'hi'], { cwd: repo, env: env(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    // Split as the host splits it; past the arguments and the configuration, Codex looks for the thread.
    const ok = resume(example.split(/\s+/).filter(Boolean));
    expect(ok.stderr).toContain('no rollout found for thread id 01a24e9d-0c7d-7051-bae6-d03530bd3d36');
    const bad = resume(['--full-auto']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("unexpected argument '--full-auto'");
  });

  it('a host or gateway that is down: a fronted thread is refused (no model request), an observed one runs', async () => {
    const plainRun = async (script: string, mode: 'open' | 'closed', prompt: string, extraEnv: Record<string, string> = {}) => {
      const child = spawn(bin!, ['--dangerously-bypass-hook-trust', ...hookConfigArgs(script, mode), 'exec', '--dangerously-bypass-approvals-and-sandbox', prompt],
        { cwd: repo, env: { ...env(), ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout!.on('data', (d) => { out += d; });
      child.stderr!.on('data', (d) => { err += d; });
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      return { code, out, err };
    };
    // 1. The host itself is down: the hook script finds nobody at host.port.
    const deadDir = path.join(tmp, 'dead-host');
    const script = writeHookScript(deadDir);
    hostSecret(deadDir); // a host ran there once: its secret is left, its port answers no more
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    fs.writeFileSync(path.join(deadDir, 'host.port'), `${(probe.address() as net.AddressInfo).port}\n`);
    await new Promise((r) => probe.close(r));
    let before = model.requests.length;
    const closed = await plainRun(script, 'closed', codexScript('host down, fronted', [{ text: 'must not be asked' }]), { GATEWAY_CODEX_LAUNCH: 'a-token' });
    expect(model.requests.length).toBe(before);
    expect(closed.out.trim()).toBe('');
    // `codex exec` shows the block, not the hook's reason (the launcher prints the host's reasons when it can reach it).
    expect(closed.err).toContain('hook: UserPromptSubmit Blocked');
    const open = await plainRun(script, 'open', codexScript('host down, observed', [{ text: 'answered without the host' }]));
    expect(open.code).toBe(0);
    expect(open.out.trim()).toBe('answered without the host');

    // 2. The host runs but its gateway is down (a loopback relay to the gateway, closed).
    const gwUrl = new URL(gw.url);
    const sockets = new Set<net.Socket>();
    const relay = net.createServer((c) => {
      const u = net.connect(Number(gwUrl.port), gwUrl.hostname);
      sockets.add(c).add(u);
      c.pipe(u).pipe(c);
      const end = () => { c.destroy(); u.destroy(); };
      c.on('error', end).on('close', end);
      u.on('error', end).on('close', end);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const dir2 = path.join(tmp, 'host-gw-down');
    const host2 = new CodexHost({ gatewayUrl: `http://127.0.0.1:${(relay.address() as net.AddressInfo).port}${gwUrl.pathname}`, hostToken: gw.admin, dir: dir2, leaseMs: 10_000,
      log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[codex 2] ${m}`); } });
    await host2.start();
    try {
      const gone = new Promise((r) => relay.close(r));
      for (const so of sockets) so.destroy();
      await gone;
      before = model.requests.length;
      const l = await launchCodex({ dir: dir2, args: ['exec', '--dangerously-bypass-approvals-and-sandbox', codexScript('gateway down, fronted', [{ text: 'must not be asked' }])], cwd: repo, env: env(), stdio: 'pipe', detached: true, bin: bin! });
      l.child.stdout!.resume();
      l.child.stderr!.resume();
      const x = await l.exited;
      expect(model.requests.length).toBe(before);
      expect(x.refused.join('\n')).toMatch(/did not admit|cannot be reached/);
      const observed = await plainRun(host2.scriptPath, 'open', codexScript('gateway down, observed', [{ text: 'answered while the gateway is down' }]));
      expect(observed.code).toBe(0);
      expect(observed.out.trim()).toBe('answered while the gateway is down');
      expect(host2.gw.unreachableSince).not.toBeNull();
    } finally {
      await host2.stop();
    }
  });

  it('a prompt racing a seal is never admitted after the seal committed (many rounds)', async () => {
    const rounds = Number(process.env.CODEX_RACE_ROUNDS ?? 10);
    const results: string[] = [];
    const round = async (i: number) => {
      const marker = path.join(tmp, `race-${i}-${Date.now()}`);
      const r = await run(codexScript(`race ${i}`, [{ shell: [`touch ${marker}`] }, { text: 'done' }]));
      const thread = await r.started;
      const id = await host.waitSession(thread);
      for (let k = 0; k < (i % 5) * 3; k++) await new Promise((res) => setImmediate(res));
      if (i % 3 === 2) await until('the turn admitted', async () => (await gw.sql`SELECT 1 FROM executions WHERE session_id = ${id}`).length > 0);
      const sealed = await seal(id);
      await r.done;
      expect(sealed.__typename, JSON.stringify(sealed)).toBe('SessionSealed');
      const [s] = await gw.sql`SELECT seal_requested_at, sealed_at FROM sessions WHERE id = ${id}`;
      expect(await gw.sql`SELECT id FROM executions WHERE session_id = ${id} AND started_at >= ${s.sealRequestedAt}`).toEqual([]);
      expect(await gw.sql`SELECT id FROM admissions WHERE session_id = ${id} AND admitted_at >= ${s.sealRequestedAt}`).toEqual([]);
      expect(await gw.sql`SELECT id FROM jobs WHERE session_id = ${id} AND started_at >= ${s.sealRequestedAt}`).toEqual([]);
      expect(await gw.sql`SELECT id FROM executions WHERE session_id = ${id} AND status = 'RUNNING'`).toEqual([]);
      if (fs.existsSync(marker)) expect(fs.statSync(marker).mtime.getTime()).toBeLessThanOrEqual(new Date(s.sealedAt).getTime());
      const [{ n }] = await gw.sql`SELECT count(*)::int AS n FROM executions WHERE session_id = ${id}`;
      results.push(n ? (fs.existsSync(marker) ? 'ran' : 'admitted') : 'refused');
    };
    for (let i = 0; i < rounds; i += 2) await Promise.all([round(i), ...(i + 1 < rounds ? [round(i + 1)] : [])]);
    if (process.env.BRIDGE_DEBUG) console.log(results.join(' '));
    expect(results.length).toBe(rounds);
  });
});
