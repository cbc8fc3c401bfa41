// `gateway codex [--dir DIR] [codex arguments…]`: runs Codex with the host's hooks in force, so the gateway fronts
// the session (its seal can answer SessionSealed). The hooks are handed to Codex on its command line
// (`-c hooks.<Event>=[…]`, the "session flags" layer, which needs no file of the user's to change) with
// `--dangerously-bypass-hook-trust` (Codex skips untrusted hooks silently otherwise) and `-c features.hooks=true`
// last (no profile or config layer turns them off). Arguments that would switch them off are refused before
// Codex starts (`checkCodexArgs`). The launcher asks the running host (`gateway host codex`) for a launch token,
// runs the vendored `codex` binary itself (not `bin/codex.js`, which on Node 20 spawns it as a child: the seal
// needs the PID of the process that runs the session), reports its PID and its exit, and exits with its code.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { hookScript, shellQuote, writeHookScript as writeScript, type HookScriptSpec } from '../hooks-host/hook-script.js';
import { hostCall as kitHostCall } from '../hooks-host/channel.js';
import type { AgentNames } from '../hooks-host/local-channel.js';

export const CODEX_NAMES: AgentNames = { label: 'Codex', command: 'codex', transcript: 'rollout' };
export const CODEX_VERSION = '0.169.0';

/**
 * The hook events the host follows. Codex lets a hook through when it outlives its `timeout` (fail open), so the
 * script answers (refusing, in a fronted session) well before: 50 s of a 60 s timeout.
 */
export const CODEX_HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SubagentStart', 'SubagentStop', 'SessionEnd'] as const;
/** The events whose hooks take a matcher (`*`: every tool, every agent type). */
const MATCHED = new Set<string>(['PreToolUse', 'PostToolUse', 'SubagentStart', 'SubagentStop']);
const HOOK_TIMEOUT_S = 60;

export const CODEX_HOOK_SCRIPT: HookScriptSpec = {
  names: CODEX_NAMES, launchVar: 'GATEWAY_CODEX_LAUNCH', hiddenVar: 'GATEWAY_CODEX_HIDDEN',
  largeEvents: ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'SubagentStop'], admittingEvents: ['UserPromptSubmit', 'PreToolUse'], answerWithinS: 50,
};

export const writeHookScript = (dir: string) => writeScript(dir, CODEX_HOOK_SCRIPT);
export { hookScript };

/** The `-c` arguments that put the host's hooks in force (mode `closed`: fronted sessions refuse when the host is gone). */
export function hookConfigArgs(script: string, mode: 'open' | 'closed'): string[] {
  const args: string[] = [];
  for (const ev of CODEX_HOOK_EVENTS) {
    const matcher = MATCHED.has(ev) ? 'matcher="*",' : '';
    const cmd = `bash ${shellQuote(script)} ${ev} ${mode}`;
    args.push('-c', `hooks.${ev}=[{${matcher}hooks=[{type="command",command=${JSON.stringify(cmd)},timeout=${HOOK_TIMEOUT_S}}]}]`);
  }
  return args;
}

/** The same hooks as a `hooks.json` for `$CODEX_HOME` (observed sessions: the user installs and trusts them). */
export function hooksJson(script: string): Record<string, unknown> {
  const hooks: Record<string, unknown[]> = {};
  for (const ev of CODEX_HOOK_EVENTS) {
    hooks[ev] = [{ ...(MATCHED.has(ev) ? { matcher: '*' } : {}),
      hooks: [{ type: 'command', command: `bash ${shellQuote(script)} ${ev} open`, timeout: HOOK_TIMEOUT_S }] }];
  }
  return { hooks };
}

/**
 * Refuses the arguments that would let Codex run the session without the host's hooks: `--disable hooks` /
 * `codex_hooks`, `-c features.hooks=false` (and any `-c features.*hooks*` or `-c hooks…`, which would replace the
 * host's), `--ignore-user-config` is allowed (the hooks come on the command line). Throws what to do instead.
 */
