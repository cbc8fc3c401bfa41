import { parseArgs } from 'node:util';
import { openDatabase } from '../db/index.js';
import { CONNECT_TIMEOUT_MS, connect } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { distribute, hasCitus } from '../db/distribute.js';
import { createToken, ensureAdminToken, revokeToken } from '../domain/tokens.js';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { PROJECT_DIR } from '../db/index.js';
import type { Config } from '../server/config.js';
import { VERSION } from '../server/version.js';
import { commandsNamed, helpOf, optionsOf, usage } from './commands.js';
import { isInstalledPackage } from '../server/data-dir.js';

async function withDb<T>(fn: (sql: ReturnType<typeof connect>) => Promise<T>): Promise<T> {
  return withDatabase(async (sql) => {
    await migrate(sql);
    return fn(sql);
  });
}

/**
 * The database of a running gateway, for the token commands: DATABASE_URL, or the embedded PostgreSQL's data
 * folder. Refused where no gateway has run yet (a folder never initialised, a database without the gateway's
 * tables): a token made there would be accepted by no gateway, and the folder would be a new database of its
 * own. `where` says which database it is, for the command to print.
 */
async function withGatewayDb<T>(fn: (sql: ReturnType<typeof connect>, where: string) => Promise<T>): Promise<T> {
  const url = process.env.DATABASE_URL?.trim();
  const { embeddedDataDir } = await import('../server/data-dir.js');
  const dir = embeddedDataDir(PROJECT_DIR);
  if (!url && !existsSync(path.join(dir, 'PG_VERSION'))) {
    const from = process.env.GATEWAY_DATA_DIR?.trim() ? 'GATEWAY_DATA_DIR'
      : isInstalledPackage(PROJECT_DIR) ? `the default of this user (HOME=${process.env.HOME ?? ''}${process.env.XDG_DATA_HOME ? `, XDG_DATA_HOME=${process.env.XDG_DATA_HOME}` : ''})` : 'this checkout\'s default';
    throw new StartError(`no gateway database in ${dir} (${from}): no gateway has run with this data folder, so no gateway would accept a token made here. `
      + 'Run this command with the GATEWAY_DATA_DIR (or DATABASE_URL) of the gateway that should accept it: its start prints its folder '
      + '("with embedded PostgreSQL in <folder>"); or start a gateway here first (gateway serve)');
  }
  return withDatabase(async (sql) => {
    const where = url ? describeDatabase(url, false) : `the embedded PostgreSQL in ${dir}`;
    const [{ gateway }] = await sql`SELECT to_regclass('schema_migrations') IS NOT NULL AS gateway`;
    if (!gateway) {
      throw new StartError(`no gateway database at ${where}: it holds no gateway tables, so no gateway would accept a token made there. `
        + (url ? 'Set DATABASE_URL to the database of the gateway that should accept it, or start a gateway on this one first (gateway serve, or gateway migrate)'
          : 'Start a gateway with this data folder first (gateway serve), or set GATEWAY_DATA_DIR to the folder of the gateway that should accept it'));
    }
    await migrate(sql);
    return fn(sql, where);
  });
}

/** The database (DATABASE_URL, or the embedded one) without migrating it first. */
async function withDatabase<T>(fn: (sql: ReturnType<typeof connect>) => Promise<T>): Promise<T> {
  const db = await openDatabase();
  const sql = connect(db.url, { max: 2, connectTimeoutMs: connectTimeoutMs() });
  try {
    return await reachable(db, sql, () => fn(sql));
  } finally {
    await sql.end({ timeout: 1 });
    await db.stop();
  }
}

/** DB_CONNECT_TIMEOUT_MS of the one-shot commands (serve reads it with its configuration, which checks it). */
function connectTimeoutMs(): number {
  const v = process.env.DB_CONNECT_TIMEOUT_MS?.trim();
  return v && /^\d+$/.test(v) && Number(v) >= 100 ? Number(v) : CONNECT_TIMEOUT_MS;
}

