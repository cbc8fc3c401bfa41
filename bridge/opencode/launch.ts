// Starts a real OpenCode server isolated in a temporary folder (XDG dirs and HOME), offline (no
// auto-update, no models.dev fetch, no LSP downloads), with a custom OpenAI-compatible provider
// pointing at a local model (see scripted-model.ts). Used by the end-to-end test and for experiments.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

/** The OpenCode binary: $OPENCODE_BIN, or the platform package installed with `opencode-ai`. */
export function findOpencodeBinary(): string | null {
  if (process.env.OPENCODE_BIN && fs.existsSync(process.env.OPENCODE_BIN)) return process.env.OPENCODE_BIN;
  const require = createRequire(import.meta.url);
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const os = process.platform === 'darwin' ? 'darwin' : process.platform === 'win32' ? 'windows' : 'linux';
  const exe = os === 'windows' ? 'opencode.exe' : 'opencode';
  for (const pkg of [`opencode-${os}-${arch}`, `opencode-${os}-${arch}-baseline`, `opencode-${os}-${arch}-musl`]) {
    try {
      const dir = path.dirname(require.resolve(`${pkg}/package.json`));
      const bin = path.join(dir, 'bin', exe);
      if (fs.existsSync(bin)) return bin;
    } catch { /* not installed */ }
  }
  try {
    const dir = path.dirname(require.resolve('opencode-ai/package.json'));
    for (const name of ['opencode.exe', 'opencode']) {
      const bin = path.join(dir, 'bin', name);
      if (fs.existsSync(bin) && fs.statSync(bin).size > 1_000_000) return bin; // the real binary, not the JS launcher
    }
  } catch { /* not installed */ }
  return null;
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

/**
 * The users (uids) of the sockets listening on a TCP port where a connection to 127.0.0.1 would land (on
 * 127.0.0.1, or on every address), from the kernel's socket tables; null where there are none to read (not
 * Linux). A port picked free is free again for a moment before OpenCode binds it: another user's process
 * could take it then, and would receive the password meant for OpenCode.
 */
export function loopbackListeners(port: number): number[] | null {
  let tables = 0;
  const uids: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try { text = fs.readFileSync(table, 'utf8'); } catch { continue; }
    tables++;
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length < 8 || f[3] !== '0A') continue; // 0A: LISTEN
      const [addr, hexPort] = f[1].split(':');
      if (parseInt(hexPort, 16) === port && REACHES_LOOPBACK.has(kernelAddress(addr))) uids.push(Number(f[7]));
    }
  }
  return tables ? uids : null;
}

const REACHES_LOOPBACK = new Set(['127.0.0.1', '0.0.0.0', '::', '::ffff:127.0.0.1', '::ffff:0.0.0.0']);

/** An address as /proc/net/tcp{,6} prints it (32-bit words in the host's byte order), as text. */
function kernelAddress(hex: string): string {
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = [0, 2, 4, 6].map((i) => parseInt(hex.slice(w + i, w + i + 2), 16));
    bytes.push(...(os.endianness() === 'LE' ? word.reverse() : word));
  }
  if (bytes.length === 4) return bytes.join('.');
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return `::ffff:${bytes.slice(12).join('.')}`;
  return bytes.every((b) => b === 0) ? '::' : 'other';
}

export interface OpencodeServer {
  url: string;
  port: number;
  /** $XDG_DATA_HOME of the OpenCode process (its snapshot repositories live under opencode/snapshot). */
  dataDir: string;
  /** Its OPENCODE_SERVER_PASSWORD, if it was started with one. */
  password?: string;
  logs: string[];
  process: ChildProcess;
  stop(): Promise<void>;
  /** Stops and starts it again on the same port and data. */
  restart(): Promise<void>;
}

export interface StartOpencodeOptions {
  bin: string;
  /** The project directory (its cwd). */
  directory: string;
  /** Base folder for the isolated XDG dirs and HOME (isolated only). */
  home?: string;
  /** OpenAI-compatible base URL (ending in /v1) of the scripted model (isolated only). */
  modelUrl?: string;
  /**
   * True (default): an isolated, offline OpenCode with the scripted model (tests, experiments). False:
   * the user's own OpenCode (their environment, config and data), e.g. behind the admission proxy.
   */
  isolated?: boolean;
  port?: number;
  /** OpenCode plugins to load (absolute paths), e.g. bridge/opencode/plugin/gateway-fence.js. */
  plugins?: string[];
  /** OPENCODE_SERVER_PASSWORD: every request then needs HTTP basic auth (user `opencode`). */
  password?: string;
  /** Extra arguments of `opencode serve`, and the environment to start from (default: only PATH and LANG). */
  env?: NodeJS.ProcessEnv;
  /** OpenCode's `--log-level` (default WARN; INFO shows plugins' `client.app.log` lines). */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
}

export async function startOpencode(o: StartOpencodeOptions): Promise<OpencodeServer> {
  const port = o.port ?? (await freePort());
  if (o.isolated === false) return startUserOpencode(o, port);
  if (!o.home || !o.modelUrl) throw new Error('startOpencode: an isolated OpenCode needs home and modelUrl');
  const env: NodeJS.ProcessEnv = { ...(o.env ?? {}), ...isolatedOpencodeEnv(o.home, o.modelUrl, o.plugins) };
  if (o.password) { env.OPENCODE_SERVER_PASSWORD = o.password; env.OPENCODE_SERVER_USERNAME = 'opencode'; }
  return runServe(o, port, env, env.XDG_DATA_HOME!);
}

