// End to end: a real OpenCode server driven by the scripted model, mirrored by
// the bridge, checked through the gateway's GraphQL API: what OpenCode records is stored with its IDs, usage and
// model; a message deleted in OpenCode is retracted; plugin session mutations reach OpenCode; a job whose end
// nobody saw is LOST; compactSession and generate run through OpenCode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import git from 'isomorphic-git';
import { startTestGateway, type TestGateway } from './harness.js';
import { sweepExpiredLeases } from '../domain/hosts.js';
import { OpencodeBridge } from '../bridge/opencode/bridge.js';
import { OpencodeClient, OpencodeError } from '../bridge/opencode/client.js';
import { FileBridgeStore } from '../bridge/opencode/store.js';
import { findOpencodeBinary, startOpencode, type OpencodeServer } from '../bridge/opencode/launch.js';
import { promptAsync, until } from './support/opencode-kit.js';
import { startScriptedModel, type ScriptedModel, type ScriptStep } from '../bridge/opencode/scripted-model.js';
import { processesWith } from './support/processes.js';

const bin = findOpencodeBinary();

const SESSION_Q = `query($id: ID!) { session(id: $id) { id parentID title metadata status
  context { messageID role text }
  executions(first: 50) { edges { node { id sequence status interruptReason externalID agent mode finishReason errorName
    model { providerID modelID }
    usage { inputTokens outputTokens reasoningTokens cacheReadTokens cacheWriteTokens cacheWrite5mTokens cacheWrite1hTokens cost }
    modelCalls { index externalID model { providerID modelID } startedAt endedAt timesFrom finishReason usage { inputTokens outputTokens reasoningTokens cacheReadTokens cacheWriteTokens cost } }
    jobs(first: 10) { edges { node { id kind status exitCode restored } } } } } }
  messages(first: 100) { edges { node { id role externalID retraction { reason }
    parts { __typename id externalID startedAt endedAt ... on TextPart { text } ... on ReasoningPart { text }
      ... on ToolPart { tool status title metadata } } } } } } }`;

const ERR = `... on Error { __typename message } ... on InvalidRequestError { field }`;
const GEN_ERR = `${ERR} ... on ModelNotFoundError { providerID modelID } ... on HostUnavailableError { reason }`;

