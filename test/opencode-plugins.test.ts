// The example OpenCode plugins (examples/opencode-plugins) loaded by the real OpenCode binary (offline, the
// scripted model), beside a real gateway and the bridge: each loads without OpenCode's "failed to load plugin"
// line and does what its README says, for its own sessions only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import git from 'isomorphic-git';
import { PROJECT_DIR } from '../db/index.js';
import { startTestGateway, type TestGateway } from './harness.js';
import { begin, registerHost, settle } from './fixtures.js';
import { OpencodeBridge } from '../bridge/opencode/bridge.js';
import { OpencodeClient } from '../bridge/opencode/client.js';
import { FileBridgeStore } from '../bridge/opencode/store.js';
import { findOpencodeBinary, startOpencode, type OpencodeServer } from '../bridge/opencode/launch.js';
import { startOpencodeFront, type OpencodeFront } from '../bridge/opencode/serve.js';
import { promptAsync, until } from './support/opencode-kit.js';
import { startScriptedModel, type ScriptedModel, type ScriptStep } from '../bridge/opencode/scripted-model.js';

const bin = findOpencodeBinary();
const PLUGINS = ['gateway-review.js', 'gateway-orchestrator.js', 'gateway-redaction.js'].map((f) => path.join(PROJECT_DIR, 'examples', 'opencode-plugins', f));
const SECRET = 'sk-proj-Zq4Lr8Vt2Nx6Kc0Wm3Hb7Pd1Ys5Fg9Aj';

interface Report { plugin: string; event: string; [k: string]: any }

it('finds the opencode binary installed from npm (opencode-ai)', () => { expect(bin).toBeTruthy(); });

