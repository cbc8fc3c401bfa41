// The gateway fronting OpenCode: one process runs a private `opencode serve` (loopback,
// random port, a random OPENCODE_SERVER_PASSWORD only this process knows), the bridge (a host that
// declares exclusive admission) and the admission proxy that every OpenCode client talks to.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpencodeBridge, type BridgeOptions } from './bridge.js';
import { OpencodeClient, OpencodeError } from './client.js';
import { OpencodeProxy, type AdmitAnswer, type ProxyOptions } from './proxy.js';
import { basicAuth, type OpencodeServer, type StartOpencodeOptions } from './launch.js';
import { AdmitWorkDocument, GatewayClient, type AdmitWorkMutation } from '../../client/index.js';

export const FENCE_PLUGIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'plugin', 'gateway-fence.js');

export interface FrontOptions extends Omit<BridgeOptions, 'opencodeUrl' | 'opencodePassword' | 'admission' | 'opencodeDataDir'> {
  /** Starts the private OpenCode with these extras (launch.ts startOpencode, isolated or the user's). */
  launch: (extra: Pick<StartOpencodeOptions, 'password' | 'plugins' | 'env'>) => Promise<OpencodeServer>;
  /** What OpenCode's clients send as their password (HTTP basic auth, user "opencode"). */
  password: string;
  host?: string;
  port?: number;
  maxBodyBytes?: number;
  /** Sees every request the proxy forwards to OpenCode (ProxyOptions.onForward). */
  onForward?: ProxyOptions['onForward'];
}

export interface OpencodeFront {
  /** The URL OpenCode's clients use (with the password). */
  url: string;
  proxy: OpencodeProxy;
  bridge: OpencodeBridge;
  opencode: OpencodeServer;
  stop(): Promise<void>;
}

export async function startOpencodeFront(o: FrontOptions): Promise<OpencodeFront> {
  if (!o.password) throw new Error('the admission proxy needs a password for OpenCode\'s clients');
  const log = o.log ?? (() => {});
  const upstreamPassword = randomBytes(32).toString('base64url');
  const fenceDir = o.fenceDir;
  const opencode = await o.launch({
    password: upstreamPassword,
    plugins: [FENCE_PLUGIN],
    env: fenceDir ? { OPENCODE_GATEWAY_FENCE_DIR: fenceDir } : {},
  });
  const oc = new OpencodeClient(opencode.url, { password: upstreamPassword });
  let proxy!: OpencodeProxy;
  let bridge: OpencodeBridge | null = null;
  const known = new Set<string>();
  // Admissions through the typed client with the host's token, each bounded (15 s) and never retried:
  // an OpenCode client waiting for its request gets a clear 503 instead.
  const admissions = new GatewayClient({ url: o.gatewayUrl, token: o.hostToken, fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(15_000) }) });
  try {
    bridge = new OpencodeBridge({
      ...o,
      opencodeUrl: opencode.url,
      opencodePassword: upstreamPassword,
      opencodeDataDir: opencode.dataDir,
      fenceDir: fenceDir ?? path.join(opencode.dataDir, 'opencode', 'gateway-fence'),
      admission: { quiesce: (id, abort) => proxy.quiesce(id, abort) },
    });
    const b = bridge;
    const admit = async (ocSessionID: string, route: string): Promise<AdmitAnswer> => {
      let sessionID = b.gatewaySessionOf(ocSessionID);
      if (!sessionID) {
        // Created a moment ago (e.g. POST /session through this proxy): mirror what OpenCode has recorded.
        await Promise.race([b.settled().catch(() => {}), new Promise((r) => setTimeout(r, 15_000).unref())]);
        sessionID = b.gatewaySessionOf(ocSessionID);
      }
      if (!sessionID || !b.hostID) {
        return { ok: false, status: 503, name: 'SessionNotMirroredError', message: `Session ${ocSessionID} is not mirrored by the gateway yet, so it cannot be admitted; retry shortly.` };
      }
      let r: AdmitWorkMutation['admitWork'];
      try {
        r = (await admissions.request(AdmitWorkDocument, { input: { sessionID, hostID: b.hostID, route } })).admitWork;
      } catch (e: any) {
        // Unreachable, slow (15 s), or an HTTP/GraphQL error: the client retries; nothing was forwarded.
        log(`admission of ${ocSessionID}: ${e?.message ?? e}`);
        return { ok: false, status: 503, name: 'GatewayUnavailableError', message: `The gateway did not answer the admission (${e?.message ?? e}); retry shortly.` };
      }
      if (r.__typename === 'Admission') return { ok: true };
      if (r.__typename === 'SessionSealedError') {
        return { ok: false, status: 409, name: 'SessionSealedError', message: `Session ${ocSessionID} is sealed by the gateway (${sessionID}): it admits no new work.`, data: { gatewaySessionID: sessionID } };
      }
      if (r.__typename === 'SessionNotFoundError') {
        return { ok: false, status: 404, name: 'NotFoundError', message: `Session ${ocSessionID} was removed on the gateway.`, data: { gatewaySessionID: sessionID } };
      }
      log(`admission of ${ocSessionID}: ${r.__typename}: ${r.message}`);
      return { ok: false, status: 503, name: 'GatewayUnavailableError', message: `The gateway refused the admission (${r.__typename}); retry shortly.` };
    };
    const exists = async (ocSessionID: string) => {
      if (known.has(ocSessionID) || b.gatewaySessionOf(ocSessionID)) return true;
      try {
        await oc.getSession(ocSessionID);
        known.add(ocSessionID);
        return true;
      } catch (e) {
        return !(e instanceof OpencodeError && (e.status === 404 || e.status === 400)); // unsure: admission decides
      }
    };
    proxy = new OpencodeProxy({
      upstream: opencode.url, upstreamPassword, password: o.password, admit, exists,
      host: o.host, port: o.port, maxBodyBytes: o.maxBodyBytes, onForward: o.onForward, log,
    });
    await bridge.start();
    const url = await proxy.start();
    await checkFencePlugin(opencode.url, upstreamPassword, log);
    let stopping: Promise<void> | null = null;
    return {
      url, proxy, bridge, opencode,
      stop: () => (stopping ??= (async () => {
        await proxy.stop().catch((e) => log(`proxy stop: ${e?.message ?? e}`));
        await b.stop().catch((e) => log(`bridge stop: ${e?.message ?? e}`));
        await opencode.stop().catch((e) => log(`opencode stop: ${e?.message ?? e}`));
      })()),
    };
  } catch (e) {
    await proxy?.stop().catch(() => {});
    await bridge?.stop().catch(() => {});
    await opencode.stop().catch(() => {});
    throw e;
  }
}

/**
 * The fence plugin closes the one window the proxy cannot see into: a prompt admitted just before the
 * seal whose turn OpenCode starts after the abort (prompt_async answers before its turn begins). Its
 * hooks refuse the model call and every tool of a fenced session. Plugins load per directory; this
 * loads the server's own directory and checks the plugin is there.
 */
async function checkFencePlugin(url: string, password: string, log: (m: string) => void) {
  try {
    const r = await fetch(`${url}/config`, { headers: { authorization: basicAuth('opencode', password) }, signal: AbortSignal.timeout(30_000) });
    const cfg: any = await r.json();
    const loaded = (cfg?.plugin ?? []).some((p: unknown) => String(p).includes('gateway-fence'));
    if (!loaded) log('warning: the gateway-fence plugin is not loaded in OpenCode; a prompt admitted just before a seal could start its turn after the abort');
  } catch (e: any) {
    log(`warning: could not check the gateway-fence plugin: ${e?.message ?? e}`);
  }
}