export function checkCodexArgs(args: string[]): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const eq = a.indexOf('=');
    const [flag, inline] = a.startsWith('--') && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, null];
    const value = () => inline ?? args[i + 1] ?? '';
    if (flag === '--disable') {
      const v = value().trim();
      if (/^(codex_)?hooks$/.test(v)) throw new Error(`\`${a}${inline === null ? ` ${v}` : ''}\` would switch the gateway's hooks off: the session would run without the gateway's admission (run \`codex\` itself for a session the gateway does not front)`);
    }
    if (flag === '-c' || flag === '--config') {
      const kv = value();
      const key = kv.split('=')[0].trim().replace(/^"|"$/g, '');
      if (/^hooks(\.|$)/.test(key) || /^features\.(codex_)?hooks$/.test(key) || key === 'features') {
        throw new Error(`\`-c ${kv}\` would change or switch off the gateway's hooks: the session would run without the gateway's admission`);
      }
    }
    if (a === '--') break;
  }
}

const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What Codex's arguments say of the session it will run: `exec resume <id>` / `resume <id>` / `fork <id>` name
 * one (read at start); `--last`, or `resume` with no ID (the picker), may take any session of the directory.
 */
export function sessionArgs(args: string[]): { names: string | null; anyInCwd: boolean } {
  const i = args.findIndex((a) => a === 'resume' || a === 'fork');
  if (i < 0) return { names: null, anyInCwd: false };
  const rest = args.slice(i + 1);
  const id = rest.find((a) => SESSION_ID.test(a));
  if (id) return { names: id.toLowerCase(), anyInCwd: false };
  return { names: null, anyInCwd: true };
}

/** The `codex` binary: CODEX_BIN, else the platform package `@openai/codex-linux-x64` (vendored binary), else the CI cache. */
export function findCodexBinary(): string | null {
  if (process.env.CODEX_BIN) return fs.existsSync(process.env.CODEX_BIN) ? process.env.CODEX_BIN : null;
  const triple = process.arch === 'arm64' ? 'aarch64-unknown-linux-musl' : 'x86_64-unknown-linux-musl';
  const vendored = (root: string) => path.join(root, 'vendor', triple, 'bin', 'codex');
  try {
    const req = createRequire(import.meta.url);
    const bin = vendored(path.dirname(req.resolve(`@openai/codex-${process.platform}-${process.arch}/package.json`)));
    if (fs.existsSync(bin)) return bin;
  } catch { /* not installed with the package */ }
  const cache = process.env.CODEX_CACHE ?? `/var/cache/agent-history-gateway/codex-${CODEX_VERSION}`;
  const cached = vendored(path.join(cache, 'node_modules', `@openai/codex-${process.platform}-${process.arch}`));
  return fs.existsSync(cached) ? cached : null;
}

const hostCall = (dir: string, route: string, body: unknown) => kitHostCall(dir, CODEX_NAMES, route, body);

export interface CodexLaunched {
  child: ChildProcess;
  token: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; refused: string[] }>;
}

export interface CodexLaunchOptions {
  dir: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** 'pipe': output piped, standard input closed (`codex exec` reads a piped stdin that stays open). */
  stdio?: 'inherit' | 'pipe';
  detached?: boolean;
  bin?: string;
  /** The host's own launch for a PROMPT command (review comments sent to the agent): its prompt is the command's. */
  commandID?: string;
}

export async function launchCodex(o: CodexLaunchOptions): Promise<CodexLaunched> {
  const bin = o.bin ?? findCodexBinary();
  if (!bin) throw new Error(`the codex binary was not found (install @openai/codex@${CODEX_VERSION}, or set CODEX_BIN to its vendored binary)`);
  checkCodexArgs(o.args);
  const cwd = o.cwd ?? process.cwd();
  const { token, script } = await hostCall(o.dir, '/launch', { cwd, ...sessionArgs(o.args), ...(o.commandID ? { commandID: o.commandID } : {}) });
  const detached = o.detached ?? !process.stdin.isTTY;
  const ours = ['--dangerously-bypass-hook-trust', ...hookConfigArgs(script, 'closed'), '-c', 'features.hooks=true'];
  const child = spawn(bin, [...ours, ...o.args], {
    cwd, env: { ...(o.env ?? process.env), GATEWAY_CODEX_LAUNCH: token }, stdio: o.stdio === 'pipe' ? ['ignore', 'pipe', 'pipe'] : 'inherit', detached,
  });
  const exitedRaw = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  await new Promise<void>((r, j) => { child.once('spawn', () => r()); child.once('error', j); });
  await hostCall(o.dir, '/launched', { token, pid: child.pid });
  const exited = exitedRaw.then(async (x) => {
    const r = await hostCall(o.dir, '/exited', { token, code: x.code, signal: x.signal }).catch(() => null);
    return { ...x, refused: Array.isArray(r?.refused) ? r.refused.map(String) : [] };
  });
  return { child, token, exited };
}