describe.skipIf(!bin)('the example OpenCode plugins in a real OpenCode', { timeout: 240_000 }, () => {
  let g: TestGateway;
  let model: ScriptedModel;
  let oc: OpencodeServer;
  let client: OpencodeClient;
  let bridge: OpencodeBridge;
  let tmp: string;
  let project: string;
  let reportFile: string;
  let root: string; // the OpenCode session the review and redaction tests prompt

  const reports = (): Report[] => fs.existsSync(reportFile)
    ? fs.readFileSync(reportFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  const prompt = async (session: string, steps: ScriptStep[], intro = 'do it') => (await promptAsync(client, session, steps, intro))();
  /** The gateway session the bridge mirrored an OpenCode session into. */
  const gatewaySession = async (ocID: string) => {
    await bridge.settled();
    const r = await g.gql(`{ sessions(first: 100) { edges { node { id status metadata executions(first: 50) { edges { node { id sequence status finishReason } } } } } } }`);
    return r.data.sessions.edges.map((e: any) => e.node).find((s: any) => s.metadata?.opencode?.sessionID === ocID);
  };
  /**
   * A session that looks like a bridged OpenCode session of ANOTHER OpenCode (another host, another
   * directory, an OpenCode session ID this OpenCode does not know), with a finished step: the plugins
   * must leave it alone. Settled before the step the test then waits for, so the plugins (which handle
   * settlements one at a time, in the log's order) have dealt with it by the time they report that one.
   */
  async function foreignSettlement(opts: { parent?: boolean } = {}) {
    const host = await registerHost(g);
    const mk = async (title: string, parentID?: string, ocParent?: string) => {
      const r = await g.gql(`mutation($i: CreateSessionInput!) { createSession(input: $i) { __typename ... on Session { id } } }`, {
        i: { title, directory: '/elsewhere/demo', hostID: host.hostID, parentID, hostMetadata: { opencode: { server: 'http://127.0.0.1:1', sessionID: `ses_foreign${Math.random().toString(36).slice(2, 12)}`, parentID: ocParent ?? null } } },
      });
      return r.data.createSession.id as string;
    };
    const parent = await mk('foreign parent');
    const s = opts.parent ? await mk('foreign worker', parent, 'ses_foreignparent') : parent;
    const e = await begin(g, host, s);
    await settle(g, host, e.id, 'SUCCEEDED', { finishReason: 'stop' });
    return s;
  }

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oc-plugins-'));
    project = path.join(tmp, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'a.txt'), 'one\ntwo\n');
    await git.init({ fs, dir: project });
    reportFile = path.join(tmp, 'plugins.jsonl');
    model = await startScriptedModel();
    g = await startTestGateway();
    const pluginToken = await g.token('plugin');
    oc = await startOpencode({
      bin: bin!, directory: project, home: path.join(tmp, 'oc'), modelUrl: model.url, plugins: PLUGINS, logLevel: 'INFO',
      // How a user passes the token: OpenCode's environment.
      env: { GATEWAY_URL: g.url, GATEWAY_TOKEN: pluginToken, GATEWAY_PLUGIN_LOG: reportFile },
    });
    client = new OpencodeClient(oc.url);
    bridge = new OpencodeBridge({
      opencodeUrl: oc.url, gatewayUrl: g.url, hostToken: g.admin, store: new FileBridgeStore(path.join(tmp, 'bridge-state.json')),
      opencodeDataDir: oc.dataDir, leaseMs: 10_000, log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[bridge] ${m}`); },
    });
    await bridge.start();
  }, 600_000); // the first plugin load installs OpenCode's plugin package into its config dir

  afterAll(async () => {
    if (process.env.BRIDGE_DEBUG && oc) console.log(oc.logs.join('').slice(-6000));
    await bridge?.stop().catch(() => {});
    await oc?.stop().catch(() => {});
    await model?.close().catch(() => {});
    await g?.stop().catch(() => {});
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('loads each plugin with no "failed to load plugin" line', async () => {
    // Plugins load with the directory's instance, on its first request; GET /config answers once they have.
    const config = await (await fetch(`${oc.url}/config`, { headers: { 'x-opencode-directory': project } })).json() as { plugin: string[] };
    expect(config.plugin).toEqual(PLUGINS.map((p) => `file://${p}`));
    root = (await client.createSession({ title: 'plugin author' })).id;
    const logs = oc.logs.join('');
    expect(logs).not.toMatch(/failed to load plugin/);
    expect(logs).not.toMatch(/level=ERROR/);
  });

  it('review: receives the changeset of each execution of its own session as it settles, and nothing of others', async () => {
    const foreign = await foreignSettlement();
    await prompt(root, [
      { tool: 'write', args: { filePath: path.join(project, 'b.txt'), content: 'bee\n' } },
      { text: 'wrote b.txt' },
    ]);
    const mirrored = await gatewaySession(root);
    const executions = mirrored.executions.edges.map((e: any) => e.node);
    expect(executions.length).toBe(2);
    const reviews = await until('a review of each execution', async () => {
      const r = reports().filter((x) => x.plugin === 'gateway-review');
      return r.length >= 2 ? r : null;
    });
    expect(reviews.map((r) => r.executionID).sort()).toEqual(executions.map((e: any) => e.id).sort());
    expect(reviews.every((r) => r.opencodeSessionID === root && r.sessionID === mirrored.id)).toBe(true);
    const first = reviews.find((r) => r.sequence === 1)!;
    expect(first.changeset.files).toMatchObject([{ path: 'b.txt', status: 'ADDED', additions: 1, patch: expect.stringContaining('+bee') }]);
    expect(reviews.find((r) => r.sequence === 2)!.changeset.files).toEqual([]);
    expect(reports().some((r) => r.sessionID === foreign)).toBe(false);
    // What the README says a user sees: a line in OpenCode's log.
    await until('the review line in OpenCode\'s log', async () => oc.logs.join('').includes(`message="execution ${first.executionID} (step 1 of ${root}) SUCCEEDED: 1 files`));
  });

  it('redaction: corrects a secret the model wrote, so the next model request no longer contains it', async () => {
    // (Encoded in the script, which travels in the user's prompt: only the model's answer holds the secret.)
    await prompt(root, [{ text64: Buffer.from(`Use this key: ${SECRET} (keep it safe)`).toString('base64') }], 'what key?');
    const redacted = await until('the redaction', async () => reports().find((r) => r.plugin === 'gateway-redaction' && r.event === 'redacted'));
    // The bridge applies the correction to OpenCode: its stored text is corrected in place.
    await until('the corrected text in OpenCode', async () => {
      const texts = (await client.messages(root)).flatMap((m) => m.parts).filter((p: any) => p.type === 'text').map((p: any) => p.text as string);
      return !texts.some((t) => t.includes(SECRET)) && texts.some((t) => t.includes('Use this key: [REDACTED]'));
    });
    const context = await g.gql(`query($id: ID!) { session(id: $id) { context { text } } }`, { id: redacted.sessionID });
    expect(JSON.stringify(context.data.session.context)).not.toContain(SECRET);
    const before = model.bodies.length;
    await prompt(root, [{ text: 'noted' }], 'go on');
    const next = model.bodies.slice(before).filter((b) => b.includes('go on'));
    expect(next.length).toBeGreaterThan(0);
    for (const b of next) {
      expect(b).not.toContain(SECRET);
      expect(b).toContain('[REDACTED]');
    }
  });

  it('orchestrator: seals its own worker once its turn is over and reacts to the answer; never another\'s', async () => {
    const foreign = await foreignSettlement({ parent: true });
    const worker = (await client.createSession({ title: 'worker', parentID: root })).id;
    await prompt(worker, [{ tool: 'write', args: { filePath: path.join(project, 'w.txt'), content: 'worker\n' } }, { text: 'worker done' }]);
    const seals = await until('the worker\'s seal', async () => {
      const r = reports().filter((x) => x.plugin === 'gateway-orchestrator');
      return r.some((x) => x.event.startsWith('workspace-')) ? r : null;
    });
    const mirrored = await gatewaySession(worker);
    // Attached to an OpenCode it does not front, the bridge cannot prove that no other client prompts the
    // worker: SealUnsupportedError(ADMISSION_NOT_EXCLUSIVE), and the plugin keeps the workspace.
    expect(seals.map((s) => [s.event, s.opencodeSessionID, s.outcome?._tag ?? s.reason])).toEqual([
      ['seal', worker, 'SealUnsupportedError'],
      ['workspace-kept', worker, 'ADMISSION_NOT_EXCLUSIVE'],
    ]);
    expect(seals[0].sessionID).toBe(mirrored.id);
    expect(mirrored.status).toBe('SEALED');
    const statuses = await g.gql(`query($a: ID!, $b: ID!) { foreign: session(id: $a) { status } root: session(id: $b) { status } }`,
      { a: foreign, b: (await gatewaySession(root)).id });
    expect(statuses.data).toEqual({ foreign: { status: 'IDLE' }, root: { status: 'IDLE' } });
    expect(oc.logs.join('')).not.toMatch(/level=ERROR/);
  });
});

