// End to end: the real `claude` binary (npm @anthropic-ai/claude-code-linux-x64 2.1.332), offline
// against a scripted local Messages API server, on a git repository with commits and packs, with the Claude
// Code host (bridge/claude-code/) between it and a real in-process gateway on a real Postgres.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTestGateway, type TestGateway } from './harness.js';
import { ClaudeCodeHost, rewriteFileAtomically } from '../bridge/claude-code/host.js';
import { checkPermissionArgs, findClaudeBinary, launchClaude } from '../bridge/claude-code/launch.js';
import { PROJECT_DIR } from '../db/index.js';
import { hookSettings, writeHookScript } from '../bridge/claude-code/hook.js';
import { hostSecret } from '../bridge/claude-code/local-channel.js';
import { scriptPrompt, startScriptedAnthropic, type ScriptedAnthropic, type ScriptStep } from '../bridge/claude-code/scripted-model.js';
import { parseTranscript, turnOf } from '../bridge/claude-code/transcript.js';
import { turnCosts } from '../bridge/claude-code/cost.js';
import { processesWith } from './support/processes.js';
import { missedTurnsImportedOnce } from './support/missed-turns.js';
import { processFacts } from '../bridge/claude-code/processes.js';
import { FileBridgeStore } from '../bridge/opencode/store.js';
import { until } from './support/until.js';

const bin = findClaudeBinary();

const SESSION_Q = `query($id: ID!) { session(id: $id) { id directory status metadata
  executions(first: 50) { edges { node { id sequence status interruptReason trigger startedAt settledAt
    boundary { __typename ... on BoundaryUnavailable { reason detail } }
    changeset { coverage { __typename ... on CoverageUnavailable { reason } ... on CoverageOmitted { omissions { path reason } } }
      files { path status additions deletions } }
    jobs(first: 10) { edges { node { kind status background command exitCode title } } } } } }
  messages(first: 100) { edges { node { id role origin execution { id }
    parts { __typename ... on TextPart { text } ... on ReasoningPart { text } ... on ToolPart { tool status input output } } } } } } }`;
const SEAL_M = `mutation($i: SealSessionInput!) { sealSession(input: $i) { __typename
  ... on SessionSealed { sealedAt interruptedExecution { id status interruptReason } cancelledJobs { id status background } }
  ... on SealUnsupportedError { reason execution { id status } }
  ... on SealTimeoutError { pendingExecution { id } } ... on Error { message } } }`;

