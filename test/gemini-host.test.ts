// End to end: the real Gemini CLI (npm @google/gemini-cli 0.61.0, installed by .ci/gemini-install into a cache
// outside the clone and named by GEMINI_BIN), offline against a scripted local Gemini API server, on a git
// repository, with the Gemini host (bridge/gemini/, on the host kit bridge/hooks-host/) between it and a real
// in-process gateway on a real Postgres. Gemini CLI starts slowly: one scenario runs it six times and checks
// everything along the way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestGateway, type TestGateway } from './harness.js';
import { GeminiHost } from '../bridge/gemini/host.js';
import { appendedEdits, loadConversation, turnsOf } from '../bridge/gemini/chat.js';
import { settlementOfCalls } from '../bridge/hooks-host/turn.js';
import { checkGeminiArgs, findGeminiBinary, installHooks, isGemini, launchGemini, sessionArgs, withHooks } from '../bridge/gemini/launch.js';
import { geminiScript, sentText, startScriptedGemini, type GeminiScriptStep, type ScriptedGemini } from '../bridge/gemini/scripted-model.js';
import { missedTurnsImportedOnce } from './support/missed-turns.js';
import { processesWith } from './support/processes.js';
import { ADD_COMMENT, COMMENT_Q, EXECUTION_Q, SEND_COMMENTS } from './support/review-loop.js';
import { until } from './support/until.js';

const bin = process.env.GEMINI_BIN ? findGeminiBinary() : null;
if (!process.env.GEMINI_BIN) console.warn('gemini-host.test.ts: GEMINI_BIN is not set (run .ci/gemini-install and export its path): the end-to-end test is skipped');

const SESSION_Q = `query($id: ID!) { session(id: $id) { id directory status metadata
  executions(first: 50) { edges { node { id sequence status interruptReason trigger error
    boundary { __typename ... on BoundaryUnavailable { reason detail } }
    changeset { files { path status } }
    jobs(first: 10) { edges { node { kind status background command exitCode } } } } } }
  messages(first: 100) { edges { node { id role origin execution { id }
    parts { id __typename ... on TextPart { text } ... on ReasoningPart { text } ... on ToolPart { tool status input output } } } } } } }`;
const SEAL_M = `mutation($i: SealSessionInput!) { sealSession(input: $i) { __typename
  ... on SessionSealed { interruptedExecution { id status interruptReason } cancelledJobs { id status background } }
  ... on SealUnsupportedError { reason } ... on Error { message } } }`;

