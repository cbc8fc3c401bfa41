// The review loop with a real OpenCode (npm opencode-ai), offline with the scripted model, behind the admission
// proxy with the OpenCode bridge mirroring it into a real gateway (`gateway bridge opencode --serve`): the agent
// writes a file, a reviewer comments on one line of that execution's changeset, the comment is sent to the agent
// (sendReviewComments: the PROMPT host command, carried out through OpenCode's own prompt API, admitted by the
// gateway like any request), the agent's next execution changes that line, and the comment reads answered by that
// execution. A send while a turn runs is SessionBusyError, after the seal SessionSealedError.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import type { TestGateway } from './harness.js';
import type { OpencodeBridge } from '../bridge/opencode/bridge.js';
import type { OpencodeClient } from '../bridge/opencode/client.js';
import { findOpencodeBinary } from '../bridge/opencode/launch.js';
import { promptAsync as startPrompt, until } from './support/opencode-kit.js';
import type { ScriptedModel, ScriptStep } from '../bridge/opencode/scripted-model.js';
import { startFrontedOpencode, type FrontedOpencode } from './support/opencode-front.js';
import { ADD_COMMENT, COMMENT_Q, EXECUTION_Q, reviewOnPage, SEND_COMMENTS } from './support/review-loop.js';

const bin = findOpencodeBinary();

it('finds the opencode binary installed from npm (opencode-ai)', () => { expect(bin).toBeTruthy(); });