/**
 * The environment of an isolated, offline OpenCode under `home` (XDG dirs, HOME, a config with the scripted
 * model at `modelUrl`, the plugins): for startOpencode, and for processes that start OpenCode themselves
 * (the `bridge opencode --serve` command in tests).
 */
export function isolatedOpencodeEnv(home: string, modelUrl: string, plugins: string[] = []): NodeJS.ProcessEnv {
  const dirs = Object.fromEntries(['data', 'config', 'cache', 'state', 'home'].map((d) => [d, path.join(home, d)]));
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  const configFile = path.join(home, 'opencode.json');
  fs.writeFileSync(configFile, JSON.stringify({
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: 'scripted/scripted',
    small_model: 'scripted/scripted',
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted',
        options: { baseURL: modelUrl, apiKey: 'none' },
        models: { scripted: { name: 'Scripted', tool_call: true, limit: { context: 100_000, output: 4_000 } } },
      },
    },
    permission: { edit: 'allow', bash: 'allow', webfetch: 'deny', external_directory: 'allow' },
    ...(plugins.length ? { plugin: plugins.map((p) => `file://${p}`) } : {}),
  }, null, 2));
  return {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HOME: dirs.home,
    XDG_DATA_HOME: dirs.data,
    XDG_CONFIG_HOME: dirs.config,
    XDG_CACHE_HOME: dirs.cache,
    XDG_STATE_HOME: dirs.state,
    OPENCODE_CONFIG: configFile,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
    OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  };
}

/** The user's OpenCode: their environment and config, plus the password, the plugins and `o.env`. */
async function startUserOpencode(o: StartOpencodeOptions, port: number): Promise<OpencodeServer> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...(o.env ?? {}) };
  if (o.password) { env.OPENCODE_SERVER_PASSWORD = o.password; env.OPENCODE_SERVER_USERNAME = 'opencode'; }
  if (o.plugins?.length) {
    // Merged with the user's configuration (OpenCode concatenates plugin lists of its config sources).
    const extra = env.OPENCODE_CONFIG_CONTENT ? JSON.parse(env.OPENCODE_CONFIG_CONTENT) : {};
    extra.plugin = [...(extra.plugin ?? []), ...o.plugins.map((p) => `file://${p}`)];
    env.OPENCODE_CONFIG_CONTENT = JSON.stringify(extra);
  }
  const data = env.XDG_DATA_HOME ?? path.join(env.HOME ?? process.env.HOME ?? '.', '.local', 'share');
  return runServe(o, port, env, data);
}

async function runServe(o: StartOpencodeOptions, port: number, env: NodeJS.ProcessEnv, dataDir: string): Promise<OpencodeServer> {
  const auth: Record<string, string> = o.password ? { authorization: basicAuth('opencode', o.password) } : {};
  const logs: string[] = [];
  const server: OpencodeServer = {
    url: `http://127.0.0.1:${port}`,
    password: o.password,
    port,
    dataDir,
    logs,
    process: null as unknown as ChildProcess,
    async stop() {
      const p = server.process;
      if (p.exitCode !== null || p.signalCode !== null) return;
      const exited = new Promise<void>((r) => p.once('exit', () => r()));
      p.kill('SIGTERM');
      const t = setTimeout(() => p.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    },
    async restart() {
      await server.stop();
      await launch();
    },
  };
  const uid = process.getuid?.();
  const launch = async () => {
    const p = spawn(o.bin, ['serve', '--hostname', '127.0.0.1', '--port', String(port), '--print-logs', '--log-level', o.logLevel ?? 'WARN'], {
      cwd: o.directory, env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.process = p;
    const onData = (b: Buffer) => { logs.push(b.toString()); if (logs.length > 500) logs.shift(); };
    p.stdout!.on('data', onData);
    p.stderr!.on('data', onData);
    try {
      await serving(p);
    } catch (e) {
      await server.stop();
      throw e;
    }
  };
  /** Waits until OpenCode answers on the port; its password goes only to a listener of this user. */
  const serving = async (p: ChildProcess) => {
    // ~2 s on an idle machine; over a minute seen on a loaded two-core one (a plugin's packages installed first).
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      if (p.exitCode !== null) throw new Error(`opencode exited (${p.exitCode}): ${logs.join('').slice(-2000)}`);
      const owners = uid === undefined ? null : loopbackListeners(port);
      const foreign = owners?.find((u) => u !== uid);
      if (foreign !== undefined) {
        throw new Error(`port ${port} on 127.0.0.1 was taken by another user's process (uid ${foreign}) before OpenCode could listen there; `
          + 'nothing was sent to it');
      }
      if (owners?.length === 0) { await new Promise((r) => setTimeout(r, 100)); continue; } // not listening yet
      try {
        const r = await fetch(`${server.url}/global/health`, { headers: auth, signal: AbortSignal.timeout(1_000) });
        if (r.ok) return;
      } catch { /* not yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`opencode did not answer /global/health within 180 s: ${logs.join('').slice(-2000)}`);
  };
  await launch();
  return server;
}