describe('the chat history and the launcher (no Gemini CLI run)', () => {
  it('replays the history as Gemini CLI loads it, cuts it into turns, and writes edits as appended records', () => {
    const tools = [{ id: 'run_shell_command__c1', name: 'run_shell_command', args: { command: 'exit 3' }, status: 'success',
      result: [{ functionResponse: { id: 'run_shell_command__c1', name: 'run_shell_command', response: { output: 'Output: (empty)\nExit Code: 3\nProcess Group PGID: 77' } } }] }];
    const lines = [
      { sessionId: 's1', projectHash: 'h', startTime: 't', kind: 'main' },
      { $set: { messages: [{ id: 'ctx', type: 'user', content: [{ text: '<session_context>x</session_context>' }] }] } },
      { id: 'p1', timestamp: 't1', type: 'user', content: [{ text: 'the prompt SECRET-P' }] },
      { id: 'g1', timestamp: 't2', type: 'gemini', content: '', thoughts: [{ subject: 'Plan', description: 'run it' }], tokens: { input: 10, output: 2, cached: 4, thoughts: 1 }, model: 'gemini-x' },
      { id: 'g1', timestamp: 't2', type: 'gemini', content: '', thoughts: [{ subject: 'Plan', description: 'run it' }], tokens: { input: 10, output: 2, cached: 4, thoughts: 1 }, model: 'gemini-x', toolCalls: tools },
      { id: 'u1', timestamp: 't3', type: 'user', content: [{ functionResponse: tools[0].result[0].functionResponse }] },
      { id: 'g2', timestamp: 't4', type: 'gemini', content: 'the key is SECRET-K', tokens: { input: 20, output: 3, cached: 0, thoughts: 0 }, model: 'gemini-x' },
      { something: 'new' },
    ].map((l) => JSON.stringify(l));
    const text = [...lines, 'not json', '[1]'].join('\n');
    const c = loadConversation(text);
    expect(c.skipped).toBe(3);
    expect(c.messages.map((m) => m.id)).toEqual(['ctx', 'p1', 'g1', 'u1', 'g2']);
    const [t] = turnsOf(c);
    expect(t).toMatchObject({ promptId: 'p1', prompt: 'the prompt SECRET-P', model: 'gemini-x', answered: true });
    // One model call per response, its times Gemini CLI's (from what it answered to its own record), its tokens in
    // the one meaning: input with the cached ones (Gemini's prompt count), output with the thoughts.
    expect(t.calls.map((c) => [c.externalID, c.startedAt, c.endedAt, c.timesFrom])).toEqual([['g1', 't1', 't2', 'AGENT'], ['g2', 't3', 't4', 'AGENT']]);
    expect(settlementOfCalls(t.calls).usage).toEqual({ inputTokens: 30, outputTokens: 6, reasoningTokens: 1, cacheReadTokens: 4, cacheWriteTokens: 0, cacheWrite5mTokens: null, cacheWrite1hTokens: null });
    expect(t.shells).toEqual([{ callId: 'run_shell_command__c1', command: 'exit 3', exitCode: 3, signal: null, background: false, pids: [], pgid: 77 }]);
    expect(t.steps.map((s) => s.parts.map((p) => `${p.type}:${p.status ?? ''}`))).toEqual([['REASONING:', 'TOOL:error'], ['TEXT:']]);
    const r = appendedEdits(text, [{ kind: 'correct', at: t.steps[1].locators[0], text: 'the key is [redacted]' },
      { kind: 'retract', at: [{ kind: 'text', messageId: 'p1' }, t.steps[0].locators[1]], placeholder: '[retracted]' }]);
    expect(r.applied).toBe(2);
    // Appended records take the messages' places (Gemini CLI's loader), and the earlier copies leave the file too.
    expect(r.text.trim().split('\n').length).toBe(text.split('\n').length + 4); // p1, g1 and g2, u1 (the result it carried)
    expect(r.text).not.toMatch(/SECRET|Exit Code: 3/);
    expect(r.text).toContain('not json');
    const after = loadConversation(r.text);
    expect(after.messages.map((m) => m.id)).toEqual(['ctx', 'p1', 'g1', 'u1', 'g2']);
    expect(JSON.stringify(after.messages)).not.toMatch(/SECRET|Exit Code: 3/);
    expect(after.messages.find((m) => m.id === 'g2')!.text).toBe('the key is [redacted]');
    expect(() => turnsOf(loadConversation('\u0000{{{\n\n'))).not.toThrow();

    // The shape a resume writes the history back in (`$set.messages`): thoughts and calls as the API's parts, each
    // result in a user message (twice: the one recorded, and the resume's `<id>_response`).
    const response = { functionResponse: { id: 'c9', name: 'run_shell_command', response: { output: 'Output: x\nExit Code: 4\nProcess Group PGID: 9' } } };
    const resumed = JSON.stringify({ $set: { messages: [
      { id: 'p9', type: 'user', content: [{ text: 'resumed prompt' }] },
      { id: 'g9', type: 'gemini', content: [{ text: 'plan', thought: true }, { functionCall: { id: 'c9', name: 'run_shell_command', args: { command: 'exit 4' } } }], model: 'gemini-x' },
      { id: 'g9_response', type: 'user', content: [response] }, { id: 'u9', type: 'user', content: [response] },
      { id: 'g10', type: 'gemini', content: [{ text: 'final SECRET-R' }], model: 'gemini-x' }] } });
    const [rt] = turnsOf(loadConversation(resumed));
    expect(rt).toMatchObject({ promptId: 'p9', answered: true, shells: [{ callId: 'c9', command: 'exit 4', exitCode: 4 }] });
    expect(rt.steps.map((s) => s.parts.map((p) => `${p.type}:${p.text ?? p.status}`))).toEqual([['REASONING:plan', 'TOOL:error'], ['TEXT:final SECRET-R']]);
    const re = appendedEdits(resumed, [{ kind: 'correct', at: rt.steps[1].locators[0], text: 'final [redacted]' }, { kind: 'retract', at: [rt.steps[0].locators[1]], placeholder: '[retracted]' }]);
    expect(re.applied).toBe(2);
    expect(re.text).not.toMatch(/SECRET|Exit Code: 4/);
    const reloaded = loadConversation(re.text);
    expect(JSON.stringify(reloaded.messages)).not.toMatch(/SECRET|Exit Code: 4/);
    expect(turnsOf(reloaded)[0].steps.map((s) => s.parts.map((p) => p.type))).toEqual([['REASONING', 'TOOL'], ['TEXT']]);
  });

  it('refuses the arguments that would run tools without the hooks; keeps the user\'s settings and puts back what switches the hooks off', () => {
    expect(() => checkGeminiArgs(['--acp'])).toThrow(/ACP/);
    expect(() => checkGeminiArgs(['-s', '-p', 'x'])).toThrow(/container/);
    expect(() => checkGeminiArgs(['--yolo', '-m', 'gemini-2.5-flash', '-p', 'x'])).not.toThrow();
    expect(sessionArgs(['--resume', '0b1c2d3e-0000-4000-8000-000000000001', '-p', 'x'])).toEqual({ names: '0b1c2d3e-0000-4000-8000-000000000001', anyInCwd: false });
    expect(sessionArgs(['-r', 'latest'])).toEqual({ names: null, anyInCwd: true });
    expect(['node /x/bundle/gemini.js -p y', 'node --max-old-space-size=4096 /x/bundle/gemini.js', '/usr/local/bin/gemini --yolo'].map((c) => isGemini(c.split(' ')))).toEqual([true, true, true]);
    expect(['node /x/other.js gemini.js', 'bash gemini-hook.sh', 'node'].map((c) => isGemini(c.split(' ')))).toEqual([false, false, false]);
    const s = withHooks({ theme: 'x', hooks: { BeforeTool: [{ matcher: 'x', hooks: [{ name: 'mine', type: 'command', command: 'true' }] }] },
      hooksConfig: { enabled: false, disabled: ['gateway-BeforeTool', 'mine'] } }, '/h/gateway-hook.sh');
    expect(s).toMatchObject({ theme: 'x', hooksConfig: { enabled: true, disabled: ['mine'] }, general: { sessionRetention: { enabled: false } } });
    expect(JSON.stringify(s.hooks)).toContain(`bash '/h/gateway-hook.sh' BeforeTool auto`);
    expect(JSON.stringify(s.hooks)).toContain('"name":"mine"');
  });
});