describe.skipIf(!bin)('review comments sent to a real OpenCode behind the admission proxy', { timeout: 300_000 }, () => {
  let fx: FrontedOpencode;
  let gw: TestGateway;
  let model: ScriptedModel;
  let client: OpencodeClient;
  let bridge: OpencodeBridge;
  let project: string;
  let greet: string;
  let ocSession: string;
  let gwSession: string;
  let written: string; // the execution that wrote greet.txt

  const prompt = async (steps: ScriptStep[], intro = 'do it') => (await startPrompt(client, ocSession, steps, intro))();
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

  beforeAll(async () => {
    // The deployment whose seal is proven: OpenCode reached only through the admission proxy (`bridge opencode --serve`).
    fx = await startFrontedOpencode({ bin: bin!, password: 'review-loop', front: { log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[front] ${m}`); } } });
    ({ gw, model, client, project } = fx);
    bridge = fx.front.bridge;
    greet = path.join(project, 'greet.txt');
  }, 600_000);

  afterAll(async () => {
    await fx?.stop();
  });

  it('a comment on a line goes back to OpenCode as its next prompt; the execution it starts changes that line and answers the comment', async () => {
    ocSession = (await client.createSession({ title: 'review loop' })).id;
    await prompt([{ tool: 'write', args: { filePath: greet, content: 'hello\nworld\nbye\n' } }, { text: 'Written.' }]);
    await bridge.settled();
    gwSession = bridge.gatewaySessionOf(ocSession)!;
    const s = await gql(`query($id: ID!) { session(id: $id) { executions(first: 10) { edges { node { id sequence changeset { files { path status } } } } } } }`, { id: gwSession });
    written = s.session.executions.edges.map((e: any) => e.node).find((e: any) => e.changeset.files.some((f: any) => f.path === 'greet.txt')).id;

    const body = 'Shout the second line: WORLD in capitals, please.';
    const c = await comment(2, body);
    expect(c).toMatchObject({ __typename: 'ReviewComment', state: 'OPEN', anchor: { path: 'greet.txt', side: 'NEW', line: 2, quote: 'world' }, answeredBy: null });
    // The scripted model edits that line when its prompt carries the comment.
    model.when(body, [{ tool: 'edit', args: { filePath: greet, oldString: 'world', newString: 'WORLD' } }, { text: 'Done: WORLD.' }]);

    const sent = await send([c.id]);
    expect(sent.__typename, JSON.stringify(sent)).toBe('ReviewCommentsSent');
    expect(sent.prompt).toBe(`Review comments on your changes (1):\n\n1. greet.txt, line 2 (new):\n   > world\n   ${body}\n`);
    expect(sent.comments.map((x: any) => x.id)).toEqual([c.id]);
    const answer = sent.execution.id;
    expect(answer).not.toBe(written);

    // Behind the proxy the bridge's own prompt was admitted like any request (admitWork with the command).
    expect((await gw.sql`SELECT route FROM admissions WHERE session_id = ${gwSession} AND route LIKE 'opencode PROMPT%'`).length).toBe(1);
    // OpenCode got the prompt as a user message of the session (its own prompt API), and the model was sent it.
    const user = (await client.messages(ocSession)).filter((m) => m.info.role === 'user').at(-1)!;
    expect(user.parts.filter((p) => p.type === 'text').map((p) => p.text).join('')).toBe(sent.prompt);

    // The execution the prompt started: its changeset shows the line changed.
    const done = await until('the answering execution settled', async () => {
      const e = await execution(answer);
      return e.status !== 'RUNNING' ? e : null;
    }, 120_000);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.changeset.files.map((f: any) => [f.path, f.status])).toEqual([['greet.txt', 'MODIFIED']]);
    expect(done.changeset.files[0].patch).toContain('-world');
    expect(done.changeset.files[0].patch).toContain('+WORLD');
    expect(fs.readFileSync(greet, 'utf8')).toBe('hello\nWORLD\nbye\n');

    // The comment reads answered by that execution (and still open: resolving is the reviewer's).
    const after = await readComment(c.id);
    expect(after).toMatchObject({ state: 'OPEN', sentCommandID: sent.commandID, answeredBy: { id: answer } });
    expect(after.sentAt).toBeTruthy();
    // An answered comment is not sent again.
    await until('OpenCode idle', async () => !(await client.status())[ocSession]);
    await bridge.settled();
    expect((await send([c.id])).__typename).toBe('InvalidRequestError');
  });

  it('the loop on the review page (Chromium): a "+" on the line, the comment, "Send to the agent", answered by the step OpenCode ran, whose changeset shows the line changed', async () => {
    const other = (await client.createSession({ title: 'review loop on the page' })).id;
    const hello = path.join(project, 'hello.txt');
    await (await startPrompt(client, other, [{ tool: 'write', args: { filePath: hello, content: 'hello\nworld\nbye\n' } }, { text: 'Written.' }]))();
    await bridge.settled();
    const session = bridge.gatewaySessionOf(other)!;
    const [e1] = (await gw.sql`SELECT id FROM executions WHERE session_id = ${session} ORDER BY sequence LIMIT 1`) as unknown as { id: string }[];
    const body = 'Capitals here: WORLD, as on the greeting card.';
    model.when(body, [{ tool: 'edit', args: { filePath: hello, oldString: 'world', newString: 'WORLD' } }, { text: 'Done: WORLD.' }]);
    // One execution per OpenCode step: the write (#1), its text (#2); the prompt's first step, the edit, is #3.
    let answer: { status: string } | null = null;
    const shown = await reviewOnPage({
      gatewayUrl: gw.url, token: await gw.token('plugin'), executionID: e1.id, file: 'hello.txt', line: 2, body, agent: 'opencode', answerSequence: 3,
      settled: async () => {
        answer = await until('the answer settled', async () => {
          const [e] = (await gw.sql`SELECT status FROM executions WHERE session_id = ${session} AND sequence = 3`) as unknown as { status: string }[];
          return e && e.status !== 'RUNNING' ? e : null;
        }, 120_000);
      },
    });
    expect(answer).toEqual({ status: 'SUCCEEDED' });
    expect(shown).toEqual({ del: ['world'], add: ['WORLD'] });
    expect(fs.readFileSync(hello, 'utf8')).toBe('hello\nWORLD\nbye\n');
    await until('OpenCode idle', async () => !(await client.status())[other]);
    await bridge.settled();
  });

  it('a send while the agent\'s turn runs is SessionBusyError (nothing sent); after the seal it is SessionSealedError', async () => {
    const c = await comment(3, 'Say goodbye properly.');
    const gate = path.join(fx.tmp, 'gate');
    const turn = await startPrompt(client, ocSession, [
      { tool: 'bash', args: { command: `while [ ! -f ${gate} ]; do sleep 0.1; done; echo ok`, description: 'wait for the gate' } }, { text: 'ok' },
    ]);
    await until('a running execution', async () => {
      const r = await gql(`query($id: ID!) { session(id: $id) { executions(first: 20) { edges { node { status } } } } }`, { id: gwSession });
      return r.session.executions.edges.some((e: any) => e.node.status === 'RUNNING');
    }, 120_000);
    expect((await send([c.id])).__typename).toBe('SessionBusyError');
    expect(await readComment(c.id)).toMatchObject({ sentAt: null, sentCommandID: null, answeredBy: null });
    fs.writeFileSync(gate, '');
    await turn();
    await bridge.settled();

    const seal = await gql(`mutation($i: SealSessionInput!) { sealSession(input: $i) { __typename } }`, { i: { sessionID: gwSession, timeoutMs: 60_000 } });
    expect(seal.sealSession.__typename).toBe('SessionSealed');
    const asked = model.requests;
    expect((await send([c.id])).__typename).toBe('SessionSealedError');
    expect(await readComment(c.id)).toMatchObject({ state: 'OPEN', sentAt: null, answeredBy: null });
    expect(model.requests).toBe(asked); // OpenCode was never prompted
  });

  it('a send racing a seal, many rounds: no step of the prompt is admitted after the seal committed', async () => {
    const rounds = Number(process.env.REVIEW_RACE_ROUNDS ?? 6);
    const outcomes: string[] = [];
    for (let i = 0; i < rounds; i++) {
      const oc = (await client.createSession({ title: `race ${i}` })).id;
      await (await startPrompt(client, oc, [{ text: 'nothing to change' }]))();
      await bridge.settled();
      const id = bridge.gatewaySessionOf(oc)!;
      const [e1] = (await gw.sql`SELECT id FROM executions WHERE session_id = ${id}`) as unknown as { id: string }[];
      const marker = path.join(fx.tmp, `race-${i}`);
      const body = `Race round ${i}: touch the marker.`;
      model.when(body, [{ tool: 'bash', args: { command: `touch ${marker}`, description: 'mark' } }, { text: 'marked' }]);
      const c = (await gql(ADD_COMMENT, { i: { sessionID: id, changeset: { kind: 'EXECUTION', executionID: e1.id }, body } })).addReviewComment;
      expect(c.__typename).toBe('ReviewComment');
      const sending = gql(SEND_COMMENTS, { i: { sessionID: id, commentIDs: [c.id], timeoutMs: 60_000 } });
      // Vary where the seal lands: before the bridge gets the PROMPT, while OpenCode starts the turn, into its step.
      if (i % 3 === 2) await until('the prompt\'s step admitted', async () => (await gw.sql`SELECT 1 FROM executions WHERE session_id = ${id}`).length > 1);
      else for (let k = 0; k < (i % 3) * 60; k++) await new Promise((res) => setImmediate(res));
      const sealed = (await gql(`mutation($i: SealSessionInput!) { sealSession(input: $i) { __typename } }`, { i: { sessionID: id, timeoutMs: 60_000 } })).sealSession;
      const sent = (await sending).sendReviewComments;
      expect(sealed.__typename).toBe('SessionSealed');
      expect(['ReviewCommentsSent', 'SessionSealedError'], JSON.stringify(sent)).toContain(sent.__typename);
      await until('OpenCode idle', async () => !(await client.status())[oc]);
      await bridge.settled();
      const [s] = await gw.sql`SELECT seal_requested_at, sealed_at FROM sessions WHERE id = ${id}`;
      expect(await gw.sql`SELECT id FROM executions WHERE session_id = ${id} AND started_at >= ${s.sealRequestedAt}`).toEqual([]);
      expect(await gw.sql`SELECT id FROM admissions WHERE session_id = ${id} AND admitted_at >= ${s.sealRequestedAt}`).toEqual([]);
      expect(await gw.sql`SELECT id FROM jobs WHERE session_id = ${id} AND started_at >= ${s.sealRequestedAt}`).toEqual([]);
      expect(await gw.sql`SELECT id FROM executions WHERE session_id = ${id} AND status = 'RUNNING'`).toEqual([]);
      if (fs.existsSync(marker)) expect(fs.statSync(marker).mtime.getTime()).toBeLessThanOrEqual(new Date(s.sealedAt).getTime());
      const after = await readComment(c.id);
      if (sent.__typename === 'ReviewCommentsSent') {
        expect(after.answeredBy).toEqual({ id: sent.execution.id });
        outcomes.push(fs.existsSync(marker) ? 'ran' : 'admitted');
      } else {
        expect(after.answeredBy).toBeNull();
        outcomes.push('refused');
      }
    }
    if (process.env.BRIDGE_DEBUG) console.log(outcomes.join(' '));
    expect(outcomes.length).toBe(rounds);
  });
});
