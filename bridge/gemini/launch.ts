// `gateway gemini [--dir DIR] [gemini arguments…]`: runs Gemini CLI with the host's hooks in force, so the gateway
// fronts the session (its seal can answer SessionSealed). Gemini CLI takes hooks only from settings files (no flag,
// no variable): the launcher writes them, named `gateway-<Event>`, into the user's settings
// (`$GEMINI_CLI_HOME/.gemini/settings.json`, else `~/.gemini/settings.json`) before every start, keeping every
// other setting, and puts back what switches them off there (`hooksConfig.enabled: false`, their names in
// `hooksConfig.disabled`): the agent can edit that file, and Gemini CLI reads it at start. The system settings
// layer would be out of the agent's reach, but Gemini CLI reads it only from a root-owned path. `--skip-trust`
// (and no trusted-folders file, no GEMINI_CLI_TRUST_WORKSPACE) keeps a project's `.gemini/settings.json` from
// being loaded, so a project cannot switch them off either. A hook answers `auto`: fail closed (refused when the
// host cannot answer) in a launched process (GATEWAY_GEMINI_LAUNCH set), open in any other. Arguments that
// would run tools without the hooks (`--acp`: no tool hooks; `--sandbox`: the tools run in a container, out of the
// seal's reach) are refused. GEMINI_CLI_NO_RELAUNCH=true keeps Gemini CLI one process (else it re-spawns itself
// and its parent ignores SIGINT and SIGTERM): the PID the launcher reports is the one that runs the session.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shellQuote, writeHookScript as writeScript, type HookScriptSpec } from '../hooks-host/hook-script.js';
import { hostCall as kitHostCall } from '../hooks-host/channel.js';
import type { AgentNames } from '../hooks-host/local-channel.js';
import { isObject, type JsonObject } from './chat.js';

export const GEMINI_NAMES: AgentNames = { label: 'Gemini CLI', command: 'gemini', transcript: 'chat history' };
export const GEMINI_VERSION = '0.61.0';
export const LAUNCH_VAR = 'GATEWAY_GEMINI_LAUNCH';
export const HIDDEN_VAR = 'GATEWAY_GEMINI_HIDDEN';

/** The hook events the host follows (BeforeModel, AfterModel and PreCompress, which run at every model call or chunk, are not). */
export const GEMINI_HOOK_EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionEnd'] as const;
export const GEMINI_ADMITTING = ['BeforeAgent', 'BeforeTool'] as const;
/** Gemini CLI lets a hook through when it outlives its timeout (fail open): the script answers, refusing, well before. */
const HOOK_TIMEOUT_MS = 60_000;

export const GEMINI_HOOK_SCRIPT: HookScriptSpec = {
  names: GEMINI_NAMES, launchVar: LAUNCH_VAR, hiddenVar: HIDDEN_VAR,
  largeEvents: ['BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent'], admittingEvents: GEMINI_ADMITTING, answerWithinS: 50,
};

export const writeHookScript = (dir: string) => writeScript(dir, GEMINI_HOOK_SCRIPT);

const hookName = (ev: string) => `gateway-${ev}`;

/** The settings' `hooks` entries of the host's script. */
export function hookEntries(script: string): Record<string, JsonObject[]> {
  const hooks: Record<string, JsonObject[]> = {};
  for (const ev of GEMINI_HOOK_EVENTS) {
    hooks[ev] = [{ matcher: '*', hooks: [{ name: hookName(ev), type: 'command', command: `bash ${shellQuote(script)} ${ev} auto`, timeout: HOOK_TIMEOUT_MS }] }];
  }
  return hooks;
}

const ours = (entry: unknown): boolean => isObject(entry) && Array.isArray(entry.hooks) && entry.hooks.some((h) => isObject(h) && typeof h.name === 'string' && h.name.startsWith('gateway-'));

/**
 * The settings with the host's hooks in force: its entries replace any earlier ones of the gateway, the user's own
 * hooks stay; `hooksConfig.enabled` true and none of them in `hooksConfig.disabled`; and session retention off
 * (Gemini CLI 0.61.0's clean-up deletes a session resumed in a later minute than it began: the history mirrored).
 */
