// The review loop with the real `codex` binary (0.169.0; .ci/codex-install, CODEX_BIN), offline against the scripted
// Responses API, with the Codex host (bridge/codex/ on the kit, bridge/hooks-host/) between it and a real gateway: the
// agent writes a file, a reviewer comments on one line of that execution's changeset, the comment is sent to the
// agent (sendReviewComments: the PROMPT host command, carried out by `codex exec resume` through the launcher, so its
// prompt is admitted at UserPromptSubmit like any other), the agent's next execution changes that line and the
// comment reads answered by it; a send while a turn runs is SessionBusyError; after the seal SessionSealedError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestGateway, type TestGateway } from './harness.js';
import { CodexHost } from '../bridge/codex/host.js';
import { findCodexBinary, launchCodex } from '../bridge/codex/launch.js';
import { codexScript, startScriptedResponses, type ScriptedResponses } from '../bridge/codex/scripted-model.js';
import { until } from './support/until.js';
import { ADD_COMMENT, COMMENT_Q, EXECUTION_Q, SEND_COMMENTS } from './support/review-loop.js';

const bin = findCodexBinary();
if (!bin) console.warn('review-loop-codex.test.ts: no codex binary (run .ci/codex-install, or set CODEX_BIN): skipped');

describe.skipIf(!bin)('review comments sent to a real Codex', { timeout: 300_000 }, () => {
  let gw: TestGateway;
  let model: ScriptedResponses;
  let host: CodexHost;
  let tmp: string;
  let repo: string;
  let home: string;
  let codexHome: string;
  let hostDir: string;
  let thread: string;
  let gwSession: string;
  let written: string;

  const env = () => ({ ...process.env, HOME: home, CODEX_HOME: codexHome, FAKE_OPENAI_KEY: 'sk-fake-local', CODEX_BIN: '' });
  const gql = async (q: string, v: Record<string, unknown>) => {
    const r = await gw.gql(q, v);
    expect(r.errors).toBeUndefined();
    return r.data;
  };
  const comment = async (line: number, body: string) => (await gql(ADD_COMMENT, { i: {
    sessionID: gwSession, changeset: { kind: 'EXECUTION', executionID: written }, path: 'greet.txt', side: 'NEW', line, body,
  } })).addReviewComment;
  const send = async (commentIDs: string[]) => (await gql(SEND_COMMENTS, { i: { sessionID: gwSession, commentIDs, timeoutMs: 120_000 } })).sendReviewComments;
  const executions = async () => (await gw.sql`SELECT id, status FROM executions WHERE session_id = ${gwSession} ORDER BY sequence`) as unknown as { id: string; status: string }[];

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'review-loop-codex-'));
    repo = path.join(tmp, 'repo');
    home = path.join(tmp, 'home');
    codexHome = path.join(tmp, 'codex-home');
    hostDir = path.join(tmp, 'host');
    for (const d of [repo, home, codexHome]) fs.mkdirSync(d);
    const g = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'pipe' });
    g('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'README'), 'a project\n');
    g('add', '.');
    g('-c', 'user.email=t@e', '-c', 'user.name=t', 'commit', '-qm', 'start');
    gw = await startTestGateway();
    model = await startScriptedResponses();
    fs.writeFileSync(path.join(codexHome, 'config.toml'), ['model = "gpt-5.5"', 'model_provider = "fake"', '[model_providers.fake]', 'name = "fake"',
      `base_url = "${model.url}"`, 'wire_api = "responses"', 'env_key = "FAKE_OPENAI_KEY"', ''].join('\n'));
    // The host's own `codex exec resume` for a PROMPT runs with the sandbox and approvals the test's runs use.
    host = new CodexHost({ gatewayUrl: gw.url, hostToken: gw.admin, dir: hostDir, leaseMs: 10_000, codexEnv: env(), codexBin: bin!,
      promptArgs: ['--dangerously-bypass-approvals-and-sandbox'], log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[codex] ${m}`); } });
    await host.start();
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    await gw?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a comment on a line goes back to Codex as `codex exec resume`, admitted like any prompt; the execution it starts changes that line and answers the comment', async () => {
    const l = await launchCodex({ dir: hostDir, cwd: repo, env: env(), stdio: 'pipe', detached: true, bin: bin!,
      args: ['exec', '--dangerously-bypass-approvals-and-sandbox', codexScript('write greet.txt', [{ shell: ["printf 'hello\\nworld\\nbye\\n' > greet.txt"] }, { text: 'Written.' }])] });
    let err = '';
    l.child.stdout!.resume();
    l.child.stderr!.on('data', (d) => { err += d; });
    expect((await l.exited).code, err).toBe(0);
    await host.settled();
    thread = /session id: ([0-9a-f-]{36})/.exec(err)![1];
    gwSession = host.gatewaySessionOf(thread)!;
    [{ id: written }] = await executions();

    const body = 'Shout the second line: WORLD in capitals, please.';
    const c = await comment(2, body);
    expect(c).toMatchObject({ __typename: 'ReviewComment', anchor: { path: 'greet.txt', line: 2, quote: 'world' } });
    model.when(body, [{ shell: ["sed -i 's/^world$/WORLD/' greet.txt"] }, { text: 'Done: WORLD.' }]);
    const sent = await send([c.id]);
    expect(sent.__typename, JSON.stringify(sent)).toBe('ReviewCommentsSent');
    const answer = sent.execution.id;
    const done = await until('the answering execution settled', async () => {
      const e = (await gql(EXECUTION_Q, { id: answer })).execution;
      return e.status !== 'RUNNING' ? e : null;
    }, 120_000);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.changeset.files.map((f: any) => [f.path, f.status])).toEqual([['greet.txt', 'MODIFIED']]);
    expect(done.changeset.files[0].patch).toContain('+WORLD');
    expect(fs.readFileSync(path.join(repo, 'greet.txt'), 'utf8')).toBe('hello\nWORLD\nbye\n');
    expect((await gql(COMMENT_Q, { id: c.id })).reviewComment).toMatchObject({ sentCommandID: sent.commandID, answeredBy: { id: answer } });
    expect((await executions()).map((e) => e.id)).toEqual([written, answer]);
  });

  it('a send while a turn runs is SessionBusyError (nothing sent); the comment can be sent once it ended', async () => {
    const c = await comment(1, 'Greet more warmly.');
    const l = await launchCodex({ dir: hostDir, cwd: repo, env: env(), stdio: 'pipe', detached: true, bin: bin!,
      args: ['exec', 'resume', '--dangerously-bypass-approvals-and-sandbox', thread, codexScript('a long turn', [{ gate: 'busy', text: 'still thinking' }])] });
    l.child.stdout!.resume();
    l.child.stderr!.resume();
    await model.waitGate('busy');
    await until('a running execution', async () => (await executions()).some((e) => e.status === 'RUNNING'));
    expect((await send([c.id])).__typename).toBe('SessionBusyError');
    expect((await gql(COMMENT_Q, { id: c.id })).reviewComment).toMatchObject({ sentAt: null, answeredBy: null });
    model.release('busy');
    expect((await l.exited).code).toBe(0);
    await host.settled();
    await until('no Codex process of the thread left', () => [...(host as any).state.launches.values()].every((x: any) => x.exited));
    // Idle again: the same comment goes out, and its answer changes line 1.
    model.when('Greet more warmly.', [{ shell: ["sed -i 's/^hello$/Hello there/' greet.txt"] }, { text: 'Warmer.' }]);
    const sent = await send([c.id]);
    expect(sent.__typename, JSON.stringify(sent)).toBe('ReviewCommentsSent');
    const done = await until('the answering execution settled', async () => {
      const e = (await gql(EXECUTION_Q, { id: sent.execution.id })).execution;
      return e.status !== 'RUNNING' ? e : null;
    }, 120_000);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.changeset.files[0].patch).toContain('+Hello there');
    expect((await gql(COMMENT_Q, { id: c.id })).reviewComment).toMatchObject({ answeredBy: { id: sent.execution.id } });
  });

  it('after the seal a send is SessionSealedError and Codex is not resumed', async () => {
    const c = await comment(3, 'Say goodbye properly.');
    await until('no Codex process of the thread left', () => [...(host as any).state.launches.values()].every((l: any) => l.exited));
    const sealed = await gql(`mutation($i: SealSessionInput!) { sealSession(input: $i) { __typename } }`, { i: { sessionID: gwSession, timeoutMs: 60_000 } });
    expect(sealed.sealSession.__typename).toBe('SessionSealed');
    const asked = model.requests.length;
    expect((await send([c.id])).__typename).toBe('SessionSealedError');
    expect((await gql(COMMENT_Q, { id: c.id })).reviewComment).toMatchObject({ sentAt: null, answeredBy: null });
    expect(model.requests.length).toBe(asked);
  });
});
