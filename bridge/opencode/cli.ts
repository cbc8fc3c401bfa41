// `GATEWAY_TOKEN=… gateway bridge opencode --url http://127.0.0.1:N [--gateway URL] [--state FILE] [--opencode-data DIR]`
// `GATEWAY_TOKEN=… OPENCODE_PROXY_PASSWORD=… gateway bridge opencode --serve [--directory DIR] [--listen HOST:PORT] [--gateway URL] …`
// `gateway bridge opencode --url … | --serve --listen … [--state FILE] --import-state-from <gateway database URL>` (once, when upgrading)
//
// Tokens and passwords come from the environment or from files only their owner can read (cli/credentials.ts):
// a command line is read by every user of the machine.
//
// The bridge's state is a file of its own (--state, default bridge-opencode-<server>.json in the state folder of
// server/data-dir.ts: the checkout's .data, or the user's data folder when installed); it
// never opens the gateway's database (DATABASE_URL is ignored).
//
// One process: SIGTERM/SIGINT stop it cleanly (the proxy, the
// bridge, the private OpenCode it started, the store), exit code 0; a second signal exits at once.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import path from 'node:path';
import { OpencodeBridge } from './bridge.js';
import { findOpencodeBinary, startOpencode } from './launch.js';
import { startOpencodeFront } from './serve.js';
import { readLegacyState } from './legacy-state.js';
import { FileBridgeStore, type BridgeStore } from './store.js';
import { PROJECT_DIR } from '../../db/index.js';
import { stateDir } from '../../server/data-dir.js';
import { PermissionError } from '../common/private-files.js';
import { HOST_TOKEN, PLUGIN_TOKEN, readSecret, refuseSecretArguments } from '../../cli/credentials.js';
import { OPENCODE_PASSWORD, PROXY_PASSWORD, commandOf, helpOf, optionsOf } from '../../cli/commands.js';

/** `gateway bridge opencode --help`, from the command's declaration (cli/commands.ts). */
const usage = () => helpOf(commandOf('bridge opencode'));