export function withHooks(settings: JsonObject, script: string): JsonObject {
  const out: JsonObject = structuredClone(settings);
  const hooks: JsonObject = isObject(out.hooks) ? out.hooks : {};
  for (const [ev, entries] of Object.entries(hookEntries(script))) {
    const kept = Array.isArray(hooks[ev]) ? hooks[ev].filter((e: unknown) => !ours(e)) : [];
    hooks[ev] = [...kept, ...entries];
  }
  out.hooks = hooks;
  const hc: JsonObject = isObject(out.hooksConfig) ? out.hooksConfig : {};
  hc.enabled = true;
  if (Array.isArray(hc.disabled)) hc.disabled = hc.disabled.filter((d: unknown) => !(typeof d === 'string' && (d.startsWith('gateway-') || d.includes(script))));
  out.hooksConfig = hc;
  const general: JsonObject = isObject(out.general) ? out.general : {};
  general.sessionRetention = { ...(isObject(general.sessionRetention) ? general.sessionRetention : {}), enabled: false };
  out.general = general;
  return out;
}

/** Where a Gemini CLI process keeps its settings and sessions: `$GEMINI_CLI_HOME/.gemini`, else `$HOME/.gemini`. */
export function geminiDir(env: { get(k: string): string | undefined }): string | null {
  const home = env.get('GEMINI_CLI_HOME') || env.get('HOME');
  return home ? path.join(home, '.gemini') : null;
}

/** Puts the hooks into the user settings Gemini CLI will read (atomically; unchanged when they are there already). */
export function installHooks(env: NodeJS.ProcessEnv, script: string): string {
  const dir = geminiDir({ get: (k) => env[k] }) ?? path.join(os.homedir(), '.gemini');
  const file = path.join(dir, 'settings.json');
  let text = '';
  try { text = fs.readFileSync(file, 'utf8'); } catch (e: unknown) { if (!(e instanceof Error && 'code' in e && e.code === 'ENOENT')) throw e; }
  let current: unknown = {};
  if (text.trim()) {
    try { current = JSON.parse(text); } catch {
      throw new Error(`${file} is not plain JSON (comments?): the launcher cannot add the gateway's hooks to it without losing what it holds; remove the comments`);
    }
  }
  if (!isObject(current)) throw new Error(`${file} does not hold a JSON object`);
  const next = JSON.stringify(withHooks(current, script), null, 2) + '\n';
  if (next !== text) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(`${file}.gateway-${process.pid}.tmp`, next, { mode: 0o600 });
    fs.renameSync(`${file}.gateway-${process.pid}.tmp`, file);
  }
  return file;
}