describe.skipIf(!process.env.GEMINI_BIN)('Gemini host (real Gemini CLI)', { timeout: 300_000 }, () => {
  let gw: TestGateway;
  let model: ScriptedGemini;
  let host: GeminiHost;
  let tmp: string;
  let repo: string;
  let home: string;
  let hostDir: string;

  const env = (): NodeJS.ProcessEnv => ({ ...process.env, HOME: home, TMPDIR: path.join(tmp, 'tmp'), GOOGLE_GEMINI_BASE_URL: model.url, GEMINI_API_KEY: 'fake-local-key', GEMINI_BIN: '' });
  const M = ['--yolo', '-m', 'gemini-2.5-flash'];
  const newHost = () => new GeminiHost({ gatewayUrl: gw.url, hostToken: gw.admin, dir: hostDir, leaseMs: 10_000, geminiEnv: env(), geminiBin: bin!, models: ['gemini-2.5-pro'],
    promptArgs: M, log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[gemini] ${m}`); } });

  /** One `gemini -p` run through the launcher (`gateway gemini …`). */
  async function run(prompt: string, resume?: string) {
    const l = await launchGemini({ dir: hostDir, args: [...M, ...(resume ? ['--resume', resume] : []), '-p', prompt], cwd: repo, env: env(), stdio: 'pipe', detached: true, bin: bin! });
    let out = '';
    let err = '';
    l.child.stdout!.on('data', (d) => { out += d; });
    l.child.stderr!.on('data', (d) => { err += d; });
    const done = (async () => { const x = await l.exited; await host.settled(); return { ...x, out, err }; })();
    return { pid: l.child.pid!, done };
  }
  const session = async (id: string) => (await gw.gql(SESSION_Q, { id })).data!.session;
  const sessionFiles = () => fs.readdirSync(path.join(home, '.gemini', 'tmp', 'repo', 'chats')).map((f) => path.join(home, '.gemini', 'tmp', 'repo', 'chats', f));

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gemini-host-'));
    repo = path.join(tmp, 'repo');
    home = path.join(tmp, 'home');
    hostDir = path.join(tmp, 'host');
    for (const d of [repo, path.join(home, '.gemini'), path.join(tmp, 'tmp')]) fs.mkdirSync(d, { recursive: true });
    const g = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'pipe' });
    g('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'hello\n');
    g('add', '.');
    g('-c', 'user.email=t@e', '-c', 'user.name=t', 'commit', '-qm', 'c0');
    // What a user of a local model server has in their settings (the launcher adds the hooks beside it).
    fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false }, general: { enableAutoUpdate: false, enableAutoUpdateNotification: false }, telemetry: { enabled: false } }));
    gw = await startTestGateway();
    model = await startScriptedGemini();
    host = newHost();
    await host.start();
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    await gw?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('mirrors turns with their messages, jobs, usage and changesets; corrections reach the next request; generation and compaction are Gemini CLI\'s; the seal stops detached shells and refuses what follows', async () => {
    // 1. A turn: a thought, a shell that writes, a failing shell, write_file, an answer with a secret.
    const steps: GeminiScriptStep[] = [
      { thought: 'the file must be written by a shell', shell: ['printf "made by a shell\\n" > shell.txt && echo wrote'], usage: { prompt: 100, cached: 7, candidates: 20, thoughts: 5 } },
      { shell: ['echo no; exit 3'], write: [{ file_path: 'written.txt', content: 'by write_file\n' }], usage: { prompt: 110, candidates: 5 } },
      { text: 'the key is sk-SECRET-GEMINI-1', usage: { prompt: 130, candidates: 4 } },
    ];
    const r1 = await (await run(geminiScript('write PROMPT-SECRET-4242', steps))).done;
    expect(r1.code, r1.err).toBe(0);
    expect(r1.out.trim()).toBe('the key is sk-SECRET-GEMINI-1');
    const settings = JSON.parse(fs.readFileSync(path.join(home, '.gemini', 'settings.json'), 'utf8'));
    expect(settings.security.auth.selectedType).toBe('gemini-api-key');
    expect(settings.hooks.BeforeTool[0].hooks[0].command).toContain('gateway-hook.sh');
    const [file] = sessionFiles();
    const sid = loadConversation(fs.readFileSync(file, 'utf8')).sessionId!;
    const id = host.gatewaySessionOf(sid)!;
    expect(id).toMatch(/^ses_/);
    let s = await session(id);
    expect(s.metadata.gemini).toMatchObject({ sessionID: sid, launched: true });
    expect(s.directory).toBe(repo);
    const [ex1] = s.executions.edges.map((e: any) => e.node);
    expect(ex1).toMatchObject({ status: 'SUCCEEDED', trigger: 'PROMPT', boundary: { __typename: 'SnapshotBoundary' } });
    expect(ex1.changeset.files.map((f: any) => [f.path, f.status]).sort()).toEqual([['shell.txt', 'ADDED'], ['written.txt', 'ADDED']]);
    expect(ex1.jobs.edges.map((e: any) => e.node).map((j: any) => [j.command, j.status, j.exitCode]).sort()).toEqual([
      ['echo no; exit 3', 'ERROR', 3], ['printf "made by a shell\\n" > shell.txt && echo wrote', 'COMPLETED', 0]]);
    const [row] = await gw.sql`SELECT * FROM executions WHERE id = ${ex1.id}`;
    expect(row).toMatchObject({ providerId: 'google', modelId: 'gemini-2.5-flash', finishReason: 'stop' });
    // Gemini's promptTokenCount includes the cached tokens: input is the one meaning, cached beside it.
    expect([row.inputTokens, row.outputTokens, row.cacheReadTokens, row.reasoningTokens].map(Number)).toEqual([340, 34, 7, 5]);
    const calls = (await gw.gql(`query($id: ID!) { node(id: $id) { ... on Execution { modelCalls { index externalID timesFrom startedAt endedAt model { modelID } } } } }`, { id: ex1.id })).data.node.modelCalls;
    expect(calls.map((c: any) => [c.index, c.timesFrom, c.model.modelID])).toEqual([[0, 'AGENT', 'gemini-2.5-flash'], [1, 'AGENT', 'gemini-2.5-flash'], [2, 'AGENT', 'gemini-2.5-flash']]);
    expect(calls.every((c: any) => c.externalID && Date.parse(c.startedAt) <= Date.parse(c.endedAt))).toBe(true);
    const msgs = s.messages.edges.map((e: any) => e.node);
    expect(msgs.map((m: any) => `${m.role}:${m.parts.map((p: any) => p.__typename).join(',')}`)).toEqual(['USER:TextPart', 'ASSISTANT:ReasoningPart,ToolPart', 'ASSISTANT:ToolPart,ToolPart', 'ASSISTANT:TextPart']);
    expect(msgs[1].parts[1]).toMatchObject({ tool: 'run_shell_command', status: 'completed', input: { command: expect.stringContaining('shell.txt') } });
    expect(msgs[1].parts[1].output).toContain('wrote');
    expect(msgs[2].parts.map((p: any) => [p.tool, p.status])).toEqual([['run_shell_command', 'error'], ['write_file', 'completed']]);

    // 2. A correction and a retraction, appended to the history: the next resume's request carries them.
    const answer = msgs[3];
    expect((await gw.gql(`mutation($i: CorrectMessagePartInput!) { correctMessagePart(input: $i) { __typename } }`,
      { i: { messageID: answer.id, partID: answer.parts[0].id, text: 'the key is [redacted]' } })).data.correctMessagePart.__typename).toBe('MessagePartCorrected');
    expect((await gw.gql(`mutation($i: RetractMessageInput!) { retractMessage(input: $i) { __typename } }`,
      { i: { messageID: msgs[0].id, reason: 'secret' } })).data.retractMessage.__typename).toBe('MessageRetracted');
    await until('both edits in the history', () => !fs.readFileSync(file, 'utf8').includes('SECRET'), 15_000);
    expect(loadConversation(fs.readFileSync(file, 'utf8')).skipped).toBe(0);
    let n = model.requests.length;
    // (A long answer, not repetitive (Gemini CLI's loop detection): Gemini CLI keeps a compressed history only when
    // its estimate is smaller than before.)
    const r2 = await (await run(geminiScript('second', [{ text: `second answer ${Array.from({ length: 2_000 }, (_, i) => `w${i}`).join(' ')}`, usage: { prompt: 90_000 } }]), sid)).done;
    expect(r2.code, r2.err).toBe(0);
    const sent = sentText(model.requests.filter((q) => q.method === 'stream').slice(-1)[0]);
    expect(model.requests.length).toBeGreaterThan(n);
    expect(sent).toContain('the key is [redacted]');
    expect(sent).not.toContain('SECRET');
    s = await session(id);
    expect(s.executions.edges.map((e: any) => e.node.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);

    // 2b. A review comment on a line of the first turn's changeset, sent to the agent (the PROMPT command: the host
    //     resumes the session through the launcher, its prompt admitted in BeforeAgent): the turn it starts changes
    //     that line and answers the comment.
    const body = 'Shout the shell line, please.';
    const added = (await gw.gql(ADD_COMMENT, { i: { sessionID: id, changeset: { kind: 'EXECUTION', executionID: ex1.id }, path: 'shell.txt', side: 'NEW', line: 1, body } })).data.addReviewComment;
    expect(added).toMatchObject({ __typename: 'ReviewComment', anchor: { quote: 'made by a shell' } });
    model.when(body, [{ shell: ["sed -i 's/made by a shell/MADE BY A SHELL/' shell.txt"] }, { text: 'Shouted.' }]);
    const sentComments = (await gw.gql(SEND_COMMENTS, { i: { sessionID: id, commentIDs: [added.id], timeoutMs: 120_000 } })).data.sendReviewComments;
    expect(sentComments.__typename, JSON.stringify(sentComments)).toBe('ReviewCommentsSent');
    const answered = await until('the answering execution settled', async () => {
      const e = (await gw.gql(EXECUTION_Q, { id: sentComments.execution.id })).data.execution;
      return e.status !== 'RUNNING' ? e : null;
    }, 120_000);
    expect(answered.status).toBe('SUCCEEDED');
    // (Once seen in CI, under load: SUCCEEDED with no file changed. The message says what the model was asked and
    // what the execution holds, for the next time.)
    const asked = model.requests.filter((q) => q.method === 'stream').map((q) => sentText(q)).filter((t) => t.includes(body)).length;
    expect(answered.changeset.files, `${JSON.stringify(answered)}; stream requests carrying the comment: ${asked}`).toHaveLength(1);
    expect(answered.changeset.files[0].patch).toContain('+MADE BY A SHELL');
    expect((await gw.gql(COMMENT_Q, { id: added.id })).data.reviewComment).toMatchObject({ answeredBy: { id: sentComments.execution.id } });
    await until('no Gemini CLI process of the session left', () => [...(host as any).state.launches.values()].every((x: any) => x.exited));

    // 3. Generation: a hidden run with the model asked for, in a throwaway home; compaction: Gemini CLI's /compress.
    n = model.requests.length;
    const g = await gw.gql(`mutation($i: GenerateInput!) { generate(input: $i) { __typename ... on Generation { text providerID modelID } ... on Error { message } } }`,
      { i: { sessionID: id, prompt: 'REPLY:generated text', model: { providerID: 'google', modelID: 'gemini-2.5-pro' }, timeoutMs: 60_000 } });
    expect(g.data.generate, JSON.stringify(g)).toMatchObject({ __typename: 'Generation', text: 'generated text', providerID: 'google', modelID: 'gemini-2.5-pro' });
    expect(model.requests.slice(n).some((q) => q.model === 'gemini-2.5-pro')).toBe(true);
    const c = await gw.gql(`mutation($i: CompactSessionInput!) { compactSession(input: $i) { __typename
      ... on SessionCompacted { summary { parts { ... on TextPart { text } } } } ... on Error { message } } }`, { i: { sessionID: id, timeoutMs: 60_000 } });
    expect(c.data.compactSession.__typename, JSON.stringify(c)).toBe('SessionCompacted');
    expect(c.data.compactSession.summary.parts[0].text).toContain('SCRIPTED SUMMARY');
    expect((await session(id)).executions.edges.length).toBe(3); // the host's own runs are not turns

    // 4. SIGINT while a shell runs: Gemini CLI ends (exit code 0) and leaves the shell
    //    running (detached): the turn is the user's interrupt, its shell a background job from then on.
    const interrupted = await run(geminiScript('interrupt me', [{ shell: ['sleep 303; touch late.txt'] }, { text: 'never' }]), sid);
    await until('the shell running', async () => (await gw.sql`SELECT 1 FROM jobs WHERE session_id = ${id} AND command LIKE 'sleep 303%'`).length > 0
      && processesWith('sleep 303').length > 0);
    process.kill(interrupted.pid, 'SIGINT');
    expect(await interrupted.done).toMatchObject({ code: 0 }); // (Gemini CLI exits 0 after SIGINT)
    s = await session(id);
    const ex3 = s.executions.edges.map((e: any) => e.node).find((e: any) => e.sequence === 4);
    expect([ex3.status, ex3.interruptReason]).toEqual(['INTERRUPTED', 'USER']);
    expect(ex3.jobs.edges.map((e: any) => e.node)).toMatchObject([{ command: 'sleep 303; touch late.txt', status: 'RUNNING', background: true }]);
    expect(processesWith('sleep 303').length).toBeGreaterThan(0);

    // 5. A turn that leaves shells running in groups of their own (`&` with its output redirected, is_background),
    //    held at its next model request: the seal kills them all with Gemini CLI, SessionSealed.
    const held = await run(geminiScript('leave them running', [
      { shell: ['sleep 301 > /dev/null 2>&1 & echo started', { command: 'sleep 302', is_background: true }] },
      { text: 'never', gate: 'held' },
    ]), sid);
    await model.waitGate('held');
    expect(sentText(model.requests.at(-1)!)).toContain('SCRIPTED SUMMARY'); // the compressed history is what a resume sends
    await until('both shells running', () => processesWith('sleep 301').length > 0 && processesWith('sleep 302').length > 0);
    const sealed = (await gw.gql(SEAL_M, { i: { sessionID: id, timeoutMs: 60_000 } })).data!.sealSession;
    expect(sealed.__typename, JSON.stringify(sealed)).toBe('SessionSealed');
    expect(sealed.interruptedExecution).toMatchObject({ status: 'INTERRUPTED', interruptReason: 'SEAL' });
    // All background jobs (the `&` one left a process running when its command returned; the interrupted turn's).
    expect(sealed.cancelledJobs.map((j: any) => [j.status, j.background])).toEqual([['CANCELLED', true], ['CANCELLED', true], ['CANCELLED', true]]);
    expect([...processesWith('sleep 301'), ...processesWith('sleep 302'), ...processesWith('sleep 303')]).toEqual([]);
    expect(fs.existsSync(path.join(repo, 'late.txt'))).toBe(false);
    expect((await held.done).signal).toBe('SIGKILL');
    model.release('held');
    n = model.requests.length;
    const again = await (await run(geminiScript('after the seal', [{ shell: ['touch after-seal.txt'] }]), sid)).done;
    expect(again.refused.join('\n')).toMatch(/sealed by the gateway/);
    expect(model.requests.length).toBe(n);
    expect(fs.existsSync(path.join(repo, 'after-seal.txt'))).toBe(false);
    s = await session(id);
    expect(s.status).toBe('SEALED');
    expect(s.executions.edges.length).toBe(5);

    // 6. A turn the model API fails (HTTP 400): Gemini CLI exits 1 and takes the prompt out of its history; FAILED.
    const failing = randomUUID();
    const lf = await launchGemini({ dir: hostDir, args: [...M, '--session-id', failing, '-p', geminiScript('fail', [{ fail: 'scripted failure: quota' }])], cwd: repo, env: env(), stdio: 'pipe', detached: true, bin: bin! });
    lf.child.stdout!.resume();
    lf.child.stderr!.resume();
    expect((await lf.exited).code).toBe(1);
    await host.settled();
    const failed = (await session(host.gatewaySessionOf(failing)!)).executions.edges.map((e: any) => e.node);
    expect(failed).toMatchObject([{ status: 'FAILED' }]);
    expect(failed[0].error).toContain('exited with an error');
  });

  it('a turn Gemini CLI runs on a mirrored session while the host is down (its hooks failing open), or without its hooks, is imported once, in order, with honest boundaries', async () => {
    // Plain `gemini` (not the launcher; re-spawning itself as it does by default) with the hooks the launcher writes
    // into the user's settings: mode auto, open without a launch token: an observed session.
    const sid = randomUUID();
    let first = true;
    const settingsFile = installHooks(env(), host.scriptPath);
    await missedTurnsImportedOnce({
      gw,
      async turn(how, file, w, whileRunning) {
        const withHooks = fs.readFileSync(settingsFile, 'utf8');
        if (how === 'bare') fs.writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(withHooks), hooks: {} }));
        const gate = `missed-${w}`;
        const prompt = geminiScript(`turn ${w}`, [{ shell: [`echo ${w} > ${file}`] }, { text: w, ...(whileRunning ? { gate } : {}) }]);
        const child = spawn(process.execPath, [bin!, '--skip-trust', ...M, first ? '--session-id' : '--resume', sid, '-p', prompt], { cwd: repo, env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
        first = false;
        let err = '';
        child.stderr!.on('data', (d) => { err += d; });
        const exited = new Promise((r) => child.once('exit', r));
        if (whileRunning) {
          await model.waitGate(gate);
          await whileRunning();
          model.release(gate);
        }
        const code = await exited;
        fs.writeFileSync(settingsFile, withHooks);
        expect(code, err).toBe(0);
        if (!host.stopped) await host.settled();
      },
      sessionID: () => host.gatewaySessionOf(sid)!,
      stopHost: () => host.stop(),
      async startHost() { host = newHost(); await host.start(); await host.settled(); },
    });
  });
  it('the host down: a launched process\'s prompt is refused by its own hook (no model request), a plain gemini runs', async () => {
    installHooks(env(), host.scriptPath);
    await host.stop();
    try {
      const plain = (extra: Record<string, string>, prompt: string) => new Promise<{ code: unknown; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, [bin!, '--skip-trust', ...M, '-p', prompt], { cwd: repo, env: { ...env(), ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout!.on('data', (d) => { out += d; });
        child.stderr!.on('data', (d) => { err += d; });
        child.once('exit', (code) => resolve({ code, out, err }));
      });
      let before = model.requests.length;
      // A launch token in its environment: the hook fails closed (Gemini CLI would let a crashed or silent hook through).
      const closed = await plain({ GATEWAY_GEMINI_LAUNCH: 'a-token', GEMINI_CLI_NO_RELAUNCH: 'true' }, 'REPLY:must not be asked');
      expect(model.requests.length).toBe(before);
      expect(closed.out).not.toContain('must not be asked');
      expect(closed.err).toContain('cannot be reached');
      before = model.requests.length;
      const open = await plain({}, 'REPLY:answered without the host');
      expect(open.code).toBe(0);
      expect(open.out.trim()).toBe('answered without the host');
      expect(model.requests.length).toBeGreaterThan(before);
    } finally {
      host = newHost();
      await host.start();
    }
  });
});