export async function runBridgeCommand(args: string[]): Promise<void> {
  const [target, ...rest] = args;
  if (target === '--help' || target === '-h' || (target === 'opencode' && rest.some((a) => a === '--help' || a === '-h'))) {
    process.stdout.write(usage());
    return;
  }
  if (target !== 'opencode') throw new Error(usage());
  const { values } = parseArgs({ args: rest, options: optionsOf('bridge opencode') });
  refuseSecretArguments(values, HOST_TOKEN, PLUGIN_TOKEN, PROXY_PASSWORD, OPENCODE_PASSWORD);
  if (!values.serve && !values.url) throw new Error(`--url (the OpenCode server) or --serve is required\n${usage()}`);
  const log = (m: string) => console.error(`[bridge] ${m}`);
  // Not in the directory the command runs from (a user's project): the checkout's .data, or the user's data folder.
  const stateFile = (server: string) => values.state ?? path.join(stateDir(PROJECT_DIR), `bridge-opencode-${Buffer.from(server).toString('base64url')}.json`);
  if (values['import-state-from']) {
    const databaseUrl = withoutPassword(values['import-state-from']);
    const server = values.serve ? `http://${parseListen(values.listen ?? process.env.OPENCODE_PROXY_LISTEN ?? '127.0.0.1:4096').join(':')}` : values.url!.replace(/\/+$/, '');
    const store = new FileBridgeStore(stateFile(server));
    if (!store.empty) throw new Error(`${store.file} already holds a bridge state: not overwritten`);
    const data = await readLegacyState(databaseUrl, server);
    store.replace(data);
    console.log(`imported the state of OpenCode ${server} (host ${data.hostID}, ${Object.keys(data.sessions).length} sessions, ${Object.keys(data.messages).length} messages) into ${store.file}`);
    return;
  }
  const token = readSecret(values, HOST_TOKEN, { required: true });
  const pluginToken = readSecret(values, PLUGIN_TOKEN) ?? token;
  const gatewayUrl = values.gateway ?? process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql';
  const leaseMs = values['lease-ms'] ? Number(values['lease-ms']) : undefined;
  if (leaseMs !== undefined && !Number.isInteger(leaseMs)) throw new Error('--lease-ms must be an integer');

  let stop: () => Promise<void>;
  let store: BridgeStore;
  const storeFor = async (server: string) => {
    const file = stateFile(server);
    if (!fs.existsSync(file) && process.env.DATABASE_URL) {
      log(`no state file ${file} yet: a first start. If an earlier version of this bridge kept its state in the gateway's database, `
        + 'stop and import it first (--import-state-from <that database URL>), or it registers as a new host');
    }
    return new FileBridgeStore(file);
  };

  if (values.serve) {
    const password = readSecret(values, PROXY_PASSWORD, { required: true });
    const bin = findOpencodeBinary();
    if (!bin) throw new Error('no OpenCode binary: set OPENCODE_BIN or install opencode-ai');
    const [host, port] = parseListen(values.listen ?? process.env.OPENCODE_PROXY_LISTEN ?? '127.0.0.1:4096');
    const directory = path.resolve(values.directory ?? process.cwd());
    // The bridge's state is keyed by what the clients see: the proxy URL (the private port changes every start).
    store = await storeFor(`http://${host}:${port}`);
    const front = await retrying(log, () => startOpencodeFront({
      launch: (extra) => startOpencode({ bin, directory, isolated: false, ...extra }),
      password, host, port, maxBodyBytes: values['max-body-bytes'] ? Number(values['max-body-bytes']) : undefined,
      gatewayUrl, hostToken: token, pluginToken, store, leaseMs, fenceDir: values['fence-dir'], log,
    }));
    console.log(`OpenCode (${directory}) behind the gateway's admission proxy: ${front.url} (user "opencode", the proxy password); host ${front.bridge.hostID}`);
    stop = () => front.stop();
  } else {
    const server = values.url!.replace(/\/+$/, '');
    store = await storeFor(server);
    const bridge = new OpencodeBridge({
      opencodeUrl: server,
      opencodePassword: readSecret(values, OPENCODE_PASSWORD),
      gatewayUrl, hostToken: token, pluginToken, store,
      opencodeDataDir: values['opencode-data'], fenceDir: values['fence-dir'], leaseMs, log,
    });
    await retrying(log, () => bridge.start());
    console.log(`bridging OpenCode ${server} as host ${bridge.hostID}`);
    stop = () => bridge.stop();
  }

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) { log(`${signal} again: exiting now`); process.exit(130); }
    stopping = true;
    log(`${signal}: stopping`);
    const force = setTimeout(() => { log('stop took over 15 s: exiting'); process.exit(1); }, 15_000);
    force.unref();
    void (async () => {
      await stop().catch((e) => log(`stop: ${e?.message ?? e}`));
      await store.close().catch((e) => log(`store: ${e?.message ?? e}`));
      process.exit(0);
    })();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // Work still in flight when a stop begins ends with "bridge stopped": expected then, logged, never a crash.
  process.on('unhandledRejection', (e: any) => {
    if (stopping) return log(`while stopping: ${e?.message ?? e}`);
    log(`unhandled: ${e?.stack ?? e}`);
    process.exit(1); // as Node would: a supervisor restarts it
  });
}

/** A database URL for --import-state-from: its password would be on the command line, so it must come from PGPASSWORD. */
function withoutPassword(url: string): string {
  let u: URL;
  try { u = new URL(url); } catch { throw new Error('--import-state-from must be a database URL (postgres://user@host:port/database)'); }
  if (u.password || u.searchParams.has('password')) {
    throw new Error('--import-state-from: leave the password out of the URL (every user of this machine can read a command line) and set PGPASSWORD');
  }
  return url;
}

function parseListen(v: string): [string, number] {
  const m = /^(?:([^:]+):)?(\d{1,5})$/.exec(v);
  if (!m || Number(m[2]) > 65535) throw new Error(`--listen must be [host:]port, not ${v}`);
  return [m[1] ?? '127.0.0.1', Number(m[2])];
}

/**
 * Starting fails while the gateway (or OpenCode) is not there yet: try again with backoff (1 s … 30 s). A
 * folder or file others can change is no such failure: it stops the command, its message naming the fix.
 */
async function retrying<T>(log: (m: string) => void, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try { return await fn(); } catch (e: any) {
      if (e instanceof PermissionError) throw e;
      const wait = Math.min(1_000 * 2 ** attempt, 30_000);
      log(`start failed (${e?.message ?? e}); retrying in ${wait / 1000} s`);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