/** Where a database URL points, for an operator: host, port and database, never the user or password. */
function databaseAddress(url: string): string {
  try {
    const u = new URL(url);
    const host = u.hostname || u.searchParams.get('host') || 'localhost';
    return `${host}:${u.port || 5432}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return 'an unparsable URL'; // the URL may hold a password: it is not echoed
  }
}

function describeDatabase(url: string, embedded: boolean): string {
  return embedded ? `the embedded PostgreSQL at ${databaseAddress(url)}` : `DATABASE_URL (${databaseAddress(url)})`;
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

const AUTH_SQLSTATES: Record<string, string> = {
  '28P01': 'password authentication failed', '28000': 'the server refused the role or the authentication method',
  '3D000': 'the database does not exist', '42501': 'permission denied',
};

/**
 * Runs the first statements of a command: a database that cannot be reached or refuses the login is one
 * line naming DATABASE_URL (or the embedded server) and the host, not a bare `connect ECONNREFUSED …`.
 */
async function reachable<T>(db: { url: string; embedded: boolean }, sql: ReturnType<typeof connect>, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const code = String((e as { code?: unknown }).code ?? '');
    const { isDatabaseUnavailable } = await import('../db/connection.js');
    if (isDatabaseUnavailable(e) || AUTH_SQLSTATES[code]) {
      const timeout = (sql.options as { connect_timeout?: number }).connect_timeout;
      const why = AUTH_SQLSTATES[code]
        ?? (code === 'CONNECT_TIMEOUT' && timeout
          ? `it did not answer within ${seconds(timeout * 1000)} (CONNECT_TIMEOUT; DB_CONNECT_TIMEOUT_MS sets how long to wait)`
          : `${code || 'unreachable'}: ${(e as Error).message}`);
      throw new StartError(`cannot use the database of ${describeDatabase(db.url, db.embedded)}: ${why}`
        + (db.embedded ? '' : ' (is PostgreSQL running there, and is DATABASE_URL right?)'));
    }
    throw e;
  }
}

/** Fails at once when the port is taken, before minutes of database start-up (the listen later still checks). */
async function checkPortFree(host: string, port: number, variable: string): Promise<void> {
  if (!port) return;
  const net = await import('node:net');
  await new Promise<void>((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => reject(e.code === 'EADDRINUSE'
      ? new StartError(`port ${port} on ${host} is already in use (another gateway is running? set ${variable})`)
      : e.code === 'EACCES' ? new StartError(`port ${port} on ${host}: permission denied (set ${variable})`) : e));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve()));
  });
}

/** A start-up failure the operator can fix: printed as one line (no stack), exit code 2 for bad config. */
class StartError extends Error {
  constructor(message: string, readonly exitCode = 1) { super(message); }
}

function shortPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel && !rel.startsWith('..') ? rel : p;
}

async function serve() {
  // Imported here so the other commands (the bridge, token, migrate) start without them.
  const { ConfigError, loadConfig } = await import('../server/config.js');
  const { createLogger } = await import('../server/logging.js');
  let config: Config;
  try {
    config = loadConfig(process.env, PROJECT_DIR);
  } catch (e) {
    if (e instanceof ConfigError) throw new StartError(`configuration: ${e.message}`, 2);
    throw e;
  }
  // The process' one logger: every line of the gateway goes through it (buildApp hands it down).
  const logger = createLogger(config.logLevel);
  // Signals count from here: one that arrives while starting stops the start and whatever it started.
  const cleanup: (() => Promise<unknown>)[] = [];
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    // A stop that hangs (a database that does not answer) still ends the process.
    setTimeout(() => { logger.error('stop took over 15 s; exiting'); process.exit(1); }, 15_000).unref();
    for (const fn of cleanup.splice(0).reverse()) await fn().catch((err) => logger.warn({ err }, 'while stopping'));
    logger.info({ signal }, 'stopped');
    logger.flush();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));

  await checkPortFree(config.host, config.port, 'PORT');
  if (config.metrics.port) await checkPortFree(config.host, config.metrics.port, 'METRICS_PORT');
  const db = await openDatabase((m) => logger.debug({ postgres: m }, 'embedded postgres'), {
    url: config.databaseUrl, dataDir: config.dataDir, port: config.embeddedPgPort,
  });
  cleanup.push(() => db.stop());
  const sql = connect(db.url, { max: config.dbPool, applicationName: `agent-history-gateway/${process.pid}`, connectTimeoutMs: config.dbConnectTimeoutMs });
  cleanup.push(() => sql.end({ timeout: 5 }));
  // The first connection, logged before and after (a server that never answers is given up on after the timeout).
  const database = databaseAddress(db.url);
  logger.info({ database, embedded: db.embedded, timeoutMs: config.dbConnectTimeoutMs }, 'connecting to the database');
  const applied = await reachable(db, sql, () => migrate(sql)).catch(async (e) => {
    logger.error({ database, embedded: db.embedded, code: (e as { code?: unknown }).code, reason: (e as Error).message }, 'cannot use the database');
    for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
    throw e;
  });
  if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
  // Imported here so the other commands start without loading the whole schema.
  const { buildApp } = await import('../server/app.js');
  const { ManifestError } = await import('../server/trusted-documents.js');
  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    app = buildApp({
      sql, port: config.port, host: config.host, limits: config.limits, gateway: config.gateway,
      tokenCache: config.tokenCache, metricsToken: config.metrics.token, metricsPort: config.metrics.port, logger,
      trustedDocuments: config.trustedDocuments, otel: config.otel,
    });
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
    throw new StartError(`configuration: TRUSTED_DOCUMENTS: ${e.message}`, 2);
  }
  try {
    await app.start();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      const port = (e as { port?: number }).port ?? config.port;
      for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
      throw new StartError(`port ${port} on ${config.host} is already in use (another gateway is running? set PORT, or METRICS_PORT)`);
    }
    throw e;
  }
  cleanup.push(() => app.stop());
  if (stopping) return;
  const admin = await ensureAdminToken(sql);
  logger.info({ version: VERSION, url: app.url, ws: app.wsUrl, metrics: app.metricsUrl, embeddedPostgres: db.embedded ? config.dataDir : undefined, nodeEnv: process.env.NODE_ENV ?? 'development' }, 'listening');
  console.log(`gateway ${VERSION} listening on ${app.url} (WebSocket ${app.wsUrl})${db.embedded ? ` with embedded PostgreSQL in ${shortPath(config.dataDir)}` : ''}`);
  console.log(`GraphiQL: ${app.url}`);
  console.log(`Review page: ${app.url.replace(/\/graphql$/, '/review/')} (a reader token is enough)`);
  // Built now when missing or stale, rather than at its first visitor's request.
  void import('../server/review.js').then((m) => m.prepareReview());
  if (admin) {
    console.log(`\nFirst start: an admin token was created. It is shown only this once:\n\n  ${admin.secret}\n`);
    console.log(`Use it as "Authorization: Bearer <token>" (in GraphiQL's Headers tab).`);
  } else {
    console.log(lostAdminToken(db.embedded));
  }
}

/**
 * For the user who lost the admin token (printed only at the first start; only its hash is kept): the
 * command that makes another, for this same database, while the gateway runs.
 */
function lostAdminToken(embedded: boolean): string {
  const where = isInstalledPackage(PROJECT_DIR) ? 'gateway' : path.resolve(process.cwd()) === PROJECT_DIR ? 'npx gateway' : `cd ${PROJECT_DIR} && npx gateway`;
  const same = embedded ? (process.env.GATEWAY_DATA_DIR?.trim() ? ' with the same GATEWAY_DATA_DIR' : '') : ' with the same DATABASE_URL';
  return `Lost the admin token (it is printed only at the first start)? Make another${same}: ${where} token create --role admin`;
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  // (`claude-code`, `codex` and `gemini` pass their arguments on to the agent: only a first --help is the launcher's.)
  const help = cmd === 'claude-code' || cmd === 'codex' || cmd === 'gemini' ? ['--help', '-h'].includes(rest[0]) : rest.includes('--help') || rest.includes('-h');
  if (cmd && help) {
    const named = commandsNamed([cmd, ...rest]);
    process.stdout.write(named.length ? named.map(helpOf).join('\n') : usage());
    return;
  }
  switch (cmd) {
    case '--version':
    case '-v':
    case 'version':
      console.log(VERSION);
      return;
    case 'serve':
      return serve();
    case 'migrate': {
      const applied = await withDatabase((sql) => migrate(sql));
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
      return;
    }
    case 'distribute': {
      if (!process.env.DATABASE_URL) throw new StartError('distribute: set DATABASE_URL to a database on a Citus coordinator', 2);
      await withDatabase(async (sql) => {
        if (!(await hasCitus(sql))) {
          throw new StartError('distribute: the citus extension is not installed in this database (CREATE EXTENSION citus, then add the workers: see docs/citus.md)');
        }
        const applied = await migrate(sql, { distribute: false });
        console.log(applied.length ? `migrations applied: ${applied.join(', ')}` : 'migrations: up to date');
        const r = await distribute(sql);
        if (!r.reference.length && !r.distributed.length) console.log('tables: already distributed, nothing to do');
        if (r.reference.length) console.log(`reference tables: ${r.reference.join(', ')}`);
        if (r.distributed.length) console.log(`distributed tables: ${r.distributed.join(', ')}`);
        if (r.foreignKeys.length) console.log(`foreign keys re-created: ${r.foreignKeys.length}`);
        if (r.propagateSet) console.log(`set citus.propagate_set_commands = 'local' on the database`);
      });
      return;
    }
    case 'token': {
      const [sub, ...args] = rest;
      if (sub === 'create') {
        const { values } = parseArgs({ args, options: optionsOf('token create') });
        if (!values.role) throw new StartError('token create: --role is required (reader, plugin, host or admin: gateway token create --help)', 2);
        const [t, where] = await withGatewayDb(async (sql, where) => [await createToken(sql, { role: values.role!, directory: values.directory, label: values.label }), where] as const);
        console.log(`token ${t.id} (${t.role}${t.directory ? `, under ${t.directory}` : ''}), written to ${where}:\n${t.secret}`);
        return;
      }
      if (sub === 'revoke' && args[0]) {
        const [ok, where] = await withGatewayDb(async (sql, where) => [await revokeToken(sql, args[0]), where] as const);
        console.log(ok ? `revoked ${args[0]} in ${where}` : `no active token ${args[0]} in ${where}`);
        if (!ok) process.exitCode = 1;
        return;
      }
      break;
    }
    case 'replay': {
      const { values } = parseArgs({ args: rest, options: optionsOf('replay') });
      const { compareProjections, rebuildProjections, replayIntoSchema } = await import('../domain/replay.js');
      await withDb(async (sql) => {
        const rows = (s: { rows: Record<string, number> }) => Object.entries(s.rows).map(([t, n]) => `${n} ${t}`).join(', ');
        const inexact = (s: { inexact: Map<string, Set<string>> }) => {
          if (s.inexact.size) console.log(`${s.inexact.size} sessions hold events of older versions that cannot rebuild some rows exactly; those rows were left as they are`);
        };
        if (!values.verify) {
          const s = await rebuildProjections(sql);
          console.log(`rebuilt from ${s.events} events of ${s.sessions} sessions: ${rows(s)}`
            + ` (rows deleted ${s.changed.deleted}, updated ${s.changed.updated}, inserted ${s.changed.inserted})`);
          inexact(s);
          return;
        }
        const s = await replayIntoSchema(sql, 'replay_check');
        const diffs = await compareProjections(sql, 'replay_check', { inexact: s.inexact }).finally(() => sql`DROP SCHEMA replay_check CASCADE`);
        console.log(`replayed ${s.events} events of ${s.sessions} sessions: ${rows(s)}`);
        inexact(s);
        for (const d of diffs) console.log(`differs: ${d.table} ${d.key}\n  live:     ${JSON.stringify(d.live)}\n  replayed: ${JSON.stringify(d.replayed)}`);
        // Thrown, not process.exitCode: an exit hook of the embedded server's library resets the code.
        if (diffs.length) throw new Error(`${diffs.length}${diffs.length >= 20 ? '+' : ''} rows differ from the journal`);
        console.log('projections match the journal');
      });
      return;
    }
    case 'demo': {
      const { runDemo } = await import('../host/demo.js');
      return runDemo(rest);
    }
    case 'bridge': {
      const { runBridgeCommand } = await import('../bridge/opencode/cli.js');
      return runBridgeCommand(rest);
    }
    case 'host': {
      if (rest[0] === 'codex') {
        const { runCodexHostCommand } = await import('../bridge/codex/cli.js');
        return runCodexHostCommand(rest.slice(1));
      }
      if (rest[0] === 'gemini') {
        const { runGeminiHostCommand } = await import('../bridge/gemini/cli.js');
        return runGeminiHostCommand(rest.slice(1));
      }
      const { runHostCommand } = await import('../bridge/claude-code/cli.js');
      return runHostCommand(rest);
    }
    case 'codex': {
      const { runCodexLauncher } = await import('../bridge/codex/cli.js');
      return runCodexLauncher(rest);
    }
    case 'gemini': {
      const { runGeminiLauncher } = await import('../bridge/gemini/cli.js');
      return runGeminiLauncher(rest);
    }
    case 'claude-code': {
      const { runClaudeLauncher } = await import('../bridge/claude-code/cli.js');
      return runClaudeLauncher(rest);
    }
  }
  process.stdout.write(usage());
  if (cmd && !['help', '--help', '-h'].includes(cmd)) process.exitCode = 2;
}

main().then(
  // One-shot commands end here, with their exit code (a library's exit hook would reset process.exitCode);
  // serve and bridge keep running until a signal.
  () => {
    const [cmd, ...rest] = process.argv.slice(2);
    const help = cmd === 'claude-code' || cmd === 'codex' || cmd === 'gemini' ? ['--help', '-h'].includes(rest[0]) : rest.some((a) => a === '--help' || a === '-h');
    if (help || !['serve', 'bridge', 'host', 'claude-code', 'codex', 'gemini'].includes(process.argv[2])) process.exit(process.exitCode ?? 0);
  },
).catch((e) => {
  // One line for the operator; the stack only with DEBUG set (a StartError has none worth showing).
  console.error(`gateway: ${e instanceof Error ? e.message : e}`);
  if (process.env.DEBUG && e instanceof Error && !(e instanceof StartError)) console.error(e.stack);
  process.exit(e instanceof StartError ? e.exitCode : 1);
});