describe.skipIf(!bin)('the orchestrator example with OpenCode behind the admission proxy (bridge --serve)', { timeout: 240_000 }, () => {
  let g: TestGateway;
  let model: ScriptedModel;
  let front: OpencodeFront;
  let client: OpencodeClient;
  let tmp: string;
  let reportFile: string;
  const PASSWORD = 'plugin-author-proxy-password';

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oc-plugins-front-'));
    const project = path.join(tmp, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'a.txt'), 'one\n');
    await git.init({ fs, dir: project });
    reportFile = path.join(tmp, 'plugins.jsonl');
    model = await startScriptedModel();
    g = await startTestGateway();
    const pluginToken = await g.token('plugin');
    front = await startOpencodeFront({
      // The bridge adds its gateway-fence plugin; the orchestrator is loaded beside it.
      launch: (extra) => startOpencode({
        bin: bin!, directory: project, home: path.join(tmp, 'oc'), modelUrl: model.url, ...extra,
        plugins: [...(extra.plugins ?? []), PLUGINS[1]],
        // A short seal timeout: a first answer may be SealTimeoutError (the plugin calls again).
        env: { ...extra.env, GATEWAY_URL: g.url, GATEWAY_TOKEN: pluginToken, GATEWAY_PLUGIN_LOG: reportFile, GATEWAY_SEAL_TIMEOUT_MS: '300', GATEWAY_SEAL_ATTEMPTS: '100' },
      }),
      password: PASSWORD, gatewayUrl: g.url, hostToken: g.admin, store: new FileBridgeStore(path.join(tmp, 'bridge.json')), leaseMs: 10_000,
      log: (m) => { if (process.env.BRIDGE_DEBUG) console.log(`[front] ${m}`); },
    });
    client = new OpencodeClient(front.url, { password: PASSWORD });
  }, 600_000);

  afterAll(async () => {
    if (process.env.BRIDGE_DEBUG && front) console.log(front.opencode.logs.join('').slice(-6000));
    await front?.stop().catch(() => {});
    await model?.close().catch(() => {});
    await g?.stop().catch(() => {});
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('seals its own worker: SessionSealed (after any SealTimeoutError), and frees the workspace', async () => {
    const root = (await client.createSession({ title: 'orchestrator' })).id;
    const worker = (await client.createSession({ title: 'worker', parentID: root })).id;
    await (await promptAsync(client, worker, [{ tool: 'bash', args: { command: 'echo hi > w.txt', description: 'write' } }, { text: 'done' }]))();
    const reports = await until('the worker\'s seal', async () => {
      const r = fs.existsSync(reportFile) ? fs.readFileSync(reportFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Report) : [];
      return r.some((x) => x.event.startsWith('workspace-')) ? r : null;
    }, 120_000);
    const seals = reports.filter((r) => r.event === 'seal');
    expect(seals.at(-1)!.outcome._tag).toBe('SessionSealed');
    for (const s of seals.slice(0, -1)) expect(s.outcome).toMatchObject({ _tag: 'SealTimeoutError', code: 504 });
    expect(seals.every((s) => s.opencodeSessionID === worker)).toBe(true);
    expect(reports.at(-1)).toMatchObject({ event: 'workspace-free', opencodeSessionID: worker });
    const sessionID = front.bridge.gatewaySessionOf(worker)!;
    expect((await g.gql(`query($id: ID!) { session(id: $id) { status } }`, { id: sessionID })).data.session.status).toBe('SEALED');
    // The fence holds: OpenCode refuses a new prompt in the sealed worker (the proxy's 409).
    const r = await fetch(`${front.url}/session/${worker}/prompt_async`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`opencode:${PASSWORD}`).toString('base64')}` },
      body: JSON.stringify({ parts: [{ type: 'text', text: 'more' }] }),
    });
    expect(r.status).toBe(409);
    expect(front.opencode.logs.join('')).not.toMatch(/failed to load plugin/);
  });
});