/** Refuses the arguments that would let Gemini CLI run tools without the host's hooks or out of the seal's reach. */
export function checkGeminiArgs(args: string[]): void {
  for (const a of args) {
    if (a === '--') break;
    const flag = a.split('=')[0];
    if (flag === '--acp' || flag === '--experimental-acp') throw new Error(`\`${a}\`: in ACP mode Gemini CLI runs tools without its BeforeTool hooks, so the gateway could not admit them (run \`gemini\` itself for a session the gateway does not front)`);
    if ((flag === '-s' || flag === '--sandbox') && a !== '--sandbox=false') {
      throw new Error(`\`${a}\`: a sandboxed Gemini CLI runs its tools in a container, out of reach of the seal's stop`);
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the arguments say of the session: `--resume <uuid>` / `--session-id <uuid>` name one; `--resume` otherwise may take any of the directory. */
export function sessionArgs(args: string[]): { names: string | null; anyInCwd: boolean } {
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].includes('=') && args[i].startsWith('--') ? [args[i].slice(0, args[i].indexOf('=')), args[i].slice(args[i].indexOf('=') + 1)] : [args[i], null];
    if (flag === '--') break;
    if (flag === '--resume' || flag === '-r' || flag === '--session-id') {
      const v = inline ?? args[i + 1] ?? '';
      if (UUID.test(v)) return { names: v.toLowerCase(), anyInCwd: false };
      if (flag !== '--session-id') return { names: null, anyInCwd: true };
    }
  }
  return { names: null, anyInCwd: false };
}

/** Gemini CLI's script (`bundle/gemini.js`, run by node): GEMINI_BIN, else the CI cache, else a `gemini` on PATH. */
export function findGeminiBinary(): string | null {
  if (process.env.GEMINI_BIN) return fs.existsSync(process.env.GEMINI_BIN) ? fs.realpathSync(process.env.GEMINI_BIN) : null;
  const cache = process.env.GEMINI_CACHE ?? `/var/cache/agent-history-gateway/gemini-${GEMINI_VERSION}`;
  const cached = path.join(cache, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
  if (fs.existsSync(cached)) return cached;
  for (const d of (process.env.PATH ?? '').split(':')) {
    const p = path.join(d, 'gemini');
    if (d && fs.existsSync(p)) return fs.realpathSync(p);
  }
  return null;
}

/**
 * Whether a process's command line is Gemini CLI's: node running its `gemini.js` (or a `gemini` link to it), node's
 * own options before it (the process Gemini CLI re-spawns itself as runs `node --max-old-space-size=… gemini.js`).
 */
export function isGemini(argv: string[]): boolean {
  const script = /(^|\/)node$/.test(argv[0] ?? '') ? argv.slice(1).find((a) => !a.startsWith('-')) : argv[0];
  return /(^|\/)gemini(\.js)?$/.test(script ?? '');
}

export interface GeminiLaunched { child: ChildProcess; token: string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; refused: string[] }> }

export interface GeminiLaunchOptions {
  dir: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** 'pipe': output piped, standard input closed (`-p` appends a piped stdin to the prompt). */
  stdio?: 'inherit' | 'pipe';
  detached?: boolean;
  bin?: string;
  /** The host's own launch for a PROMPT command (review comments sent to the agent). */
  commandID?: string;
}

const hostCall = (dir: string, route: string, body: unknown) => kitHostCall(dir, GEMINI_NAMES, route, body);

export async function launchGemini(o: GeminiLaunchOptions): Promise<GeminiLaunched> {
  const bin = o.bin ?? findGeminiBinary();
  if (!bin) throw new Error(`Gemini CLI was not found (install @google/gemini-cli@${GEMINI_VERSION}, or set GEMINI_BIN to its bundle/gemini.js)`);
  checkGeminiArgs(o.args);
  const cwd = o.cwd ?? process.cwd();
  const base = { ...(o.env ?? process.env) };
  const { token, script } = await hostCall(o.dir, '/launch', { cwd, ...sessionArgs(o.args), ...(o.commandID ? { commandID: o.commandID } : {}) });
  installHooks(base, String(script));
  // No folder trusted by a file (a trusted project's settings could switch the hooks off): the session's folder is
  // trusted by --skip-trust alone, after the settings were read.
  const trusted = path.join(o.dir, 'trusted-folders.json');
  fs.writeFileSync(trusted, '{}\n', { mode: 0o600 });
  const env: NodeJS.ProcessEnv = { ...base, GEMINI_CLI_NO_RELAUNCH: 'true', GEMINI_CLI_TRUSTED_FOLDERS_PATH: trusted, [LAUNCH_VAR]: token };
  delete env.GEMINI_CLI_TRUST_WORKSPACE;
  delete env[HIDDEN_VAR];
  const detached = o.detached ?? !process.stdin.isTTY;
  const child = spawn(process.execPath, [bin, '--skip-trust', ...o.args], { cwd, env, stdio: o.stdio === 'pipe' ? ['ignore', 'pipe', 'pipe'] : 'inherit', detached });
  const exitedRaw = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  await new Promise<void>((r, j) => { child.once('spawn', () => r()); child.once('error', j); });
  await hostCall(o.dir, '/launched', { token, pid: child.pid });
  const exited = exitedRaw.then(async (x) => {
    const r = await hostCall(o.dir, '/exited', { token, code: x.code, signal: x.signal }).catch(() => null);
    return { ...x, refused: Array.isArray(r?.refused) ? r.refused.map(String) : [] };
  });
  return { child, token, exited };
}
