// No credential on a command line (every user of the machine reads it in the process list): tokens and
// passwords come from a variable or from a file only its owner can read (cli/credentials.ts), and a secret
// given as an option is refused, naming what to use instead. Unit checks of readSecret, then the commands as
// a user runs them, and the demo run with a token from a file and from the environment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_DIR } from '../db/index.js';
import { HOST_TOKEN, PLUGIN_TOKEN, readSecret } from '../cli/credentials.js';
import { runDemo } from '../host/demo.js';
import { startTestGateway, type TestGateway } from './harness.js';

const asRoot = process.getuid?.() === 0;
let tmp: string;
beforeAll(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'credentials-')); });
afterAll(() => { if (tmp) fs.rmSync(tmp, { recursive: true, force: true }); });

let n = 0;
/** A file holding `text`, of mode `mode`. */
function secretFile(text: string, mode: number): string {
  const f = path.join(tmp, `secret-${++n}`);
  fs.writeFileSync(f, text);
  fs.chmodSync(f, mode);
  return f;
}

describe('readSecret', () => {
  it('takes the variable, and removes it from the environment children inherit', () => {
    const env: NodeJS.ProcessEnv = { GATEWAY_TOKEN: 'tok-from-env', OTHER: 'x' };
    expect(readSecret({}, HOST_TOKEN, { required: true, environment: env })).toBe('tok-from-env');
    expect(env).toEqual({ OTHER: 'x' });
  });

  it('takes a 0600 file (its trailing newline dropped), which wins over the variable; 0400 is fine too', () => {
    const env: NodeJS.ProcessEnv = { GATEWAY_TOKEN: 'tok-from-env' };
    const f = secretFile('tok-from-file\n', 0o600);
    expect(readSecret({ 'token-file': f }, HOST_TOKEN, { required: true, environment: env })).toBe('tok-from-file');
    expect(env.GATEWAY_TOKEN).toBe('tok-from-env'); // left for what the command starts (e.g. OpenCode's plugins)
    expect(readSecret({ 'plugin-token-file': secretFile('p w d\r\n', 0o400) }, PLUGIN_TOKEN, { environment: {} })).toBe('p w d');
  });

  it('refuses a file others can read, naming the file and the chmod that fixes it; fixed, it is read', () => {
    const f = secretFile('tok', 0o644);
    expect(() => readSecret({ 'token-file': f }, HOST_TOKEN, { environment: {} }))
      .toThrow(`--token-file ${f} can be read or changed by other users (mode 0644): run \`chmod 600 ${f}\``);
    fs.chmodSync(f, 0o640);
    expect(() => readSecret({ 'token-file': f }, HOST_TOKEN, { environment: {} })).toThrow('(mode 0640): run `chmod 600');
    fs.chmodSync(f, 0o600);
    expect(readSecret({ 'token-file': f }, HOST_TOKEN, { environment: {} })).toBe('tok');
  });

  it.skipIf(!asRoot)('refuses a file of another user (as root: a file chowned to nobody)', () => {
    const f = secretFile('tok', 0o600);
    fs.chownSync(f, 65534, 65534);
    expect(() => readSecret({ 'token-file': f }, HOST_TOKEN, { environment: {} }))
      .toThrow(`--token-file ${f} belongs to another user (uid 65534; you are uid 0)`);
  });

  it('refuses what is not a regular file, a missing file and an empty one', () => {
    const dir = path.join(tmp, 'a-folder');
    fs.mkdirSync(dir, { mode: 0o700 });
    expect(() => readSecret({ 'token-file': dir }, HOST_TOKEN, { environment: {} })).toThrow(`--token-file ${dir} is not a regular file`);
    expect(() => readSecret({ 'token-file': path.join(tmp, 'none') }, HOST_TOKEN, { environment: {} })).toThrow('does not exist');
    const empty = secretFile('\n', 0o600);
    expect(() => readSecret({ 'token-file': empty }, HOST_TOKEN, { environment: { GATEWAY_TOKEN: 'x' } })).toThrow(`--token-file ${empty} is empty`);
  });

  it('refuses the secret as an option, even with the variable set, naming the variable and the file option', () => {
    expect(() => readSecret({ token: 'tok' }, HOST_TOKEN, { environment: { GATEWAY_TOKEN: 'tok' } }))
      .toThrow('--token would show the gateway token (a host or admin token) to every user of this machine (in the process list): '
        + 'set GATEWAY_TOKEN, or pass --token-file <file> (a file only you can read: chmod 600 <file>)');
  });

  it('a required secret that is missing names both ways to give it; an optional one is undefined', () => {
    expect(() => readSecret({}, HOST_TOKEN, { required: true, environment: {} }))
      .toThrow('the gateway token (a host or admin token) is required: set GATEWAY_TOKEN, or pass --token-file <file>');
    expect(readSecret({}, PLUGIN_TOKEN, { environment: { GATEWAY_PLUGIN_TOKEN: '' } })).toBeUndefined();
  });
});

