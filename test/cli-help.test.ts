// What the command line tells a user who is stuck: `serve --help` lists the environment, `token create --help`
// what each role may do, a restart the command that makes a new admin token (and that command works against
// the running gateway), the demo the URL it tried and --url when no gateway answers there (its temporary
// worktree removed), and `npm pack` of the client leaves nothing untracked. The CLI runs from the sources (tsx).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_DIR } from '../db/index.js';
import { cli } from './support/cli.js';
import { ENVIRONMENT } from '../server/environment.js';
import { COMMANDS, argsOf, commandOf, commandsNamed, helpOf, optionsOf } from '../cli/commands.js';
import { parseArgs } from 'node:util';
import { createTestDatabase, gql } from './harness.js';


let tmp: string;
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-help-')); });
afterAll(() => { if (tmp) fs.rmSync(tmp, { recursive: true, force: true }); });

/** The README's or docs' Configuration table: the file that holds it (README.md, or a page of docs/). */
function configurationTable(): string {
  const files = ['README.md', ...fs.readdirSync(path.join(PROJECT_DIR, 'docs'), { recursive: true }).map(String).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f))];
  for (const f of files) {
    const text = fs.readFileSync(path.join(PROJECT_DIR, f), 'utf8');
    const at = text.indexOf('| variable | default | what |');
    if (at >= 0) return text.slice(at, text.indexOf('\n\n', at) === -1 ? undefined : text.indexOf('\n\n', at));
  }
  throw new Error('no Configuration table (| variable | default | what |) in README.md or docs/');
}

