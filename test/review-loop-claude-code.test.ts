// The review loop with the real `claude` binary (npm @anthropic-ai/claude-code-linux-x64), offline against the
// scripted Messages API, with the Claude Code host (bridge/claude-code/ on the kit, bridge/hooks-host/) between it
// and a real gateway: the agent writes a file, a reviewer comments on one line of that execution's changeset, the
// comment is sent to the agent (sendReviewComments: the PROMPT host command, carried out by resuming the session
// through the launcher, so its prompt is admitted at UserPromptSubmit like any other), the agent's next execution
// changes that line and the comment reads answered by it. A send while a turn runs is SessionBusyError; one the host
// cannot carry out (a Claude Code process of the session is open) HostUnavailableError; after the seal
// SessionSealedError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestGateway, type TestGateway } from './harness.js';
import { ClaudeCodeHost } from '../bridge/claude-code/host.js';
import { findClaudeBinary, launchClaude } from '../bridge/claude-code/launch.js';
import { scriptPrompt, startScriptedAnthropic, textOf, type ScriptedAnthropic, type ScriptStep } from '../bridge/claude-code/scripted-model.js';
import { until } from './support/until.js';
import { ADD_COMMENT, COMMENT_Q, EXECUTION_Q, reviewOnPage, SEND_COMMENTS } from './support/review-loop.js';

const bin = findClaudeBinary();

it('finds the claude binary installed from npm (@anthropic-ai/claude-code-linux-x64)', () => { expect(bin).toBeTruthy(); });