describe('the commands refuse a secret on their command line (nothing started, the secret not echoed)', () => {
  const cli = (args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], {
    cwd: PROJECT_DIR, encoding: 'utf8', timeout: 120_000, env: { ...process.env, GATEWAY_TOKEN: '', DATABASE_URL: '', ...env },
  });
  const cases: [string[], RegExp][] = [
    [['demo', '--url', 'http://127.0.0.1:1/graphql', '--token', 'SeCrEt-1'], /--token would show .* set GATEWAY_TOKEN, or pass --token-file <file>/],
    [['demo', '--plugin-token=SeCrEt-1'], /--plugin-token would show the plugin token .* set GATEWAY_PLUGIN_TOKEN, or pass --plugin-token-file <file>/],
    [['bridge', 'opencode', '--url', 'http://127.0.0.1:1', '--token', 'SeCrEt-1'], /--token would show .* set GATEWAY_TOKEN, or pass --token-file/],
    [['bridge', 'opencode', '--serve', '--password', 'SeCrEt-1'], /--password would show the proxy password .* set OPENCODE_PROXY_PASSWORD, or pass --password-file/],
    [['bridge', 'opencode', '--url', 'http://127.0.0.1:1', '--opencode-password', 'SeCrEt-1'], /--opencode-password would show the password of the OpenCode server .* set OPENCODE_SERVER_PASSWORD, or pass --opencode-password-file/],
    [['host', 'claude-code', '--dir', '/nonexistent/never-made', '--token', 'SeCrEt-1'], /--token would show .* set GATEWAY_TOKEN, or pass --token-file/],
  ];
  for (const [args, message] of cases) {
    it(`gateway ${args.join(' ')}`, () => {
      const r = cli(args, { GATEWAY_TOKEN: 'from-env' });
      expect(r.status).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^gateway: ${message.source}`))]);
      expect(r.stdout + r.stderr).not.toContain('SeCrEt-1');
    });
  }
  it('a token file others can read stops the command with the chmod that fixes it', () => {
    const f = secretFile('tok', 0o644);
    const r = cli(['host', 'claude-code', '--dir', path.join(tmp, 'cc-never'), '--token-file', f]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(`gateway: --token-file ${f} can be read or changed by other users (mode 0644): run \`chmod 600 ${f}\``);
    const missing = cli(['bridge', 'opencode', '--url', 'http://127.0.0.1:1', '--state', path.join(tmp, 'never.json')]);
    expect(missing.stderr.trim()).toMatch(/^gateway: the gateway token \(a host or admin token\) is required: set GATEWAY_TOKEN, or pass --token-file <file>/);
    expect(fs.existsSync(path.join(tmp, 'never.json'))).toBe(false);
  });
});

describe('the demo with its tokens from a file and from the environment', () => {
  let g: TestGateway;
  beforeAll(async () => { g = await startTestGateway(); }, 120_000);
  afterAll(async () => { await g?.stop(); });
  const sessionsOf = async (id: string) => (await g.gql(`query($id: ID!) { session(id: $id) { id title } }`, { id })).data.session;

  it('--token-file (an admin token, mode 0600): the demo runs', async () => {
    const env: NodeJS.ProcessEnv = {};
    const demo = await runDemo(['--url', g.url, '--token-file', secretFile(`${g.admin}\n`, 0o600)], () => {}, env);
    expect(await sessionsOf(demo.sessionID)).toEqual({ id: demo.sessionID, title: 'Demo: fix the greeting' });
  }, 120_000);

  it('GATEWAY_TOKEN (a host token) with the plugin side\'s own token in GATEWAY_PLUGIN_TOKEN: the demo runs', async () => {
    const env: NodeJS.ProcessEnv = { GATEWAY_TOKEN: await g.token('host'), GATEWAY_PLUGIN_TOKEN: await g.token('plugin') };
    const demo = await runDemo(['--url', g.url], () => {}, env);
    expect(await sessionsOf(demo.sessionID)).toEqual({ id: demo.sessionID, title: 'Demo: fix the greeting' });
    expect(env).toEqual({}); // both taken out of the environment
  }, 120_000);
});