function gitRepo(dir: string) {
  const g = (...a: string[]) => execFileSync('git', a, { cwd: dir, stdio: 'pipe' });
  fs.mkdirSync(dir, { recursive: true });
  g('init', '-q', '-b', 'main');
  for (let i = 0; i < 3; i++) {
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`.repeat(20));
    g('add', '.');
    g('-c', 'user.email=t@e', '-c', 'user.name=t', 'commit', '-qm', `c${i}`);
  }
  fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules/\n');
  g('gc', '-q');
}

it('finds the claude binary installed from npm (@anthropic-ai/claude-code-linux-x64)', () => { expect(bin).toBeTruthy(); });

describe('the transcript reader', () => {
  it('skips what it does not know and never throws', () => {
    const text = [
      '{"type":"user","promptId":"p1","uuid":"u1","message":{"role":"user","content":"hello"}}',
      'not json at all',
      '[1,2]',
      '{"type":"something-new","x":1}',
      '{"type":"assistant","message":{"id":"m1","model":"claude-x","role":"assistant","content":[{"type":"thinking","thinking":"hm"}],"usage":{"input_tokens":3,"output_tokens":2}}}',
      '{"type":"assistant","message":{"id":"m1","model":"claude-x","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}},{"type":"mystery"}],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":2}}}',
      '{"type":"user","promptId":"p1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a.txt","is_error":false}]}}',
      '{"type":"assistant","isSidechain":true,"message":{"id":"side","content":[{"type":"text","text":"subagent"}]}}',
      '{"type":"assistant","message":{"id":"m2","model":"claude-x","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":4,"output_tokens":1,"cache_read_input_tokens":9}}}',
      '{"type":"user","promptId":"p2","message":{"role":"user","content":"next"}}',
      '{"type":"assistant","message":{"id":"m3","content":"torn',
    ].join('\n');
    const { lines, skipped } = parseTranscript(text);
    expect(skipped).toBe(3);
    const t = turnOf(lines, 'p1');
    expect(t.prompt).toBe('hello');
    expect(t.steps.map((s) => s.messageID)).toEqual(['m1', 'm2']);
    expect(t.steps[0].parts).toEqual([{ type: 'REASONING', text: 'hm' },
      { type: 'TOOL', tool: 'Bash', input: { command: 'ls' }, output: 'a.txt', status: 'completed', externalID: 't1' }]);
    // In the one meaning: Anthropic's input_tokens (3 + 4) with the cache reads (9).
    expect(t.usage).toEqual({ inputTokens: 16, outputTokens: 3, cacheReadTokens: 9, cacheWriteTokens: 0, cacheWrite5mTokens: null, cacheWrite1hTokens: null });
    expect(t).toMatchObject({ model: 'claude-x', finishReason: 'end_turn', lastText: 'done' });
    expect(turnOf(lines, 'p2').steps).toEqual([]);
    expect(turnOf(lines, 'nope').prompt).toBeNull();
    expect(() => parseTranscript('\u0000{{{\n\n')).not.toThrow();
    // A pasted image: a FILE part only where Claude Code wrote the path it saved it to.
    const pasted = parseTranscript([
      '{"type":"user","promptId":"p9","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"AA=="}}]}}',
      '{"type":"user","promptId":"p9","isMeta":true,"message":{"role":"user","content":[{"type":"text","text":"[Image: source: /tmp/x/images/1.png]"}]}}',
      '{"type":"assistant","message":{"id":"m9","content":[{"type":"text","text":"seen"}],"stop_reason":"end_turn"}}',
    ].join('\n')).lines;
    expect(turnOf(pasted, 'p9').files).toEqual([{ path: '/tmp/x/images/1.png', mime: 'image/png' }]);
  });

  it('gives each turn the cost Claude Code computed for its process (cost-state lines), shared by tokens when several turns used a model', () => {
    const prompt = (id: string) => ({ type: 'user', promptId: id, uuid: `u-${id}`, message: { role: 'user', content: id } });
    const answer = (id: string, input: number, output: number, model = 'claude-x') =>
      ({ type: 'assistant', message: { id, model, content: [{ type: 'text', text: id }], stop_reason: 'end_turn', usage: { input_tokens: input, output_tokens: output } } });
    const state = (models: Record<string, [number, number, number]>) => ({ type: 'cost-state', totalCostUSD: 0, modelUsage: Object.fromEntries(Object.entries(models)
      .map(([m, [costUSD, inputTokens, outputTokens]]) => [m, { costUSD, inputTokens, outputTokens, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }])) });
    const lines = parseTranscript([
      prompt('p1'), answer('m1', 100, 10), prompt('p2'), answer('m2', 300, 30),
      // One process ran p1 and p2 (and a side request of another model, in no turn): $0.40 of claude-x, weighed 150 to 450.
      state({ 'claude-x': [0.4, 400, 40], 'claude-haiku': [0.001, 50, 5] }),
      prompt('p3'), answer('m3', 50, 5),
      state({ 'claude-x': [0.45, 450, 45], 'claude-haiku': [0.001, 50, 5] }), // resumed: running totals, p3 alone
      prompt('p4'), answer('m4', 10, 1), // its process has not ended: no cost yet
    ].map((l) => JSON.stringify(l)).join('\n')).lines;
    const costs = turnCosts(lines);
    expect([...costs.keys()]).toEqual(['p1', 'p2', 'p3']);
    expect([costs.get('p1'), costs.get('p2'), costs.get('p3')].map((c) => Math.round(c! * 1e9) / 1e9)).toEqual([0.1, 0.3, 0.05]);
  });
});

describe('rewriting a transcript', () => {
  it('replaces the file atomically, keeps every line and what was appended between rewrites, leaves no temporary file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-rewrite-'));
    const file = path.join(dir, 't.jsonl');
    fs.writeFileSync(file, [
      '{"type":"user","promptId":"p1","uuid":"u1","message":{"role":"user","content":"keep this prompt"}}',
      '{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"the key is sk-SECRET-abcdefgh"}]}}',
      '{"type":"api-request-blob","message":{"role":"assistant","content":[{"type":"text","text":"the key is sk-SECRET-abcdefgh"}]}}',
    ].join('\n') + '\n');
    for (let i = 1; i <= 50; i++) {
      fs.appendFileSync(file, `{"type":"x","i":${i}}\n`);
      expect(rewriteFileAtomically(file, [{ kind: 'correct', key: { step: 'm1' }, partIndex: 0, text: `the key is [redacted ${i}]` }])).toBe(1);
    }
    const text = fs.readFileSync(file, 'utf8');
    const { lines, skipped } = parseTranscript(text);
    expect(skipped).toBe(0);
    expect(lines.filter((l) => l.type === 'x').map((l) => l.i)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(text).not.toContain('sk-SECRET');
    expect(lines[1]).toMatchObject({ uuid: 'a1', parentUuid: 'u1', message: { content: [{ type: 'text', text: 'the key is [redacted 50]' }] } });
    expect(lines[0].message!.content).toBe('keep this prompt');
    expect(fs.readdirSync(dir)).toEqual(['t.jsonl']);
    expect(rewriteFileAtomically(file, [{ kind: 'retract', key: { step: 'nope' }, placeholder: 'x' }])).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe.skipIf(!bin)('Claude Code host (real claude binary)', { timeout: 300_000 }, () => {
  let gw: TestGateway;
  let model: ScriptedAnthropic;
  let host: ClaudeCodeHost;
  let tmp: string;
  let repo: string;
  let home: string;
  let hostDir: string;

  const env = () => ({
    ...process.env, HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'sk-ant-test', DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', CLAUDE_BIN: '',
  });
  const permissions = { permissions: { allow: ['Bash', 'Write', 'Edit', 'Read'] } };
  const newHost = () => new ClaudeCodeHost({ gatewayUrl: gw.url, hostToken: gw.admin, dir: hostDir, leaseMs: 10_000, claudeEnv: env(), claudeBin: bin!,
    log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[claude-code] ${m}`); } });

  /** One `claude -p` run through the launcher; answers its result JSON (session_id…) and exit. */
  async function run(prompt: string, opts: { resume?: string; sessionId?: string; onStart?: (pid: number) => void; env?: Record<string, string> } = {}) {
    const args = ['-p', prompt, '--output-format', 'json'];
    if (opts.resume) args.push('--resume', opts.resume);
    if (opts.sessionId) args.push('--session-id', opts.sessionId);
    const l = await launchClaude({ dir: hostDir, args, cwd: repo, env: { ...env(), ...opts.env }, settings: permissions, stdio: 'pipe', detached: true, bin: bin! });
    let out = '';
    let err = '';
    l.child.stdout!.on('data', (d) => { out += d; });
    l.child.stderr!.on('data', (d) => { err += d; });
    opts.onStart?.(l.child.pid!);
    const x = await l.exited;
    await host.settled();
    let result: any = null;
    try { result = JSON.parse(out.trim().split('\n').at(-1) ?? ''); } catch { /* killed, or no JSON */ }
    return { result, code: x.code, signal: x.signal, out, err };
  }

  const session = async (id: string) => (await gw.gql(SESSION_Q, { id })).data!.session;
  const seal = async (id: string, timeoutMs = 60_000) => (await gw.gql(SEAL_M, { i: { sessionID: id, timeoutMs } })).data!.sealSession;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cc-host-'));
    repo = path.join(tmp, 'repo');
    home = path.join(tmp, 'home');
    hostDir = path.join(tmp, 'host');
    fs.mkdirSync(home);
    gitRepo(repo);
    gw = await startTestGateway();
    model = await startScriptedAnthropic();
    host = newHost();
    await host.start();
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    await gw?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('mirrors turns as executions: messages with thinking and tools, usage, model, a changeset with shell-made changes; a host restart mirrors nothing twice', async () => {
    const steps: ScriptStep[] = [
      { thinking: 'the file must be written by a shell', text: 'Writing it.', tools: [{ name: 'Bash', input: { command: 'printf "made by a shell\\n" > shell.txt && echo wrote', description: 'write shell.txt' } }],
        usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 7, cache_creation_input_tokens: 3 } },
      { tools: [{ name: 'Bash', input: { command: 'printf "more\\n" >> f0.txt', description: 'append' } }, { name: 'Bash', input: { command: 'echo no; exit 3', description: 'fails' } }],
        usage: { input_tokens: 110, output_tokens: 5 } },
      { text: 'All done.', usage: { input_tokens: 120, output_tokens: 4 } },
    ];
    const r1 = await run(scriptPrompt('write shell.txt', steps));
    expect(r1.code, r1.err).toBe(0);
    const cc = r1.result.session_id as string;
    const id = host.gatewaySessionOf(cc)!;
    expect(id).toMatch(/^ses_/);
    const r2 = await run(scriptPrompt('second turn', [{ tools: [{ name: 'Write', input: { file_path: path.join(repo, 'w.txt'), content: 'written\n' } }] }, { text: 'ok' }]), { resume: cc });
    expect(r2.code, r2.err).toBe(0);

    const s = await session(id);
    expect(s.metadata.claudeCode).toMatchObject({ sessionID: cc, launched: true });
    expect(s.directory).toBe(repo);
    const ex = s.executions.edges.map((e: any) => e.node).sort((a: any, b: any) => a.sequence - b.sequence);
    expect(ex.map((e: any) => [e.sequence, e.status, e.trigger])).toEqual([[1, 'SUCCEEDED', 'PROMPT'], [2, 'SUCCEEDED', 'PROMPT']]);
    expect(ex[0].boundary.__typename).toBe('SnapshotBoundary');
    expect(ex[0].changeset.coverage.__typename).toBe('CoverageComplete');
    expect(ex[0].changeset.files.map((f: any) => [f.path, f.status]).sort()).toEqual([['f0.txt', 'MODIFIED'], ['shell.txt', 'ADDED']]);
    expect(ex[1].changeset.files.map((f: any) => [f.path, f.status])).toEqual([['w.txt', 'ADDED']]);
    // Model and usage of the turn (summed over its steps), as the transcript has them.
    const [row] = await gw.sql`SELECT * FROM executions WHERE id = ${ex[0].id}`;
    const text = fs.readFileSync(path.join(home, '.claude', 'projects', repo.replace(/[^A-Za-z0-9]/g, '-'), `${cc}.jsonl`), 'utf8');
    const modelID = parseTranscript(text).lines.find((l) => l.type === 'assistant')!.message!.model;
    expect(row).toMatchObject({ providerId: 'anthropic', modelId: modelID, externalId: expect.any(String), finishReason: 'end_turn' });
    // Summed over the turn's three steps: input 100+110+120, output 20+5+4, cache read 7, cache write 3.
    // Input tokens in the one meaning: Anthropic's 330 with the 7 cache reads and 3 cache writes.
    expect([row.inputTokens, row.outputTokens, row.cacheReadTokens, row.cacheWriteTokens].map(Number)).toEqual([340, 29, 7, 3]);
    // The cost Claude Code computed (its cost-state at each process's exit; the -p result's running total): each
    // process ran one turn, so each execution carries exactly its process's share.
    expect(r1.result.total_cost_usd).toBeGreaterThan(0);
    const costs = async () => (await gw.sql`SELECT cost FROM executions WHERE id IN ${gw.sql([ex[0].id, ex[1].id])} ORDER BY sequence`).map((c) => c.cost);
    await expect.poll(costs).toEqual([expect.closeTo(r1.result.total_cost_usd, 12), expect.closeTo(r2.result.total_cost_usd - r1.result.total_cost_usd, 12)]);
    // Each model response a call of its own: its usage, stop reason, and its times as the transcript has them
    // (the api-request line Claude Code wrote when it sent the request, the response's last line).
    const calls = (await gw.gql(`query($id: ID!) { execution(id: $id) { modelCalls { index externalID model { providerID modelID } startedAt endedAt timesFrom finishReason usage { inputTokens outputTokens reasoningTokens cacheReadTokens cacheWriteTokens cost } } } }`, { id: ex[0].id })).data!.execution.modelCalls;
    expect(calls.map((c: any) => [c.index, c.model, c.timesFrom, c.finishReason, c.usage.inputTokens, c.usage.outputTokens, c.usage.cacheReadTokens])).toEqual([
      [0, { providerID: 'anthropic', modelID }, 'AGENT', 'tool_use', 110, 20, 7], [1, { providerID: 'anthropic', modelID }, 'AGENT', 'tool_use', 110, 5, 0],
      [2, { providerID: 'anthropic', modelID }, 'AGENT', 'end_turn', 120, 4, 0]]);
    const tl = parseTranscript(text).lines;
    const sent = new Map(tl.filter((l) => l.type === 'api-request').map((l) => [l.id, l.timestamp]));
    for (const c of calls) {
      const own = tl.filter((l) => l.type === 'assistant' && l.message?.id === c.externalID);
      expect(c.startedAt).toBe(new Date(sent.get(own[0].requestRef as string) as string).toISOString());
      expect(c.endedAt).toBe(new Date(own.at(-1)!.timestamp!).toISOString());
      expect(c.startedAt <= c.endedAt).toBe(true);
    }

    const msgs = s.messages.edges.map((e: any) => e.node);
    const first = msgs.filter((m: any) => m.execution?.id === ex[0].id);
    expect(first[0]).toMatchObject({ role: 'USER', origin: 'PROMPT' });
    expect(first[0].parts[0].text).toContain('write shell.txt');
    // Each tool call with its own times, as the transcript has them (its call's line, its result's).
    const tq = await gw.gql(`query($id: ID!) { execution(id: $id) { messages(first: 50) { edges { node { parts { __typename ... on ToolPart { tool startedAt endedAt } } } } } } }`, { id: ex[0].id });
    const toolTimes = tq.data!.execution.messages.edges.flatMap((e: any) => e.node.parts).filter((p: any) => p.__typename === 'ToolPart');
    expect(toolTimes.length).toBe(3);
    for (const p of toolTimes) expect(!!p.startedAt && !!p.endedAt && p.startedAt <= p.endedAt, JSON.stringify(p)).toBe(true);
    // Bash calls are SHELL jobs of their turn, with their ends (PostToolUse, else the transcript's result).
    expect(ex[0].jobs.edges.map((e: any) => e.node).map((j: any) => [j.kind, j.status, j.exitCode, j.background, j.title]).sort())
      .toEqual([['SHELL', 'COMPLETED', 0, false, 'append'], ['SHELL', 'COMPLETED', 0, false, 'write shell.txt'], ['SHELL', 'ERROR', 3, false, 'fails']]);
    const kinds = first.slice(1).map((m: any) => m.parts.map((p: any) => p.__typename).join(','));
    expect(kinds).toEqual(['ReasoningPart,TextPart,ToolPart', 'ToolPart,ToolPart', 'TextPart']);
    const tool = first[1].parts[2];
    expect(tool).toMatchObject({ tool: 'Bash', status: 'completed', output: 'wrote' });
    expect(tool.input.command).toContain('shell.txt');
    expect(first[1].parts[0].text).toBe('the file must be written by a shell');

    // A host restart: everything stored is mirrored once (idempotency keys and the state file).
    const before = JSON.stringify(await session(id));
    await host.stop();
    // The launches of the two runs are not kept once their Claude Code exited.
    const stored = new FileBridgeStore(path.join(hostDir, 'state.jsonl'));
    expect((await stored.sessions()).filter((r) => r.ocSessionID.startsWith('launch:'))).toEqual([]);
    expect((await stored.sessions()).map((r) => r.ocSessionID)).toContain(cc);
    await stored.close();
    host = newHost();
    await host.start();
    await host.settled();
    expect(JSON.stringify(await session(id))).toBe(before);
    const r3 = await run(scriptPrompt('third', [{ text: 'three' }]), { resume: cc });
    expect(r3.code, r3.err).toBe(0);
    const after = await session(id);
    expect(after.executions.edges.length).toBe(3);
    expect(after.messages.edges.length).toBe(msgs.length + 2);
  });

  it('seals a launched session: the running turn is stopped (its foreground and background shells killed), SessionSealed, later prompts refused', async () => {
    const marker = path.join(tmp, `seal-${randomUUID()}`);
    const bgMarker = `${marker}-bg`;
    const steps: ScriptStep[] = [
      { tools: [{ name: 'Bash', input: { command: `timeout 61 tail -f /dev/null; touch ${bgMarker}`, description: 'background', run_in_background: true } }] },
      { tools: [{ name: 'Bash', input: { command: `timeout 60 tail -f /dev/null; touch ${marker}`, description: 'slow' } }] },
      { text: 'never', gate: 'never' },
    ];
    const sessionId = randomUUID();
    let pid = 0;
    const running = run(scriptPrompt('slow shell', steps), { sessionId, onStart: (p) => { pid = p; } });
    const id = await host.waitSession(sessionId);
    // The turn is admitted and its shell runs (the tool call was admitted through admitWork).
    await until('both shells started as jobs', async () => (await gw.sql`SELECT 1 FROM jobs WHERE session_id = ${id}`).length === 2);
    await until('both shells running', async () => processesWith('timeout 60 tail').length > 0 && processesWith('timeout 61 tail').length > 0);
    const sealed = await seal(id);
    expect(sealed.__typename).toBe('SessionSealed');
    expect(sealed.interruptedExecution).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'SEAL' });
    const r = await running;
    expect(r.signal ?? r.code).toBeTruthy();
    expect(() => process.kill(-pid, 0)).toThrow(); // the whole process group is gone: the shell too
    expect(fs.existsSync(marker)).toBe(false);
    expect(processesWith('timeout 60 tail')).toEqual([]);
    expect(processesWith('timeout 61 tail')).toEqual([]);
    expect(sealed.cancelledJobs.map((j: any) => j.status).sort()).toEqual(['CANCELLED', 'CANCELLED']);
    const jobs = (await gw.sql`SELECT background, status FROM jobs WHERE session_id = ${id} ORDER BY background`).map((j: any) => [j.background, j.status]);
    expect(jobs).toEqual([[false, 'CANCELLED'], [true, 'CANCELLED']]);
    // A later prompt in the session is refused by the hook: no execution, no model request.
    const requests = model.agentRequests().length;
    const again = await run(scriptPrompt('after the seal', [{ tools: [{ name: 'Bash', input: { command: `touch ${marker}`, description: 'x' } }] }]), { resume: sessionId });
    expect(again.out + again.err).toBeTruthy();
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.existsSync(bgMarker)).toBe(false);
    expect(model.agentRequests().length).toBe(requests);
    const s = await session(id);
    expect(s.status).toBe('SEALED');
    expect(s.executions.edges.length).toBe(1);
  });

  /**
   * Claude Code kept open between turns (`--input-format stream-json`: each line written to its standard input is
   * a prompt), as an interactive user keeps it. `turn(text)` sends a prompt and resolves with its result line.
   */
  async function openSession(opts: { resume?: string; sessionId?: string } = {}) {
    const args = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose'];
    if (opts.resume) args.push('--resume', opts.resume);
    if (opts.sessionId) args.push('--session-id', opts.sessionId);
    const l = await launchClaude({ dir: hostDir, args, cwd: repo, env: env(), settings: permissions, stdio: 'pipe-input', detached: true, bin: bin! });
    const results: any[] = [];
    let waiting: (() => void) | null = null;
    let buf = '';
    l.child.stdout!.on('data', (d) => {
      buf += d;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try { const m = JSON.parse(line); if (m.type === 'result') { results.push(m); waiting?.(); } } catch { /* not JSON */ }
      }
    });
    l.child.stderr!.resume();
    return {
      pid: l.child.pid!,
      /** Its launch token (what its hooks carry). */
      token: l.token,
      exited: l.exited,
      async turn(text: string) {
        const n = results.length;
        const done = new Promise<void>((r) => { waiting = r; });
        l.child.stdin!.write(JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } }) + '\n');
        while (results.length === n) await done;
        await host.settled();
        return results[n];
      },
      /** Closes its input: Claude Code exits once the running turn (if any) is done. */
      async end() { l.child.stdin!.end(); const x = await l.exited; await host.settled(); return x; },
    };
  }

  it('a seal after the turn ended stops the background shell it left (one that ignores SIGTERM) and Claude Code; a seal that timed out is completed by the next', async () => {
    const marker = 'timeout 64 tail -f /dev/null';
    const bgMarker = path.join(tmp, `bg-${randomUUID()}`);
    const steps: ScriptStep[] = [
      { tools: [{ name: 'Bash', input: { command: `trap '' TERM HUP INT; ${marker}; touch ${bgMarker}`, description: 'stubborn', run_in_background: true } }] },
      { text: 'started it' },
    ];
    const sessionId = randomUUID();
    let pid = 0;
    const running = run(scriptPrompt('background, then the turn ends', steps), { sessionId, onStart: (p) => { pid = p; } });
    const id = await host.waitSession(sessionId);
    // The turn ended while its background shell runs: Claude Code waits for it.
    await until('the turn settled', async () => (await gw.sql`SELECT status FROM executions WHERE session_id = ${id}`)[0]?.status === 'SUCCEEDED');
    await until('the background shell running', async () => processesWith(marker).length > 0);
    expect((await gw.sql`SELECT status, background FROM jobs WHERE session_id = ${id}`).map((j: any) => [j.status, j.background])).toEqual([['RUNNING', true]]);
    // A seal given no time: it asks for the cancel and answers at once.
    const first = await seal(id, 0);
    expect(first.__typename).toBe('SealTimeoutError');
    // The next seal finds what the first began and completes it.
    const sealed = await seal(id);
    expect(sealed.__typename, JSON.stringify(sealed)).toBe('SessionSealed');
    expect(sealed.cancelledJobs).toMatchObject([{ status: 'CANCELLED', background: true }]);
    expect(processesWith(marker)).toEqual([]);
    const r = await running;
    expect(r.signal ?? r.code).toBeTruthy();
    expect(() => process.kill(pid, 0)).toThrow();
    expect(fs.existsSync(bgMarker)).toBe(false);
    expect((await gw.sql`SELECT status FROM jobs WHERE session_id = ${id}`).map((j: any) => j.status)).toEqual(['CANCELLED']);
    expect((await gw.sql`SELECT status FROM executions WHERE session_id = ${id}`).map((e: any) => e.status)).toEqual(['SUCCEEDED']);
  });

  it('a seal stops a Claude Code left open between turns, and answers once it is gone', async () => {
    const sessionId = randomUUID();
    const cc = await openSession({ sessionId });
    const r = await cc.turn(scriptPrompt('one turn', [{ text: 'answered' }]));
    expect(r.result).toContain('answered');
    const id = host.gatewaySessionOf(sessionId)!;
    expect((await gw.sql`SELECT status FROM executions WHERE session_id = ${id}`).map((e: any) => e.status)).toEqual(['SUCCEEDED']);
    expect(() => process.kill(cc.pid, 0)).not.toThrow(); // idle, waiting for its next prompt
    const sealed = await seal(id);
    expect(sealed.__typename, JSON.stringify(sealed)).toBe('SessionSealed');
    // Gone when the seal answered: the host acknowledged the seal's CLOSE_ADMISSIONS only after that.
    expect(processFacts(cc.pid)).toBeNull();
    const x = await cc.exited;
    expect(x.signal).toBe('SIGKILL');
    expect((await gw.sql`SELECT count(*)::int AS n FROM executions WHERE session_id = ${id}`)[0].n).toBe(1);
  });

  it('a correction is written while another session runs a turn; one made while the session\'s own Claude Code runs is written at its exit', async () => {
    const secret = 'sk-OTHER-SESSION-5551234';
    const r1 = await run(scriptPrompt('say it', [{ text: `the token is ${secret}` }]));
    expect(r1.code, r1.err).toBe(0);
    const f = r1.result.session_id as string;
    const id = host.gatewaySessionOf(f)!;
    const file = path.join(home, '.claude', 'projects', repo.replace(/[^A-Za-z0-9]/g, '-'), `${f}.jsonl`);
    // Another session of the same host runs a turn, held at the model.
    const g = randomUUID();
    const other = run(scriptPrompt('hold', [{ text: 'held', gate: 'other-session' }]), { sessionId: g });
    await model.waitGate('other-session');
    const partQ = `query($id: ID!) { session(id: $id) { messages(first: 10) { edges { node { id role parts { id ... on TextPart { text } } } } } } }`;
    const correct = async (needle: string, text: string) => {
      const msgs = (await gw.gql(partQ, { id })).data.session.messages.edges.map((e: any) => e.node);
      const m = msgs.find((x: any) => x.role === 'ASSISTANT' && x.parts.some((p: any) => p.text?.includes(needle)));
      const part = m.parts.find((p: any) => p.text?.includes(needle));
      const c = await gw.gql(`mutation($i: CorrectMessagePartInput!) { correctMessagePart(input: $i) { __typename } }`, { i: { messageID: m.id, partID: part.id, text } });
      expect(c.data.correctMessagePart.__typename).toBe('MessagePartCorrected');
    };
    await correct(secret, 'the token is [redacted]');
    await until("the correction written into F's transcript", async () => !fs.readFileSync(file, 'utf8').includes(secret), 15_000);
    // F resumed while the other session still runs: the model gets the corrected text.
    let before = model.agentRequests().length;
    const r2 = await run(scriptPrompt('next', [{ text: 'fine' }]), { resume: f });
    expect(r2.code, r2.err).toBe(0);
    let sent = JSON.stringify(model.agentRequests().slice(before).map((q) => q.body.messages));
    expect(sent).toContain('the token is [redacted]');
    expect(sent).not.toContain(secret);
    model.release('other-session');
    expect((await other).code).toBe(0);

    // F's own Claude Code, open between turns: a correction waits for it, and is written when it exits.
    const open = await openSession({ resume: f });
    const later = 'sk-LATER-SECRET-777';
    expect((await open.turn(scriptPrompt('again', [{ text: `now ${later}` }]))).result).toContain(later);
    await correct(later, 'now [gone]');
    await until("the correction pending on F's own process", async () => host.pendingEditsOf(f) === 1);
    expect(fs.readFileSync(file, 'utf8')).toContain(later);
    await open.end();
    await until("the correction written at the process's exit", async () => !fs.readFileSync(file, 'utf8').includes(later), 15_000);
    before = model.agentRequests().length;
    const r3 = await run(scriptPrompt('last', [{ text: 'ok' }]), { resume: f });
    expect(r3.code, r3.err).toBe(0);
    sent = JSON.stringify(model.agentRequests().slice(before).map((q) => q.body.messages));
    expect(sent).toContain('now [gone]');
    expect(sent).not.toContain(later);
  });

  it('a Claude Code that started before a session\'s transcript was rewritten and then switches to it (an interactive /resume) has its prompts refused there; a new --resume is admitted', async () => {
    const secret = 'sk-SWITCH-SECRET-9090';
    const r1 = await run(scriptPrompt('say it', [{ text: `the key is ${secret}` }]));
    expect(r1.code, r1.err).toBe(0);
    const f = r1.result.session_id as string;
    const id = host.gatewaySessionOf(f)!;
    const file = path.join(home, '.claude', 'projects', repo.replace(/[^A-Za-z0-9]/g, '-'), `${f}.jsonl`);
    // Another Claude Code, open on a session of its own, started before the correction.
    const other = await openSession();
    await other.turn(scriptPrompt('its own session', [{ text: 'ok' }]));
    const msgs = (await gw.gql(`query($id: ID!) { session(id: $id) { messages(first: 10) { edges { node { id role parts { id ... on TextPart { text } } } } } } }`, { id }))
      .data.session.messages.edges.map((e: any) => e.node);
    const answer = msgs.find((m: any) => m.role === 'ASSISTANT');
    const part = answer.parts.find((p: any) => p.text?.includes(secret));
    const c = await gw.gql(`mutation($i: CorrectMessagePartInput!) { correctMessagePart(input: $i) { __typename } }`, { i: { messageID: answer.id, partID: part.id, text: 'the key is [redacted]' } });
    expect(c.data.correctMessagePart.__typename).toBe('MessagePartCorrected');
    // Written at once: that process runs another session.
    await until('the correction written', async () => !fs.readFileSync(file, 'utf8').includes(secret), 15_000);
    // It now switches to F, as `/resume` does in an interactive Claude Code: the hook it runs there, from its own process.
    const input = { session_id: f, transcript_path: file, cwd: repo, hook_event_name: 'UserPromptSubmit', prompt: 'go on', prompt_id: randomUUID() };
    const executions = (await gw.sql`SELECT count(*)::int AS n FROM executions WHERE session_id = ${id}`)[0].n;
    const d = await host.hook('UserPromptSubmit', input, other.token, other.pid);
    expect(d).toMatchObject({ exit: 2, reason: expect.stringContaining(`may still hold the old text: exit it and run \`gateway claude-code --resume ${f}\``) });
    expect((await gw.sql`SELECT count(*)::int AS n FROM executions WHERE session_id = ${id}`)[0].n).toBe(executions);
    await other.end();
    // A Claude Code started to resume it after the rewrite reads the corrected transcript: admitted.
    const before = model.agentRequests().length;
    const r2 = await run(scriptPrompt('resumed', [{ text: 'fine' }]), { resume: f });
    expect(r2.code, r2.err).toBe(0);
    const sent = JSON.stringify(model.agentRequests().slice(before).map((q) => q.body.messages));
    expect(sent).toContain('the key is [redacted]');
    expect(sent).not.toContain(secret);
  });

  it('the host answers only requests with its secret, and takes a hook only from a Claude Code process of its user that runs where the hook says', async () => {
    const mode = (f: string) => fs.statSync(f).mode & 0o777;
    expect(mode(hostDir)).toBe(0o700);
    expect(mode(path.join(hostDir, 'host.secret'))).toBe(0o600);
    expect(mode(path.join(hostDir, 'state.jsonl'))).toBe(0o600);
    expect(mode(path.join(hostDir, 'gateway-hook.sh'))).toBe(0o700);
    // Someone else's directory, with a file the forger wants uploaded.
    const victim = path.join(tmp, `victim-${randomUUID()}`);
    fs.mkdirSync(victim);
    fs.writeFileSync(path.join(victim, 'secret.txt'), 'VICTIM-FILE-CONTENT-31337\n');
    const port = fs.readFileSync(path.join(hostDir, 'host.port'), 'utf8').trim();
    const secret = fs.readFileSync(path.join(hostDir, 'host.secret'), 'utf8').trim();
    const post = (route: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`http://127.0.0.1:${port}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const forged = randomUUID();
    const hookBody = (ev: string, o: Record<string, unknown> = {}) => ({ session_id: forged, transcript_path: path.join(victim, `${forged}.jsonl`), cwd: victim,
      hook_event_name: ev, prompt: 'forged', prompt_id: 'p1', last_assistant_message: 'x', ...o });
    const events = ['SessionStart', 'UserPromptSubmit', 'Stop'];
    // One character changed, never to itself (the secret is hex: a fixed '0' equals it one time in sixteen).
    const wrongSecret = `${secret.slice(0, -1)}${secret.endsWith('0') ? '1' : '0'}`;
    const seen = { ...host.stats };

    // 1. Without the secret (or with a wrong one): 401 on every route, nothing read.
    for (const ev of events) {
      expect((await post(`/hook/${ev}`, hookBody(ev), { 'x-ppid': String(process.pid) })).status).toBe(401);
      expect((await post(`/hook/${ev}`, hookBody(ev), { 'x-ppid': String(process.pid), 'x-gateway-host-secret': wrongSecret })).status).toBe(401);
    }
    const launch = await post('/launch', { cwd: victim });
    expect(launch.status).toBe(401);
    expect(await launch.text()).not.toMatch(/token/);
    expect(host.stats.unauthenticated - seen.unauthenticated).toBe(7);

    // 2. With the secret, from a process that is not Claude Code (this test): not taken.
    const withSecret = { 'x-gateway-host-secret': secret };
    for (const ev of events) {
      const r = await post(`/hook/${ev}`, hookBody(ev), { ...withSecret, 'x-ppid': String(process.pid) });
      expect(r.status).toBe(200);
    }
    // 3. With the secret, naming a real Claude Code process of this user (a session open between turns) but
    //    another directory, or a transcript outside Claude Code's own folder, or forging its launch: not taken.
    const open = await openSession();
    await open.turn(scriptPrompt('idle after this', [{ text: 'ok' }]));
    const claudePid = String(open.pid);
    for (const ev of events) {
      expect(await (await post(`/hook/${ev}`, hookBody(ev), { ...withSecret, 'x-ppid': claudePid })).text()).toBe('0\n');
      expect(await (await post(`/hook/${ev}`, hookBody(ev, { cwd: repo }), { ...withSecret, 'x-ppid': claudePid })).text()).toBe('0\n');
    }
    const refused = await (await post('/hook/UserPromptSubmit', hookBody('UserPromptSubmit'), { ...withSecret, 'x-ppid': String(process.pid), 'x-launch': 'f'.repeat(32) })).text();
    expect(refused).toMatch(/^2\n/);
    expect(host.stats.unverified - seen.unverified).toBe(3 + 6);
    await open.end();

    // Nothing of it reached the gateway: no session, no snapshot of the directory, no file content.
    expect(host.gatewaySessionOf(forged)).toBeNull();
    expect(await gw.sql`SELECT id FROM sessions WHERE directory = ${victim} OR metadata::text LIKE ${`%${forged}%`}`).toEqual([]);
    expect(await gw.sql`SELECT hash FROM contents WHERE position(${Buffer.from('VICTIM-FILE-CONTENT')} IN data) > 0`).toEqual([]);
    expect(fs.readFileSync(path.join(hostDir, 'state.jsonl'), 'utf8')).not.toContain(forged);
  });

  it('the launcher, run from the user\'s project, says what is wrong and what to run: no host, a host gone, a refused prompt, bypassing permissions as root', async () => {
    // `gateway claude-code` from the sources (tsx), in the user's repository, as a user runs it.
    const launcher = (args: string[], extraEnv: Record<string, string> = {}) => new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const tsx = pathToFileURL(path.join(PROJECT_DIR, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
      const c = spawn(process.execPath, ['--import', tsx, path.join(PROJECT_DIR, 'cli', 'main.ts'), 'claude-code', ...args],
        { cwd: repo, env: { ...env(), CLAUDE_BIN: bin!, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      c.stdout.on('data', (d) => { out += d; });
      c.stderr.on('data', (d) => { err += d; });
      c.once('exit', (code) => resolve({ code, out, err }));
    });
    // No host ever ran with that directory.
    const none = path.join(tmp, 'no-host');
    let r = await launcher(['--dir', none, '-p', 'hello']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`no Claude Code host runs with directory ${none}: start it with \`gateway host claude-code --dir ${none}\``);
    // A host that stopped: its port file is gone with it; one left behind by a crash names the port that no longer answers.
    const gone = path.join(tmp, 'host-gone');
    const h = new ClaudeCodeHost({ gatewayUrl: gw.url, hostToken: gw.admin, dir: gone, leaseMs: 10_000 });
    await h.start();
    const port = h.port;
    await h.stop();
    expect(fs.existsSync(path.join(gone, 'host.port'))).toBe(false);
    fs.writeFileSync(path.join(gone, 'host.port'), `${port}\n`);
    r = await launcher(['--dir', gone, '-p', 'hello']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`the Claude Code host of ${gone} does not answer at 127.0.0.1:${port}`);
    expect(r.err).toContain(`start it with \`gateway host claude-code --dir ${gone}\``);
    expect(r.err).not.toContain('fetch failed\n');
    // A prompt the host refuses (its session is sealed): Claude Code exits 0, the refusal is on standard error.
    const sessionId = randomUUID();
    expect((await run(scriptPrompt('before the seal', [{ text: 'ok' }]), { sessionId })).code).toBe(0);
    expect((await seal(host.gatewaySessionOf(sessionId)!)).__typename).toBe('SessionSealed');
    const requests = model.agentRequests().length;
    r = await launcher(['--dir', hostDir, '-p', 'after the seal', '--resume', sessionId]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/gateway: the Claude Code host refused the prompt: session ses_\S+ is sealed by the gateway/);
    expect(model.agentRequests().length).toBe(requests);
    // Bypassing permissions as root: said before Claude Code starts, with what to do instead.
    expect(() => checkPermissionArgs(['-p', 'x', '--dangerously-skip-permissions'], 0)).toThrow(/--allowedTools/);
    expect(() => checkPermissionArgs(['--permission-mode', 'bypassPermissions'], 0)).toThrow(/root/);
    expect(() => checkPermissionArgs(['--dangerously-skip-permissions'], 1000)).not.toThrow();
    if (process.getuid?.() === 0) {
      r = await launcher(['--dir', hostDir, '-p', 'x', '--dangerously-skip-permissions']);
      expect(r.code).toBe(1);
      expect(r.err).toContain('--allowedTools "Bash Edit Write Read"');
    }
  });

  it('a background shell that ends is a background SHELL job ended by Claude Code\'s task notification (a SYNTHETIC turn)', async () => {
    const steps: ScriptStep[] = [
      { tools: [{ name: 'Bash', input: { command: 'timeout 1 tail -f /dev/null; exit 5', description: 'bg five', run_in_background: true } }] },
      { text: 'started' },
    ];
    const r = await run(scriptPrompt('background', steps));
    expect(r.code, r.err).toBe(0);
    const id = host.gatewaySessionOf(r.result.session_id)!;
    const s = await session(id);
    const ex = s.executions.edges.map((e: any) => e.node).sort((a: any, b: any) => a.sequence - b.sequence);
    expect(ex.map((e: any) => [e.trigger, e.status])).toEqual([['PROMPT', 'SUCCEEDED'], ['SYNTHETIC', 'SUCCEEDED']]);
    expect(ex[0].jobs.edges.map((e: any) => e.node)).toMatchObject([{ kind: 'SHELL', background: true, status: 'ERROR', exitCode: 5, title: 'bg five' }]);
    const synthetic = s.messages.edges.map((e: any) => e.node).find((m: any) => m.execution?.id === ex[1].id && m.role === 'USER');
    expect(synthetic.origin).toBe('SYNTHETIC');
  });

  it('corrections and retractions reach the transcript atomically: the next --resume sends the corrected context to the model', async () => {
    const secret = 'sk-SECRET-1234567890';
    const promptSecret = 'PROMPT-SECRET-4242';
    const r1 = await run(scriptPrompt(`remember ${promptSecret}`, [{ thinking: 'I will print it', text: `the key is ${secret}` }]));
    expect(r1.code, r1.err).toBe(0);
    const cc = r1.result.session_id as string;
    const id = host.gatewaySessionOf(cc)!;
    const file = path.join(home, '.claude', 'projects', repo.replace(/[^A-Za-z0-9]/g, '-'), `${cc}.jsonl`);
    expect(fs.readFileSync(file, 'utf8')).toContain(secret);
    const msgs = (await session(id)).messages.edges.map((e: any) => e.node);
    const prompt = msgs.find((m: any) => m.role === 'USER');
    const answer = msgs.find((m: any) => m.role === 'ASSISTANT');
    const partQ = `query($id: ID!) { message(id: $id) { parts { id ... on TextPart { text } } } }`;
    const textPart = (await gw.gql(partQ, { id: answer.id })).data.message.parts.find((p: any) => p.text?.includes(secret));
    const c = await gw.gql(`mutation($i: CorrectMessagePartInput!) { correctMessagePart(input: $i) { __typename } }`,
      { i: { messageID: answer.id, partID: textPart.id, text: 'the key is [redacted]' } });
    expect(c.data.correctMessagePart.__typename).toBe('MessagePartCorrected');
    const r = await gw.gql(`mutation($i: RetractMessageInput!) { retractMessage(input: $i) { __typename } }`, { i: { messageID: prompt.id, reason: 'secret' } });
    expect(r.data.retractMessage.__typename).toBe('MessageRetracted');
    // Applied by the host from the session's events (a subscription): the file changes once it has both.
    await until('both edits in the transcript', async () => { const t = fs.readFileSync(file, 'utf8'); return !t.includes(secret) && !t.includes(promptSecret); }, 15_000);
    const text = fs.readFileSync(file, 'utf8');
    expect(parseTranscript(text).skipped).toBe(0);
    expect(text).toContain('the key is [redacted]');
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.includes('.tmp'))).toEqual([]);

    const before = model.agentRequests().length;
    const r2 = await run(scriptPrompt('next', [{ text: 'fine' }]), { resume: cc });
    expect(r2.code, r2.err).toBe(0);
    const sent = model.agentRequests().slice(before);
    expect(sent.length).toBeGreaterThan(0);
    const body = JSON.stringify(sent[0].body.messages);
    expect(body).not.toContain(secret);
    expect(body).not.toContain(promptSecret);
    expect(body).toContain('the key is [redacted]');
  });

  it('imports the turns a transcript holds from before the host saw the session, with honest boundaries, once', async () => {
    const plain = path.join(tmp, 'plain-settings.json');
    fs.writeFileSync(plain, JSON.stringify(permissions));
    const sessionId = randomUUID();
    const steps: ScriptStep[] = [{ thinking: 'before', tools: [{ name: 'Bash', input: { command: 'echo early; exit 2', description: 'early' } }], usage: { input_tokens: 40, output_tokens: 4 } },
      { text: 'earlier answer', usage: { input_tokens: 50, output_tokens: 6 } }];
    const child = spawn(bin!, ['--settings', plain, '-p', scriptPrompt('an earlier turn', steps), '--session-id', sessionId], { cwd: repo, env: env(), stdio: 'ignore' });
    expect(await new Promise((r) => child.once('exit', r))).toBe(0);
    expect(host.gatewaySessionOf(sessionId)).toBeNull(); // no hook ran: the host never saw it
    const r = await run(scriptPrompt('now with the host', [{ text: 'live answer' }]), { resume: sessionId });
    expect(r.code, r.err).toBe(0);
    const id = host.gatewaySessionOf(sessionId)!;
    const s = await session(id);
    const ex = s.executions.edges.map((e: any) => e.node).sort((a: any, b: any) => a.sequence - b.sequence);
    expect(ex.map((e: any) => [e.sequence, e.status, e.boundary.__typename])).toEqual([[1, 'SUCCEEDED', 'BoundaryUnavailable'], [2, 'SUCCEEDED', 'SnapshotBoundary']]);
    expect(ex[0].boundary).toMatchObject({ reason: 'START_NOT_CAPTURED' });
    expect(ex[0].boundary.detail).toContain('imported');
    expect(ex[0].changeset.coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'BOUNDARY_UNAVAILABLE' });
    expect(ex[0].jobs.edges.map((e: any) => e.node)).toMatchObject([{ kind: 'SHELL', status: 'ERROR', exitCode: 2, title: 'early' }]);
    const texts = s.messages.edges.map((e: any) => e.node).map((m: any) => `${m.role}:${m.parts.map((p: any) => p.__typename).join(',')}`);
    expect(texts).toEqual(['USER:TextPart', 'ASSISTANT:ReasoningPart,ToolPart', 'ASSISTANT:TextPart', 'USER:TextPart', 'ASSISTANT:TextPart']);
    const [row] = await gw.sql`SELECT input_tokens, output_tokens FROM executions WHERE id = ${ex[0].id}`;
    expect([Number(row.inputTokens), Number(row.outputTokens)]).toEqual([90, 10]);
  });

  it('a turn Claude Code runs on a mirrored session while the host is down (its hooks failing open), or without its hooks, is imported once, in order, with honest boundaries', async () => {
    const sessionId = randomUUID();
    const bare = path.join(tmp, 'missed-bare-settings.json');
    fs.writeFileSync(bare, JSON.stringify(permissions));
    let started = false;
    await missedTurnsImportedOnce({
      gw,
      async turn(how, file, w, whileRunning) {
        const settings = how === 'hooks' ? host.settingsFile('observed', permissions) : bare;
        const gate = `missed-${w}`;
        const prompt = scriptPrompt(`turn ${w}`, [{ tools: [{ name: 'Bash', input: { command: `echo ${w} > ${file}`, description: 'write' } }] }, { text: w, ...(whileRunning ? { gate } : {}) }]);
        const child = spawn(bin!, ['--settings', settings, '-p', prompt, started ? '--resume' : '--session-id', sessionId], { cwd: repo, env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr!.on('data', (d) => { err += d; });
        const exited = new Promise((r) => child.once('exit', r));
        if (whileRunning) {
          await model.waitGate(gate);
          await whileRunning();
          model.release(gate);
        }
        expect(await exited, err).toBe(0);
        started = true;
        if (!host.stopped) await host.settled();
      },
      sessionID: () => host.gatewaySessionOf(sessionId)!,
      stopHost: () => host.stop(),
      async startHost() { host = newHost(); await host.start(); await host.settled(); },
    });
  });

  it('a session Claude Code runs without the launcher (hooks in its settings): observed, sealed as ADMISSION_NOT_EXCLUSIVE', async () => {
    const settings = host.settingsFile('observed', permissions);
    const sessionId = randomUUID();
    const child = spawn(bin!, ['--settings', settings, '-p', scriptPrompt('observed', [{ text: 'hi', usage: { input_tokens: 5, output_tokens: 1 } }]), '--session-id', sessionId, '--output-format', 'json'],
      { cwd: repo, env: env(), stdio: 'pipe' });
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(0);
    await host.settled();
    const id = host.gatewaySessionOf(sessionId)!;
    const s = await session(id);
    expect(s.metadata.claudeCode).toMatchObject({ sessionID: sessionId, launched: false });
    expect(s.executions.edges.map((e: any) => e.node.status)).toEqual(['SUCCEEDED']);
    const r = await seal(id);
    expect(r).toMatchObject({ __typename: 'SealUnsupportedError', reason: 'ADMISSION_NOT_EXCLUSIVE' });
    expect(r.message).toContain('Claude Code can start work in it without the gateway');
    expect(r.message).toContain('start Claude Code sessions with `gateway claude-code`');
  });

  it('a subagent (the Agent tool) is a child session with its own execution, messages and jobs', async () => {
    const sub = scriptPrompt('sub task', [
      { thinking: 'the subagent thinks', tools: [{ name: 'Bash', input: { command: 'echo in-sub', description: 'sub bash' } }], usage: { input_tokens: 21, output_tokens: 2 } },
      { text: 'sub answer', usage: { input_tokens: 22, output_tokens: 3 } },
    ]);
    const r = await run(scriptPrompt('main', [{ tools: [{ name: 'Agent', input: { description: 'a subagent', prompt: sub, subagent_type: 'general-purpose' } }] }, { text: 'main done' }]));
    expect(r.code, r.err).toBe(0);
    const cc = r.result.session_id as string;
    const id = host.gatewaySessionOf(cc)!;
    const kids = await gw.sql`SELECT id FROM sessions WHERE parent_id = ${id}`;
    expect(kids.length).toBe(1);
    const child = await session(kids[0].id);
    expect(child.metadata.claudeCode).toMatchObject({ sessionID: cc, agentType: 'general-purpose', launched: true });
    expect(child.metadata.claudeCode.agentID).toMatch(/^a/);
    const ex = child.executions.edges.map((e: any) => e.node);
    expect(ex.map((e: any) => [e.status, e.trigger, e.boundary.__typename])).toEqual([['SUCCEEDED', 'SYNTHETIC', 'SnapshotBoundary']]);
    expect(ex[0].jobs.edges.map((e: any) => e.node)).toMatchObject([{ kind: 'SHELL', status: 'COMPLETED', title: 'sub bash', command: 'echo in-sub' }]);
    const msgs = child.messages.edges.map((e: any) => e.node);
    expect(msgs.map((m: any) => `${m.role}/${m.origin}:${m.parts.map((p: any) => p.__typename).join(',')}`))
      .toEqual(['USER/SYNTHETIC:TextPart', 'ASSISTANT/MODEL:ReasoningPart,ToolPart', 'ASSISTANT/MODEL:TextPart']);
    expect(msgs[0].parts[0].text).toContain('sub task');
    expect(msgs[1].parts[1]).toMatchObject({ tool: 'Bash', status: 'completed', output: 'in-sub' });
    expect(msgs[2].parts[0].text).toBe('sub answer');
    const [row] = await gw.sql`SELECT input_tokens, output_tokens FROM executions WHERE id = ${ex[0].id}`;
    expect([Number(row.inputTokens), Number(row.outputTokens)]).toEqual([43, 5]);
    // The parent keeps the Agent call; the subagent's shell is not a job of the parent.
    const parent = await session(id);
    const parts = parent.messages.edges.flatMap((e: any) => e.node.parts);
    expect(parts.find((p: any) => p.tool === 'Agent')).toBeTruthy();
    expect(parent.executions.edges.flatMap((e: any) => e.node.jobs.edges)).toEqual([]);
  });

  it('a turn the Messages API fails is FAILED with its error; a turn the user interrupts is INTERRUPTED', async () => {
    // Claude Code retries an overloaded API (529) and then gives up: StopFailure, and an API error line in the transcript.
    const r = await run(scriptPrompt('fails', [{ tools: [{ name: 'Bash', input: { command: 'echo before', description: 'before' } }] }, { fail: 529 }]),
      { env: { CLAUDE_CODE_MAX_RETRIES: '1' } });
    const cc = r.result.session_id as string;
    const id = host.gatewaySessionOf(cc)!;
    const [row] = await gw.sql`SELECT status, error, error_name, model_id FROM executions WHERE session_id = ${id}`;
    expect(row).toMatchObject({ status: 'FAILED', errorName: 'APIError', modelId: expect.not.stringContaining('synthetic') });
    expect(row.error).toContain('API Error: 529');
    const msgs = (await session(id)).messages.edges.map((e: any) => e.node);
    // The tool step is mirrored; the API error line (Claude Code's, not the model's) is not a message.
    expect(msgs.map((m: any) => m.role)).toEqual(['USER', 'ASSISTANT']);
    expect(JSON.stringify(msgs)).not.toContain('API Error');

    /** The execution of a turn whose Claude Code gets `signal` while the model answers. */
    const signalMidTurn = async (signal: NodeJS.Signals) => {
      let pid = 0;
      const sessionId = randomUUID();
      const gate = `held-${signal}`;
      const running = run(scriptPrompt(`signal me ${signal}`, [{ text: 'never', gate }]), { sessionId, onStart: (p) => { pid = p; } });
      await model.waitGate(gate);
      process.kill(pid, signal);
      await running;
      model.release(gate);
      return (await gw.sql`SELECT status, interrupt_reason FROM executions WHERE session_id = ${host.gatewaySessionOf(sessionId)}`)[0];
    };
    // Interrupted by the user (SIGINT, Ctrl-C).
    expect(await signalMidTurn('SIGINT')).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'USER' });
    // Killed from outside (SIGKILL: a crash or the OOM killer, not the user's interrupt): INTERRUPTED(SHUTDOWN).
    expect(await signalMidTurn('SIGKILL')).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'SHUTDOWN' });
  });

  it('files a prompt attaches (@mentions) are FILE parts with the path and, for an image, the MIME type Claude Code gives', async () => {
    fs.mkdirSync(path.join(repo, 'att'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'att', 'notes.txt'), 'hello notes\n');
    fs.writeFileSync(path.join(repo, 'att', 'pic.png'), Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'));
    const r = await run(scriptPrompt('read @att/notes.txt and @att/pic.png please', [{ text: 'seen' }]));
    expect(r.code, r.err).toBe(0);
    const q = `query($id: ID!) { session(id: $id) { messages(first: 10) { edges { node { role origin parts { __typename ... on TextPart { text } ... on FilePart { path mime } } } } } } }`;
    const msgs = (await gw.gql(q, { id: host.gatewaySessionOf(r.result.session_id) })).data.session.messages.edges.map((e: any) => e.node);
    expect(msgs.map((m: any) => `${m.role}:${m.parts.map((p: any) => p.__typename).join(',')}`)).toEqual(['USER:TextPart', 'USER:FilePart,FilePart', 'ASSISTANT:TextPart']);
    expect(msgs[1].parts).toEqual([
      { __typename: 'FilePart', path: path.join(repo, 'att', 'notes.txt'), mime: null },
      { __typename: 'FilePart', path: path.join(repo, 'att', 'pic.png'), mime: 'image/png' },
    ]);
  });

  it('compaction is Claude Code\'s own /compact on --resume (the next request carries its summary); generation is a hidden claude -p with the model asked for', async () => {
    const r1 = await run(scriptPrompt('remember PINEAPPLE-77', [{ text: 'noted PINEAPPLE-77' }]));
    expect(r1.code, r1.err).toBe(0);
    const cc = r1.result.session_id as string;
    const id = host.gatewaySessionOf(cc)!;
    const c = await gw.gql(`mutation($i: CompactSessionInput!) { compactSession(input: $i) { __typename
      ... on SessionCompacted { summary { parts { ... on TextPart { text } } } } ... on Error { message } } }`, { i: { sessionID: id, timeoutMs: 60_000 } });
    expect(c.data.compactSession.__typename, JSON.stringify(c)).toBe('SessionCompacted');
    expect(c.data.compactSession.summary.parts[0].text).toContain('SCRIPTED SUMMARY');
    expect(c.data.compactSession.summary.parts[0].text).toContain('PINEAPPLE-77');
    // The compaction run is the host's own: no execution, no message of it mirrored as a turn.
    expect((await session(id)).executions.edges.length).toBe(1);
    const before = model.agentRequests().length;
    const r2 = await run(scriptPrompt('after compaction', [{ text: 'ok' }]), { resume: cc });
    expect(r2.code, r2.err).toBe(0);
    const next = JSON.stringify(model.agentRequests()[before].body.messages);
    expect(next).toContain('SCRIPTED SUMMARY');

    const G = `mutation($i: GenerateInput!) { generate(input: $i) { __typename ... on Generation { text providerID modelID }
      ... on ModelNotFoundError { message } ... on Error { message } } }`;
    const n = model.requests.length;
    const g = await gw.gql(G, { i: { sessionID: id, prompt: 'REPLY:generated text', model: { providerID: 'anthropic', modelID: 'claude-sonnet-5-5' }, timeoutMs: 60_000 } });
    expect(g.data.generate, JSON.stringify(g)).toMatchObject({ __typename: 'Generation', text: 'generated text', modelID: 'claude-sonnet-5-5' });
    expect(model.requests.slice(n).map((q) => q.body?.model)).toContain('claude-sonnet-5-5');
    expect(model.requests.slice(n).every((q) => q.body?.model === 'claude-sonnet-5-5' || !(q.body?.tools?.length))).toBe(true);
    const missing = await gw.gql(G, { i: { sessionID: id, prompt: 'x', model: { providerID: 'anthropic', modelID: 'claude-nonexistent-1' } } });
    expect(missing.data.generate.__typename).toBe('ModelNotFoundError');
    expect((await session(id)).executions.edges.length).toBe(2);
  });

  it('a host or gateway that is down: a fronted session is refused (no model request), an observed one runs', async () => {
    const plainRun = async (settings: string, prompt: string, extraEnv: Record<string, string> = {}) => {
      const child = spawn(bin!, ['--settings', settings, '-p', prompt, '--output-format', 'json'], { cwd: repo, env: { ...env(), ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d) => { out += d; });
      child.stderr!.resume();
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      return { code, out };
    };
    // 1. The host itself is down: the hook script finds nobody at host.port.
    const deadDir = path.join(tmp, 'dead-host');
    const script = writeHookScript(deadDir);
    hostSecret(deadDir); // a host ran there once: its secret is left, its port answers no more
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    fs.writeFileSync(path.join(deadDir, 'host.port'), `${(probe.address() as net.AddressInfo).port}\n`);
    await new Promise((r) => probe.close(r));
    const settingsOf = (mode: 'open' | 'closed') => {
      const f = path.join(deadDir, `s-${mode}.json`);
      fs.writeFileSync(f, JSON.stringify(hookSettings(script, mode, permissions)));
      return f;
    };
    let before = model.agentRequests().length;
    const closed = await plainRun(settingsOf('closed'), scriptPrompt('host down, fronted', [{ text: 'must not be asked' }]));
    expect(model.agentRequests().length).toBe(before);
    expect(JSON.parse(closed.out.trim().split('\n').at(-1)!)).toMatchObject({ num_turns: 0, result: expect.stringContaining("the gateway's Claude Code host cannot be reached (connection refused)") });
    const open = await plainRun(settingsOf('open'), scriptPrompt('host down, observed', [{ text: 'answered without the host' }]));
    expect(open.code).toBe(0);
    expect(JSON.parse(open.out.trim().split('\n').at(-1)!).result).toContain('answered without the host');
    expect(model.agentRequests().length).toBe(before + 1);

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
    const host2 = new ClaudeCodeHost({ gatewayUrl: `http://127.0.0.1:${(relay.address() as net.AddressInfo).port}${gwUrl.pathname}`, hostToken: gw.admin, dir: dir2, leaseMs: 10_000,
      log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[claude-code 2] ${m}`); } });
    await host2.start();
    try {
      const closed = new Promise((r) => relay.close(r));
      for (const s of sockets) s.destroy();
      await closed;
      before = model.agentRequests().length;
      const l = await launchClaude({ dir: dir2, args: ['-p', scriptPrompt('gateway down, fronted', [{ text: 'must not be asked' }])], cwd: repo, env: env(), settings: permissions, stdio: 'pipe', detached: true, bin: bin! });
      l.child.stdout!.resume();
      l.child.stderr!.resume();
      await l.exited;
      expect(model.agentRequests().length).toBe(before);
      if (process.env.BRIDGE_DEBUG) console.log('fronted refused');
      const observed = await plainRun(host2.settingsFile('observed', permissions), scriptPrompt('gateway down, observed', [{ text: 'answered while the gateway is down' }]));
      expect(observed.code).toBe(0);
      expect(JSON.parse(observed.out.trim().split('\n').at(-1)!).result).toContain('answered while the gateway is down');
      expect(host2.gw.unreachableSince).not.toBeNull();
    } finally {
      await host2.stop();
    }
  });

  it('a prompt racing a seal is never admitted after the seal committed (many rounds)', async () => {
    const rounds = Number(process.env.CC_RACE_ROUNDS ?? 12);
    const results: string[] = [];
    const round = async (i: number) => {
      const sessionId = randomUUID();
      const marker = path.join(tmp, `race-${i}-${sessionId}`);
      const steps: ScriptStep[] = [{ tools: [{ name: 'Bash', input: { command: `touch ${marker}`, description: 'mark' } }] }, { text: 'done' }];
      const running = run(scriptPrompt(`race ${i}`, steps), { sessionId });
      const id = await host.waitSession(sessionId);
      // Vary the phase: the seal lands from right at SessionStart to well into the turn.
      for (let k = 0; k < (i % 6) * 3; k++) await new Promise((r) => setImmediate(r));
      if (i % 3 === 2) await until('the turn admitted', async () => (await gw.sql`SELECT 1 FROM executions WHERE session_id = ${id}`).length > 0);
      const sealed = await seal(id);
      await running;
      expect(sealed.__typename).toBe('SessionSealed');
      const [s] = await gw.sql`SELECT seal_requested_at, sealed_at FROM sessions WHERE id = ${id}`;
      const late = await gw.sql`SELECT id FROM executions WHERE session_id = ${id} AND started_at >= ${s.sealRequestedAt}`;
      const lateAdmissions = await gw.sql`SELECT id FROM admissions WHERE session_id = ${id} AND admitted_at >= ${s.sealRequestedAt}`;
      expect(late).toEqual([]);
      expect(lateAdmissions).toEqual([]);
      // A Bash call's admission is its startJob (the same lock and seal check).
      expect(await gw.sql`SELECT id FROM jobs WHERE session_id = ${id} AND started_at >= ${s.sealRequestedAt}`).toEqual([]);
      const running2 = await gw.sql`SELECT id FROM executions WHERE session_id = ${id} AND status = 'RUNNING'`;
      expect(running2).toEqual([]);
      if (fs.existsSync(marker)) expect(fs.statSync(marker).mtime.getTime()).toBeLessThanOrEqual(new Date(s.sealedAt).getTime());
      const [{ n }] = await gw.sql`SELECT count(*)::int AS n FROM executions WHERE session_id = ${id}`;
      results.push(n ? (fs.existsSync(marker) ? 'ran' : 'admitted') : 'refused');
    };
    for (let i = 0; i < rounds; i += 2) await Promise.all([round(i), ...(i + 1 < rounds ? [round(i + 1)] : [])]);
    // Both outcomes happen: prompts refused by the seal, and turns admitted before it and stopped.
    if (process.env.BRIDGE_DEBUG) console.log(results.join(' '));
    expect(results.length).toBe(rounds);
  });
});