describe.skipIf(!bin)('review comments sent to a real Claude Code', { timeout: 300_000 }, () => {
  let gw: TestGateway;
  let model: ScriptedAnthropic;
  let host: ClaudeCodeHost;
  let tmp: string;
  let repo: string;
  let home: string;
  let hostDir: string;
  let greet: string;
  let cc: string; // the Claude Code session
  let gwSession: string;
  let written: string; // the execution that wrote greet.txt

  const env = () => ({
    ...process.env, HOME: home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'sk-ant-test', DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', CLAUDE_BIN: '',
  });
  // The launch's settings (its permissions): the host's own resume for a PROMPT runs with the same.
  const permissions = { permissions: { allow: ['Bash', 'Write', 'Edit', 'Read'] } };

  /** One `claude -p` run through the launcher, as a user runs it; `done` resolves after it exited and the host mirrored it. */
  async function run(prompt: string, opts: { resume?: string } = {}) {
    const args = ['-p', prompt, '--output-format', 'json', ...(opts.resume ? ['--resume', opts.resume] : [])];
    const l = await launchClaude({ dir: hostDir, args, cwd: repo, env: env(), settings: permissions, stdio: 'pipe', detached: true, bin: bin! });
    let out = '';
    l.child.stdout!.on('data', (d) => { out += d; });
    l.child.stderr!.resume();
    const done = (async () => {
      const x = await l.exited;
      await host.settled();
      let result: any = null;
      try { result = JSON.parse(out.trim().split('\n').at(-1) ?? ''); } catch { /* no JSON */ }
      return { ...x, result };
    })();
    return { done };
  }

  const gql = async (q: string, v: Record<string, unknown>) => {
    const r = await gw.gql(q, v);
    expect(r.errors).toBeUndefined();
    return r.data;
  };
  const comment = async (line: number, body: string) => (await gql(ADD_COMMENT, { i: {
    sessionID: gwSession, changeset: { kind: 'EXECUTION', executionID: written }, path: 'greet.txt', side: 'NEW', line, body,
  } })).addReviewComment;
  const send = async (commentIDs: string[]) => (await gql(SEND_COMMENTS, { i: { sessionID: gwSession, commentIDs, timeoutMs: 120_000 } })).sendReviewComments;
  const readComment = async (id: string) => (await gql(COMMENT_Q, { id })).reviewComment;
  const execution = async (id: string) => (await gql(EXECUTION_Q, { id })).execution;
  const executions = async () => (await gw.sql`SELECT id, status FROM executions WHERE session_id = ${gwSession} ORDER BY sequence`) as unknown as { id: string; status: string }[];
  /** No Claude Code process of the session is left (the host's own runs included). */
  const launchesGone = () => until('no launch left', () => [...(host as any).state.launches.values()].every((l: any) => l.exited) || (host as any).state.launches.size === 0);

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'review-loop-cc-'));
    repo = path.join(tmp, 'repo');
    home = path.join(tmp, 'home');
    hostDir = path.join(tmp, 'host');
    fs.mkdirSync(home);
    fs.mkdirSync(repo);
    greet = path.join(repo, 'greet.txt');
    const g = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'pipe' });
    g('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'README'), 'a project\n');
    g('add', '.');
    g('-c', 'user.email=t@e', '-c', 'user.name=t', 'commit', '-qm', 'start');
    gw = await startTestGateway();
    model = await startScriptedAnthropic();
    host = new ClaudeCodeHost({ gatewayUrl: gw.url, hostToken: gw.admin, dir: hostDir, leaseMs: 10_000, claudeEnv: env(), claudeBin: bin!,
      log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[claude-code] ${m}`); } });
    await host.start();
  });
  afterAll(async () => {
    await host?.stop();
    await model?.close();
    await gw?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a comment on a line goes back to Claude Code as a resumed prompt, admitted like any prompt; the execution it starts changes that line and answers the comment', async () => {
    const first = await (await run(scriptPrompt('write greet.txt', [
      { tools: [{ name: 'Write', input: { file_path: greet, content: 'hello\nworld\nbye\n' } }] }, { text: 'Written.' },
    ]))).done;
    expect(first.code).toBe(0);
    cc = first.result.session_id;
    gwSession = host.gatewaySessionOf(cc)!;
    [{ id: written }] = await executions();
    const body = 'Shout the second line: WORLD in capitals, please.';
    const c = await comment(2, body);
    expect(c).toMatchObject({ __typename: 'ReviewComment', state: 'OPEN', anchor: { path: 'greet.txt', side: 'NEW', line: 2, quote: 'world' }, answeredBy: null });
    // The scripted model changes that line when its prompt carries the comment.
    model.when(body, [{ tools: [{ name: 'Bash', input: { command: `sed -i 's/^world$/WORLD/' ${greet}`, description: 'shout' } }] }, { text: 'Done: WORLD.' }]);

    const sent = await send([c.id]);
    expect(sent.__typename, JSON.stringify(sent)).toBe('ReviewCommentsSent');
    expect(sent.prompt).toBe(`Review comments on your changes (1):\n\n1. greet.txt, line 2 (new):\n   > world\n   ${body}\n`);
    const answer = sent.execution.id;
    const done = await until('the answering execution settled', async () => {
      const e = await execution(answer);
      return e.status !== 'RUNNING' ? e : null;
    }, 120_000);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.changeset.files.map((f: any) => [f.path, f.status])).toEqual([['greet.txt', 'MODIFIED']]);
    expect(done.changeset.files[0].patch).toContain('-world');
    expect(done.changeset.files[0].patch).toContain('+WORLD');
    expect(fs.readFileSync(greet, 'utf8')).toBe('hello\nWORLD\nbye\n');
    // The comment reads answered by that execution.
    expect(await readComment(c.id)).toMatchObject({ state: 'OPEN', sentCommandID: sent.commandID, answeredBy: { id: answer } });

    // The same Claude Code session, resumed (its transcript holds the first turn), and its prompt admitted by the
    // host's UserPromptSubmit hook: the execution's PROMPT message is the review prompt.
    expect((await executions()).map((e) => e.id)).toEqual([written, answer]);
    const msgs = (await gql(`query($id: ID!) { session(id: $id) { messages(first: 100) { edges { node { role origin execution { id }
      parts { ... on TextPart { text } } } } } } }`, { id: gwSession })).session.messages.edges.map((e: any) => e.node)
      .filter((m: any) => m.execution?.id === answer && m.role === 'USER');
    expect(msgs.map((m: any) => [m.origin, m.parts.map((p: any) => p.text).join('').trim()])).toEqual([['PROMPT', sent.prompt.trim()]]);
    const asked = model.agentRequests().at(-1)!.body.messages;
    expect(asked.filter((m: any) => m.role === 'user').map((m: any) => textOf(m.content)).join('\n')).toContain('write greet.txt');
    await launchesGone();
    expect((await send([c.id])).__typename).toBe('InvalidRequestError'); // answered: not sent again
  });

  it('a send while a turn runs is SessionBusyError; while a Claude Code process of the session is open the host cannot resume it: HostUnavailableError, the comment stays unanswered', async () => {
    const c = await comment(3, 'Say goodbye properly.');
    const busy = await run(scriptPrompt('a long turn', [{ gate: 'busy', text: 'still thinking' }]), { resume: cc });
    await model.waitGate('busy');
    await until('a running execution', async () => (await executions()).some((e) => e.status === 'RUNNING'));
    expect((await send([c.id])).__typename).toBe('SessionBusyError');
    expect(await readComment(c.id)).toMatchObject({ sentAt: null, answeredBy: null });
    model.release('busy');
    expect((await busy.done).code).toBe(0);

    // A Claude Code left open between turns (waiting for its next prompt on standard input): no execution runs, but
    // a second process resuming the session would write the same transcript. The host refuses; the gateway says so.
    const l = await launchClaude({ dir: hostDir, args: ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--resume', cc],
      cwd: repo, env: env(), settings: permissions, stdio: 'pipe-input', detached: true, bin: bin! });
    l.child.stdout!.resume();
    l.child.stderr!.resume();
    await until('the open Claude Code bound to the session', () => (host as any).state.launches.get(l.token)?.sessions?.includes(cc));
    const before = (await executions()).length;
    const refused = await send([c.id]);
    expect(refused, JSON.stringify(refused)).toMatchObject({ __typename: 'HostUnavailableError' });
    expect(await readComment(c.id)).toMatchObject({ state: 'OPEN', answeredBy: null });
    expect((await executions()).length).toBe(before);
    l.child.stdin!.end();
    await l.exited;
    await host.settled();
  });

  it('the loop on the review page (Chromium): a "+" on the line, the comment, "Send to the agent", answered by the execution Claude Code ran, whose changeset shows the line changed', async () => {
    const hello = path.join(repo, 'hello.txt');
    const first = await (await run(scriptPrompt('write hello.txt', [
      { tools: [{ name: 'Write', input: { file_path: hello, content: 'hello\nworld\nbye\n' } }] }, { text: 'Written.' },
    ]))).done;
    expect(first.code).toBe(0);
    const session = host.gatewaySessionOf(first.result.session_id)!;
    const [e1] = (await gw.sql`SELECT id FROM executions WHERE session_id = ${session}`) as unknown as { id: string }[];
    const body = 'Capitals here: WORLD, as on the greeting card.';
    model.when(body, [{ tools: [{ name: 'Bash', input: { command: `sed -i 's/^world$/WORLD/' ${hello}`, description: 'capitals' } }] }, { text: 'Done: WORLD.' }]);

    let answer: { status: string } | null = null;
    const shown = await reviewOnPage({
      gatewayUrl: gw.url, token: await gw.token('plugin'), executionID: e1.id, file: 'hello.txt', line: 2, body, agent: 'claude-code', answerSequence: 2,
      settled: async () => {
        answer = await until('the answer settled', async () => {
          const [e] = (await gw.sql`SELECT status FROM executions WHERE session_id = ${session} AND sequence = 2`) as unknown as { status: string }[];
          return e && e.status !== 'RUNNING' ? e : null;
        }, 120_000);
      },
    });
    expect(answer).toEqual({ status: 'SUCCEEDED' });
    // The answering execution's changeset of the file: the line changed as asked.
    expect(shown).toEqual({ del: ['world'], add: ['WORLD'] });
    expect(fs.readFileSync(hello, 'utf8')).toBe('hello\nWORLD\nbye\n');
    await launchesGone();
  });

  it('after the seal a send is SessionSealedError and Claude Code is not resumed', async () => {
    const c = await comment(1, 'Greet more warmly.');
    await launchesGone();
    const sealed = await gql(`mutation($i: SealSessionInput!) { sealSession(input: $i) { __typename } }`, { i: { sessionID: gwSession, timeoutMs: 60_000 } });
    expect(sealed.sealSession.__typename).toBe('SessionSealed');
    const asked = model.requests.length;
    expect((await send([c.id])).__typename).toBe('SessionSealedError');
    expect(await readComment(c.id)).toMatchObject({ state: 'OPEN', sentAt: null, answeredBy: null });
    expect(model.requests.length).toBe(asked);
  });

  it('a send racing a seal, many rounds: the resumed prompt is never admitted after the seal committed', async () => {
    const rounds = Number(process.env.REVIEW_RACE_ROUNDS ?? 8);
    const outcomes: string[] = [];
    const round = async (i: number) => {
      const marker = path.join(tmp, `race-${i}`);
      const r = await (await run(scriptPrompt(`race ${i}`, [{ text: 'nothing to change' }]))).done;
      expect(r.code).toBe(0);
      const id = host.gatewaySessionOf(r.result.session_id)!;
      const body = `Race round ${i}: touch the marker.`;
      model.when(body, [{ tools: [{ name: 'Bash', input: { command: `touch ${marker}`, description: 'mark' } }] }, { text: 'marked' }]);
      const c = (await gql(ADD_COMMENT, { i: { sessionID: id, changeset: { kind: 'EXECUTION', executionID: (await gw.sql`SELECT id FROM executions WHERE session_id = ${id}`)[0].id }, body } })).addReviewComment;
      expect(c.__typename).toBe('ReviewComment');
      const sending = gql(SEND_COMMENTS, { i: { sessionID: id, commentIDs: [c.id], timeoutMs: 60_000 } });
      // Vary where the seal lands: before the PROMPT reaches the host, while Claude Code starts, into the turn.
      if (i % 3 === 2) await until('the prompt admitted', async () => (await gw.sql`SELECT 1 FROM executions WHERE session_id = ${id}`).length > 1);
      else for (let k = 0; k < (i % 3) * 40; k++) await new Promise((res) => setImmediate(res));
      const sealed = (await gql(`mutation($i: SealSessionInput!) { sealSession(input: $i) { __typename } }`, { i: { sessionID: id, timeoutMs: 60_000 } })).sealSession;
      const sent = (await sending).sendReviewComments;
      expect(sealed.__typename).toBe('SessionSealed');
      expect(['ReviewCommentsSent', 'SessionSealedError'], JSON.stringify(sent)).toContain(sent.__typename);
      await until('no Claude Code of the round left', () => ![...(host as any).state.launches.values()].some((l: any) => l.names === r.result.session_id && !l.exited));
      await host.settled();
      const [s] = await gw.sql`SELECT seal_requested_at, sealed_at FROM sessions WHERE id = ${id}`;
      // Nothing started at or after the seal's first commit: no execution, no admission, no shell.
      expect(await gw.sql`SELECT id FROM executions WHERE session_id = ${id} AND started_at >= ${s.sealRequestedAt}`).toEqual([]);
      expect(await gw.sql`SELECT id FROM admissions WHERE session_id = ${id} AND admitted_at >= ${s.sealRequestedAt}`).toEqual([]);
      expect(await gw.sql`SELECT id FROM jobs WHERE session_id = ${id} AND started_at >= ${s.sealRequestedAt}`).toEqual([]);
      expect(await gw.sql`SELECT id FROM executions WHERE session_id = ${id} AND status = 'RUNNING'`).toEqual([]);
      if (fs.existsSync(marker)) expect(fs.statSync(marker).mtime.getTime()).toBeLessThanOrEqual(new Date(s.sealedAt).getTime());
      const after = await readComment(c.id);
      if (sent.__typename === 'ReviewCommentsSent') {
        // Admitted before the seal: the comment is answered by that execution, which the seal interrupted or let end.
        expect(after.answeredBy).toEqual({ id: sent.execution.id });
        outcomes.push(fs.existsSync(marker) ? 'ran' : 'admitted');
      } else {
        expect(after.answeredBy).toBeNull();
        expect((await gw.sql`SELECT count(*)::int AS n FROM executions WHERE session_id = ${id}`)[0].n).toBe(1);
        outcomes.push('refused');
      }
    };
    for (let i = 0; i < rounds; i += 2) await Promise.all([round(i), ...(i + 1 < rounds ? [round(i + 1)] : [])]);
    if (process.env.BRIDGE_DEBUG) console.log(outcomes.join(' '));
    expect(outcomes.length).toBe(rounds);
  });
});
