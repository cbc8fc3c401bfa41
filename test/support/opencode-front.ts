// A real OpenCode (scripted local model, a Git project) behind the admission proxy, with its gateway: the
// fixture of the tests that talk to OpenCode only through the proxy (test/opencode-proxy*.test.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import git from 'isomorphic-git';
import { startTestGateway, type TestGateway } from '../harness.js';
import { OpencodeClient } from '../../bridge/opencode/client.js';
import { FileBridgeStore } from '../../bridge/opencode/store.js';
import { startOpencode } from '../../bridge/opencode/launch.js';
import { startOpencodeFront, type FrontOptions, type OpencodeFront } from '../../bridge/opencode/serve.js';
import { startScriptedModel, type ScriptedModel } from '../../bridge/opencode/scripted-model.js';

export interface FrontedOpencode {
  gw: TestGateway;
  model: ScriptedModel;
  front: OpencodeFront;
  /** OpenCode's API through the proxy, with the proxy password. */
  client: OpencodeClient;
  tmp: string;
  /** The project OpenCode works in: a Git repository holding `a.txt`. */
  project: string;
  stop(): Promise<void>;
}

export async function startFrontedOpencode(o: { bin: string; password: string; front?: Partial<FrontOptions> }): Promise<FrontedOpencode> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oc-front-'));
  const project = path.join(tmp, 'project');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'a.txt'), 'one\n');
  await git.init({ fs, dir: project });
  const model = await startScriptedModel();
  const gw = await startTestGateway();
  let front: OpencodeFront | null = null;
  const stop = async () => {
    await front?.stop().catch(() => {});
    await model.close().catch(() => {});
    await gw.stop().catch(() => {});
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  try {
    front = await startOpencodeFront({
      launch: (extra) => startOpencode({ bin: o.bin, directory: project, home: path.join(tmp, 'oc'), modelUrl: model.url, ...extra }),
      password: o.password,
      gatewayUrl: gw.url, hostToken: gw.admin, store: new FileBridgeStore(path.join(tmp, 'bridge.json')), leaseMs: 10_000,
      ...o.front,
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { gw, model, front, client: new OpencodeClient(front.url, { password: o.password }), tmp, project, stop };
}