describe.skipIf(!bin)('OpenCode bridge, both ways (real opencode-ai server)', { timeout: 300_000 }, () => {
  let gw: TestGateway;
  let model: ScriptedModel;
  let oc: OpencodeServer;
  let client: OpencodeClient;
  let bridge: OpencodeBridge;
  let tmp: string;
  let project: string;
  let stateFile: string;
  let ocSession: string;
  let gwSession: string;
  let plugin: string;
  const logs: string[] = [];

  const newBridge = () => new OpencodeBridge({
    opencodeUrl: oc.url, gatewayUrl: gw.url, hostToken: gw.admin, store: new FileBridgeStore(stateFile),
    opencodeDataDir: oc.dataDir, leaseMs: 10_000,
    log: (m) => { logs.push(m); if (process.env.BRIDGE_DEBUG) console.log(`[bridge] ${m}`); },
  });

  async function readSession(id = gwSession) {
    const r = await gw.gql(SESSION_Q, { id });
    expect(r.errors).toBeUndefined();
    return r.data.session;
  }
  async function prompt(steps: ScriptStep[], session = ocSession) {
    await (await promptAsync(client, session, steps))();
  }
  const mirrorOf = async (ocID: string) => until(`mirror of ${ocID}`, async () => {
    const r = await gw.gql(`{ sessions(first: 100) { edges { node { id metadata } } } }`);
    return r.data.sessions.edges.map((e: any) => e.node).find((s: any) => s.metadata?.opencode?.sessionID === ocID)?.id as string | undefined;
  });

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-mirror-'));
    project = path.join(tmp, 'project');
    stateFile = path.join(tmp, 'bridge-state.json');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'a.txt'), 'one\n');
    await git.init({ fs, dir: project });
    model = await startScriptedModel();
    oc = await startOpencode({ bin: bin!, directory: project, home: path.join(tmp, 'oc'), modelUrl: model.url });
    client = new OpencodeClient(oc.url);
    gw = await startTestGateway();
    plugin = await gw.token('plugin');
    bridge = newBridge();
    await bridge.start();
    ocSession = (await client.createSession({ title: 'mirror' })).id;
    gwSession = await mirrorOf(ocSession);
  }, 240_000);

  afterAll(async () => {
    if (process.env.BRIDGE_DEBUG && oc) console.log(oc.logs.join('').slice(-4000));
    await bridge?.stop().catch(() => {});
    await oc?.stop().catch(() => {});
    await model?.close().catch(() => {});
    await gw?.stop().catch(() => {});
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('stores what OpenCode recorded of each step: usage, model, agent, finish reason, reasoning, tool title and metadata, OpenCode IDs', async () => {
    await prompt([
      { tool: 'bash', args: { command: 'echo hi', description: 'Say hi' },
        usage: { prompt_tokens: 1200, completion_tokens: 34, prompt_tokens_details: { cached_tokens: 200 } } },
      { reasoning: 'Let me think about it.', text: 'all said',
        usage: { prompt_tokens: 1300, completion_tokens: 56, completion_tokens_details: { reasoning_tokens: 21 } } },
    ]);
    await bridge.settled();
    const steps = (await client.messages(ocSession)).filter((m) => m.info.role === 'assistant');
    expect(steps.length).toBe(2);
    const s = await readSession();
    const execs = s.executions.edges.map((e: any) => e.node);
    for (const m of steps) {
      const e = execs.find((x: any) => x.externalID === m.info.id);
      expect(e, `execution of ${m.info.id}`).toBeTruthy();
      const finish = m.parts.find((p) => p.type === 'step-finish')!;
      // What OpenCode recorded for the step (its own accounting of the provider's usage), in the one meaning:
      // OpenCode keeps the cached input apart from its input, and the reasoning apart from its output.
      const { input = 0, output = 0, reasoning = 0, cache: { read = 0, write = 0 } = {} } = finish.tokens!;
      expect(e.usage).toEqual({
        inputTokens: input + read + write, outputTokens: output + reasoning, reasoningTokens: reasoning,
        cacheReadTokens: read, cacheWriteTokens: write, cacheWrite5mTokens: null, cacheWrite1hTokens: null, cost: finish.cost,
      });
      expect(e.model).toEqual({ providerID: m.info.providerID, modelID: m.info.modelID });
      expect(e.agent).toBe(m.info.agent);
      expect(e.mode).toBe(m.info.mode);
      expect(e.finishReason).toBe(finish.reason);
      // An OpenCode step is one model request: its call, with OpenCode's own times of the message.
      // (Its end: the message's completion, or, when the step-finish came first, its last part's end.)
      const { cacheWrite5mTokens: _5, cacheWrite1hTokens: _1, ...callUsage } = e.usage;
      const ends = [m.info.time.completed!, Math.max(...m.parts.flatMap((p) => [p.time?.end ?? 0, p.state?.time?.end ?? 0]))].map((t) => new Date(t).toISOString());
      expect(e.modelCalls).toEqual([{ index: 0, externalID: m.info.id, model: e.model, startedAt: new Date(m.info.time.created).toISOString(),
        endedAt: expect.toBeOneOf(ends), timesFrom: 'AGENT', finishReason: finish.reason, usage: callUsage }]);
    }
    // The provider's numbers reached OpenCode and came through unchanged.
    const [first, second] = steps.map((m) => execs.find((x: any) => x.externalID === m.info.id));
    expect(first.usage.inputTokens).toBe(1200);
    expect(first.usage.cacheReadTokens).toBe(200);
    expect([second.usage.outputTokens, second.usage.reasoningTokens]).toEqual([56, 21]);
    expect([first.finishReason, second.finishReason]).toEqual(['tool-calls', 'stop']);
    expect(first.model).toEqual({ providerID: 'scripted', modelID: 'scripted' });

    const msgs = s.messages.edges.map((e: any) => e.node);
    const ocAll = await client.messages(ocSession);
    for (const m of msgs) expect(ocAll.some((o) => o.info.id === m.externalID), `message ${m.id} keeps its OpenCode id`).toBe(true);
    const tool = msgs.flatMap((m: any) => m.parts).find((p: any) => p.__typename === 'ToolPart');
    const ocTool = steps[0].parts.find((p) => p.type === 'tool')!;
    expect(tool.externalID).toBe(ocTool.id);
    expect(tool.title).toBe(ocTool.state!.title);
    expect(tool.metadata.exit).toBe(0);
    expect(new Date(tool.startedAt).getTime()).toBe(ocTool.state!.time!.start);
    expect(new Date(tool.endedAt).getTime()).toBe(ocTool.state!.time!.end);
    const reasoning = msgs.flatMap((m: any) => m.parts).find((p: any) => p.__typename === 'ReasoningPart');
    expect(reasoning?.text).toBe('Let me think about it.');
    expect(reasoning.externalID).toBe(steps[1].parts.find((p) => p.type === 'reasoning')!.id);
    // Reasoning is not what the next model request sees: the step's context entry is its text alone.
    const answer = msgs.find((m: any) => m.parts.some((p: any) => p.__typename === 'ReasoningPart'));
    expect(s.context.find((c: any) => c.messageID === answer.id).text).toBe('all said');
  });

  it('retracts a message deleted in OpenCode: a placeholder on the gateway, gone from Session.context', async () => {
    await prompt([{ text: 'a regrettable answer' }]);
    await bridge.settled();
    const victim = (await client.messages(ocSession)).find((m) => m.parts.some((p) => p.text === 'a regrettable answer'))!;
    expect((await readSession()).context.map((c: any) => c.text)).toContain('a regrettable answer');
    // Another OpenCode client deletes it.
    expect(await client.deleteMessage(ocSession, victim.info.id)).toBe(true);
    const m = await until('retraction mirrored', async () => {
      const x = (await readSession()).messages.edges.map((e: any) => e.node).find((n: any) => n.externalID === victim.info.id);
      return x?.retraction ? x : null;
    });
    expect(m.retraction.reason).toBe('deleted in OpenCode');
    const s = await readSession();
    expect(s.context.find((c: any) => c.messageID === m.id).text).toBe('[This message was retracted.]');
    expect(s.context.filter((c: any) => c.text === 'a regrettable answer')).toEqual([]);
    expect(JSON.stringify(m.parts)).not.toContain('a regrettable answer');
    // The retraction is not sent back to OpenCode as a delete of something else, and nothing else changed there.
    await bridge.settled();
    expect((await client.messages(ocSession)).some((x) => x.info.id === victim.info.id)).toBe(false);
  });

  it('routes session mutations to OpenCode: create a child (promptable there), rename, metadata that keeps metadata.opencode, remove', async () => {
    const created = await gw.gql(`mutation($i: CreateSessionInput!) { createSession(input: $i) { __typename ... on Session { id parentID title metadata } ${ERR} } }`,
      { i: { parentID: gwSession, title: 'child from a plugin', metadata: { ticket: 7 } } }, plugin);
    expect(created.errors, JSON.stringify(created.errors)).toBeUndefined();
    const child = created.data.createSession;
    expect(child.__typename, JSON.stringify(created)).toBe('Session');
    expect(child.parentID).toBe(gwSession);
    expect(child.metadata.ticket).toBe(7);
    const ocChild = child.metadata.opencode.sessionID as string;
    const info = await client.getSession(ocChild);
    expect(info.parentID).toBe(ocSession);
    expect(info.title).toBe('child from a plugin');
    // A plugin prompts it in OpenCode: mirrored into the session createSession answered.
    await prompt([{ text: 'child speaks' }], ocChild);
    await bridge.settled();
    const cs = await readSession(child.id);
    expect(cs.executions.edges.map((e: any) => e.node.status)).toEqual(['SUCCEEDED']);
    expect(cs.context.map((c: any) => c.text)).toContain('child speaks');
    const sessions = (await gw.gql(`{ sessions(first: 100) { edges { node { id metadata } } } }`)).data.sessions.edges;
    expect(sessions.filter((e: any) => e.node.metadata?.opencode?.sessionID === ocChild).length).toBe(1);

    // Rename.
    const renamed = await gw.gql(`mutation($i: UpdateSessionInput!) { updateSession(input: $i) { __typename ... on Session { title } ${ERR} } }`,
      { i: { sessionID: child.id, title: 'renamed by a plugin' } }, plugin);
    expect(renamed.data.updateSession.title).toBe('renamed by a plugin');
    await until('renamed in OpenCode', async () => (await client.getSession(ocChild)).title === 'renamed by a plugin');
    await bridge.settled();
    expect((await readSession(child.id)).title).toBe('renamed by a plugin');

    // Metadata: the plugin's object is replaced, the bridge's own key stays; changing it is refused.
    const upd = await gw.gql(`mutation($i: UpdateSessionInput!) { updateSession(input: $i) { __typename ... on Session { metadata } ${ERR} } }`,
      { i: { sessionID: child.id, metadata: { reviewed: true } } }, plugin);
    expect(upd.data.updateSession.metadata).toEqual({ reviewed: true, opencode: child.metadata.opencode });
    const wipe = await gw.gql(`mutation($i: UpdateSessionInput!) { updateSession(input: $i) { __typename ${ERR} } }`,
      { i: { sessionID: child.id, metadata: { opencode: null } } }, plugin);
    expect(wipe.data.updateSession).toMatchObject({ __typename: 'InvalidRequestError', field: 'metadata.opencode' });
    // A read-modify-write of the whole object is fine.
    const rmw = await gw.gql(`mutation($i: UpdateSessionInput!) { updateSession(input: $i) { __typename ... on Session { metadata } ${ERR} } }`,
      { i: { sessionID: child.id, metadata: { ...upd.data.updateSession.metadata, reviewed: false } } }, plugin);
    expect(rmw.data.updateSession.metadata).toEqual({ reviewed: false, opencode: child.metadata.opencode });

    // Remove: gone in OpenCode, and the bridge stops following it, across its own restart too.
    const removed = await gw.gql(`mutation($i: RemoveSessionInput!) { removeSession(input: $i) { __typename ... on SessionRemoved { removedSessionIDs } ${ERR} } }`,
      { i: { sessionID: child.id } }, plugin);
    expect(removed.data.removeSession.removedSessionIDs).toEqual([child.id]);
    await until('removed in OpenCode', async () => {
      try { await client.getSession(ocChild); return false; } catch (e) { return e instanceof OpencodeError && e.status === 404; }
    });
    await bridge.stop();
    logs.length = 0;
    bridge = newBridge();
    await bridge.start();
    await bridge.settled();
    // What the bridge stored (its own state file, read back as a restarted bridge reads it).
    const stored = (await new FileBridgeStore(stateFile).sessions()).find((r) => r.ocSessionID === ocChild);
    expect(stored?.state.removed).toBe(true);
    // Still following the parent: a step there is mirrored; nothing resubscribed the removed child meanwhile.
    await prompt([{ text: 'parent still mirrored' }]);
    await bridge.settled();
    expect((await readSession()).context.map((c: any) => c.text)).toContain('parent still mirrored');
    expect(logs.filter((l) => /subscription .*ended/.test(l)), logs.join('\n')).toEqual([]);
    expect((await gw.gql(`query($id: ID!) { session(id: $id) { id } }`, { id: child.id })).data.session).toBeNull();
  });

  it('compacts through OpenCode\'s summarize and generates through a hidden session, leaving the transcript untouched', async () => {
    const before = await readSession();
    const ocBefore = await client.messages(ocSession);
    const sessionsBefore = (await client.listSessions()).length;

    const gen = await gw.gql(`mutation($i: GenerateInput!) { generate(input: $i) { __typename ... on Generation { text providerID modelID inputTokens outputTokens } ${GEN_ERR} } }`,
      { i: { sessionID: gwSession, prompt: 'What is the answer?\nREPLY:forty-two', model: { providerID: 'scripted', modelID: 'scripted' }, timeoutMs: 120_000 } }, plugin);
    expect(gen.data.generate, JSON.stringify(gen)).toMatchObject({ __typename: 'Generation', text: 'forty-two', providerID: 'scripted', modelID: 'scripted' });
    expect(gen.data.generate.inputTokens).toBeGreaterThan(0);
    const unknown = await gw.gql(`mutation($i: GenerateInput!) { generate(input: $i) { __typename ${GEN_ERR} } }`,
      { i: { sessionID: gwSession, prompt: 'x', model: { providerID: 'scripted', modelID: 'no-such-model' } } }, plugin);
    expect(unknown.data.generate).toMatchObject({ __typename: 'ModelNotFoundError', providerID: 'scripted', modelID: 'no-such-model' });
    await bridge.settled();
    // The hidden session is gone from OpenCode and was never mirrored; the transcript did not move.
    expect((await client.listSessions()).length).toBe(sessionsBefore);
    expect((await client.messages(ocSession)).length).toBe(ocBefore.length);
    const mid = await readSession();
    expect(mid.messages.edges.length).toBe(before.messages.edges.length);
    expect(mid.executions.edges.length).toBe(before.executions.edges.length);
    const all = (await gw.gql(`{ sessions(first: 100) { edges { node { title } } } }`)).data.sessions.edges;
    expect(all.some((e: any) => /gateway generate/.test(e.node.title))).toBe(false);

    const compacted = await gw.gql(`mutation($i: CompactSessionInput!) { compactSession(input: $i) { __typename
        ... on SessionCompacted { compactedMessages summary { id origin parts { ... on TextPart { text } } } session { context { messageID text } } } ${ERR} } }`,
      { i: { sessionID: gwSession, timeoutMs: 120_000 } }, plugin);
    expect(compacted.errors, JSON.stringify(compacted.errors)).toBeUndefined();
    const c = compacted.data.compactSession;
    expect(c.__typename, JSON.stringify(compacted)).toBe('SessionCompacted');
    const ocAfter = await client.messages(ocSession);
    const summary = ocAfter.find((m) => m.info.role === 'assistant' && m.info.summary);
    expect(summary, 'OpenCode wrote its own summary').toBeTruthy();
    const summaryText = summary!.parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n').trim();
    expect(c.summary.parts[0].text).toBe(summaryText);
    expect(c.summary.origin).toBe('HOST');
    expect(c.session.context[0]).toEqual({ messageID: c.summary.id, text: summaryText });
    await bridge.settled();
    // OpenCode's compaction turn is not mirrored as a step or as messages: the gateway holds it as its compaction.
    const after = await readSession();
    expect(after.executions.edges.length).toBe(before.executions.edges.length);
    expect(after.messages.edges.length).toBe(before.messages.edges.length + 1);
  });

  it('restores a shell job the gateway marked LOST while the bridge was away, and reports its real end', async () => {
    const gate = path.join(tmp, 'gate-bridge-away');
    const done = await promptAsync(client, ocSession, [
      { tool: 'bash', args: { command: `while [ ! -f ${gate} ]; do sleep 0.1; done; echo ok`, description: 'wait for the gate' } },
      { text: 'after the gate' },
    ]);
    const job = await until('shell job running on the gateway', async () => {
      const s = await readSession();
      return s.executions.edges.flatMap((e: any) => e.node.jobs.edges.map((j: any) => j.node)).find((j: any) => j.status === 'RUNNING');
    });
    await bridge.stop();
    // The bridge's lease lapses while it is away: the sweep gives its work up (the job reads LOST).
    await gw.sql`UPDATE hosts SET lease_expires_at = now() - interval '1 second' WHERE id = ${bridge.hostID}`;
    await sweepExpiredLeases(gw.sql);
    const jobQ = `query($id: ID!) { job(id: $id) { status restored exitCode } }`;
    // (A sweep of the gateway's own may hold the session at that moment: ours then skips it, and that one marks it.)
    await expect.poll(async () => (await gw.gql(jobQ, { id: job.id })).data.job.status, { timeout: 15_000 }).toBe('LOST');
    bridge = newBridge();
    await bridge.start();
    // OpenCode still runs the shell: taken back.
    await until('job restored', async () => (await gw.gql(jobQ, { id: job.id })).data.job.status === 'RUNNING');
    expect((await gw.gql(jobQ, { id: job.id })).data.job.restored).toBe(true);
    fs.writeFileSync(gate, '');
    await done();
    await until('real end reported', async () => (await gw.gql(jobQ, { id: job.id })).data.job.status === 'COMPLETED');
    expect((await gw.gql(jobQ, { id: job.id })).data.job).toEqual({ status: 'COMPLETED', restored: true, exitCode: 0 });
  });

  it('marks a shell job LOST (never CANCELLED) when OpenCode dies mid-shell', async () => {
    const gate = path.join(tmp, 'gate-kill');
    const done = await promptAsync(client, ocSession, [
      { tool: 'bash', args: { command: `while [ ! -f ${gate} ]; do sleep 0.1; done; echo ok`, description: 'wait for the gate' } },
      { text: 'never reached' },
    ]);
    void done;
    const job = await until('shell job running on the gateway', async () => {
      const s = await readSession();
      return s.executions.edges.flatMap((e: any) => e.node.jobs.edges.map((j: any) => j.node)).find((j: any) => j.status === 'RUNNING');
    });
    oc.process.kill('SIGKILL');
    await new Promise<void>((r) => (oc.process.exitCode !== null || oc.process.signalCode !== null ? r() : oc.process.once('exit', () => r())));
    await oc.restart();
    try {
      const s = await until('job end decided after OpenCode came back', async () => {
        const x = await readSession();
        const j = x.executions.edges.flatMap((e: any) => e.node.jobs.edges.map((k: any) => k.node)).find((k: any) => k.id === job.id);
        const e = x.executions.edges.map((y: any) => y.node).find((y: any) => y.jobs.edges.some((k: any) => k.node.id === job.id));
        return j.status !== 'RUNNING' && e.status !== 'RUNNING' ? x : null;
      }, 120_000);
      const e = s.executions.edges.map((x: any) => x.node).find((x: any) => x.jobs.edges.some((k: any) => k.node.id === job.id));
      expect(e.jobs.edges[0].node).toMatchObject({ id: job.id, status: 'LOST', exitCode: null });
      expect(e.status).toBe('INTERRUPTED');
      // And LOST is the truth: the shell outlived OpenCode (its own process group) and still runs.
      expect(processesWith(gate).length).toBeGreaterThan(0);
    } finally {
      fs.writeFileSync(gate, ''); // the orphaned shell (its own process group) ends now
    }
  });
});