describe('--help', () => {
  it('serve lists every environment variable of the Configuration table, with this installation\'s default', () => {
    const r = cli(['serve', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: gateway serve\n/);
    const documented = [...configurationTable().matchAll(/^\|([^|]+)\|/gm)].flatMap((m) => [...m[1].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((x) => x[1]));
    expect(documented.length).toBeGreaterThan(25);
    expect(ENVIRONMENT.map((v) => v.name).sort()).toEqual([...documented].sort());
    for (const v of ENVIRONMENT) expect(r.stdout).toMatch(new RegExp(`^  ${v.name} +\\S.*\\(default: ${v.default.replace(/[.*+?()[\]\\]/g, '\\$&')}\\)$`, 'm'));
    // One default for the data folder: where this checkout keeps it (an installed package: the user's data folder).
    const dataDir = r.stdout.split('\n').find((l) => l.startsWith('  GATEWAY_DATA_DIR '))!;
    expect(dataDir.match(/default/g)).toHaveLength(1);
    expect(dataDir).toMatch(/\(default: \S+\/\.data\/pg\)$/);
    expect(dataDir).not.toContain('.local/share');
  });

  it('every command\'s help names it on its usage line and lists every option it accepts; gateway --help names every command', () => {
    const all = cli(['--help']);
    expect(all.status).toBe(0);
    expect(all.stdout).toMatch(/^Usage: gateway <command>/);
    for (const c of COMMANDS) {
      expect(all.stdout).toMatch(new RegExp(`^  ${c.name.replace(/-/g, '\\-')}( |$)`, 'm'));
      // What `gateway <c.name> --help` prints (cli/main.ts: commandsNamed, then helpOf; a few are run below).
      const named = commandsNamed([...c.name.split(' '), '--help']);
      expect(named.map((x) => x.name)).toEqual([c.name]);
      const help = helpOf(c);
      expect(help.split('\n')[0]).toMatch(new RegExp(`^Usage: gateway ${c.name}( |$)`));
      const listed = [...help.matchAll(/^  (?:-\w, )?--([a-z-]+)/gm)].map((m) => m[1]);
      // What the command parses (cli/commands.ts: the same declaration), but the secrets it refuses by name.
      const accepted = Object.entries(c.options).filter(([, o]) => !o.refused).map(([name]) => name);
      expect({ command: c.name, listed: listed.sort() }).toEqual({ command: c.name, listed: [...accepted, 'help'].sort() });
      for (const [name, o] of Object.entries(c.options)) if (o.refused) expect(help).not.toMatch(new RegExp(`^  --${name} `, 'm'));
    }
    // From the command line: host codex, as the issue found it (the options it took without saying so).
    const codex = cli(['host', 'codex', '-h']);
    expect({ status: codex.status, stderr: codex.stderr, stdout: codex.stdout }).toEqual({ status: 0, stderr: '', stdout: helpOf(commandOf('host codex')) });
    for (const o of ['--models <id,id…>', '--prompt-args <args>', '--lease-ms <ms>', '--print-hooks']) expect(codex.stdout).toContain(`  ${o} `);
    // A group's help is its commands' (gateway token --help: create and revoke).
    expect(cli(['token', '--help']).stdout).toMatch(/^Usage: gateway token create [^]*^Usage: gateway token revoke /m);
    // The launchers pass their arguments on to the agent: only a first --help is theirs.
    expect(cli(['claude-code', '--help']).stdout).toBe(helpOf(commandOf('claude-code')));
    const bridge = cli(['bridge', 'opencode', '-h']).stdout;
    expect(bridge).toBe(helpOf(commandOf('bridge opencode')));
    for (const v of ['GATEWAY_TOKEN', 'GATEWAY_PLUGIN_TOKEN', 'OPENCODE_PROXY_PASSWORD', 'OPENCODE_SERVER_PASSWORD']) expect(bridge).toContain(v);
  }, 60_000);

  it('token create says what each role may do', () => {
    const r = cli(['token', 'create', '--help']);
    expect(r.status).toBe(0);
    for (const [role, may] of [['reader', 'every query and subscription'], ['plugin', 'sealSession'], ['host', 'registerHost'], ['admin', 'tokens']]) {
      expect(r.stdout).toMatch(new RegExp(`^ +${role} +.*${may}`, 'm'));
    }
    expect(r.stdout).toMatch(/^  --directory <prefix> +the token sees and touches only sessions under it/m);
  });

  it('a hooks host\'s --prompt-args takes agent arguments after a space as after an `=` (parseArgs alone refuses a value that begins with a dash)', () => {
    for (const [name, value] of [['host codex', '-c sandbox_mode="workspace-write"'], ['host claude-code', '--allowedTools Bash']] as const) {
      expect(() => parseArgs({ args: ['--prompt-args', value], options: optionsOf(name) }), name).toThrow(/ambiguous/);
      for (const args of [['--prompt-args', value, '--dir', 'd'], [`--prompt-args=${value}`, '--dir', 'd']]) {
        expect(parseArgs({ args: argsOf(name, args), options: optionsOf(name) }).values, name).toMatchObject({ 'prompt-args': value, dir: 'd' });
      }
    }
  });
});

it('a restart prints the command that makes a new admin token, and that command works while the gateway runs', async () => {
  const db = await createTestDatabase();
  const serve = async (expectLine: RegExp) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'serve'], {
      cwd: PROJECT_DIR, env: { ...process.env, DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'warn', DB_POOL: '2' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b) => { out += b; });
    child.stderr.on('data', (b) => { out += b; });
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    await expect.poll(() => expectLine.test(out), { timeout: 60_000, interval: 100 }).toBe(true);
    const url = /listening on (http:\S+)/.exec(out)![1];
    return { out: () => out, url, stop: async () => { child.kill('SIGTERM'); return exited; } };
  };
  try {
    const first = await serve(/Use it as "Authorization/);
    expect(first.out()).toContain('First start: an admin token was created');
    expect(first.out()).not.toContain('Lost the admin token');
    expect(await first.stop()).toBe(0);

    const again = await serve(/Lost the admin token/);
    try {
      const line = again.out().split('\n').find((l) => l.startsWith('Lost the admin token'))!;
      expect(line).toBe('Lost the admin token (it is printed only at the first start)? Make another with the same DATABASE_URL: npx gateway token create --role admin');
      expect(again.out()).not.toContain('First start');
      // The command it names (npx gateway runs cli/main.ts), with the same DATABASE_URL, while the gateway runs.
      const made = cli(['token', 'create', '--role', 'admin'], { DATABASE_URL: db.url });
      expect(made.status, made.stderr).toBe(0);
      expect(made.stdout).toMatch(/^token tok_\S+ \(admin\), written to DATABASE_URL \(127\.0\.0\.1:\d+\/gw_test_\w+\):\n/);
      const secret = made.stdout.trim().split('\n').at(-1)!;
      const r = await gql(again.url, secret, '{ tokens(first: 5) { edges { node { role } } } }');
      expect(r.errors).toBeUndefined();
      expect(r.data.tokens.edges.map((e: { node: { role: string } }) => e.node.role)).toEqual(['admin', 'admin']);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  } finally {
    await db.drop();
  }
}, 150_000);

it('the demo against no gateway names the URL it tried and --url, and leaves no worktree behind', async () => {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  const temp = fs.mkdtempSync(path.join(tmp, 'demo-tmp-'));
  // The default address (port 4000: the README's `npm start`), unless something of this machine's listens there.
  const free4000 = await new Promise<boolean>((resolve) => {
    const probe = net.createServer().once('error', () => resolve(false));
    probe.listen(4000, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
  const tries: [string[], string][] = [[['--url', `http://127.0.0.1:${port}/graphql`], `http://127.0.0.1:${port}/graphql`]];
  if (free4000) tries.push([[], 'http://127.0.0.1:4000/graphql']);
  // As the README runs it: the token in the environment, the gateway's PORT of another shell not set here.
  for (const [args, url] of tries) {
    const r = cli(['demo', ...args], { GATEWAY_TOKEN: 'not-used', TMPDIR: temp, PORT: '' });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^gateway: cannot reach the gateway at ${url.replace(/[.]/g, '\\.')} \\(fetch failed \\(connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+\\)\\)\\. Is it running there\\? `
      + 'For a gateway on another port or host, give its address: npm run demo -- --url http://127\\.0\\.0\\.1:<PORT>/graphql$'));
    expect(fs.readdirSync(temp).filter((f) => f.startsWith('gateway-demo-'))).toEqual([]); // (tsx keeps its cache there too)
  }
}, 120_000);

it('npm pack of the client leaves no untracked tarball in client/', () => {
  const packed = spawnSync('npm', ['pack', '--json'], { cwd: path.join(PROJECT_DIR, 'client'), encoding: 'utf8', timeout: 120_000, env: { ...process.env, npm_config_update_notifier: 'false' } });
  expect(packed.status, packed.stderr).toBe(0);
  const file = path.join(PROJECT_DIR, 'client', JSON.parse(packed.stdout)[0].filename);
  try {
    expect(fs.existsSync(file)).toBe(true);
    const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=all', '--', 'client'], { cwd: PROJECT_DIR, encoding: 'utf8' });
    expect(status.stdout.split('\n').filter((l) => l.endsWith('.tgz'))).toEqual([]);
  } finally {
    fs.rmSync(file, { force: true });
  }
}, 150_000);
