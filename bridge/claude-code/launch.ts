// `gateway claude-code [claude arguments…]`: runs Claude Code with the host's hooks in force, so the gateway
// fronts the session (its seal can answer SessionSealed). The launcher asks the running host
// (`gateway host claude-code`, found through `<dir>/host.port`, with the secret of `<dir>/host.secret`) for a launch token and a settings file, runs
// `claude --settings <file> …` with GATEWAY_CLAUDE_LAUNCH=<token>, reports Claude Code's PID (so the seal can
// stop it) and its exit (so a turn it left running is settled INTERRUPTED), and exits with Claude Code's code.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { sessionArgs } from './launches.js';
import { hostCall as kitHostCall } from '../hooks-host/channel.js';
import { CLAUDE_CODE_NAMES } from './local-channel.js';

/** The `claude` binary: CLAUDE_BIN, else the platform package `@anthropic-ai/claude-code-linux-x64` (an optional dependency). */
export function findClaudeBinary(): string | null {
  if (process.env.CLAUDE_BIN) return fs.existsSync(process.env.CLAUDE_BIN) ? process.env.CLAUDE_BIN : null;
  try {
    const req = createRequire(import.meta.url);
    const pkg = req.resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/package.json`);
    const bin = path.join(path.dirname(pkg), 'claude');
    return fs.existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

/** A request to the Claude Code host of `dir` (the kit's launcher side of the channel). */
const hostCall = (dir: string, route: string, body: unknown) => kitHostCall(dir, CLAUDE_CODE_NAMES, route, body);

/**
 * Claude Code run as root refuses to start with `bypassPermissions` (`--dangerously-skip-permissions`), and
 * without any permission a headless run denies every tool call that needs one: said before it starts, with
 * what works instead (`--allowedTools`, checked with 2.1.332 as root).
 */
export function checkPermissionArgs(args: string[], uid = typeof process.getuid === 'function' ? process.getuid() : -1): void {
  const bypass = args.some((a, i) => a === '--dangerously-skip-permissions' || a === '--permission-mode=bypassPermissions'
    || (a === '--permission-mode' && args[i + 1] === 'bypassPermissions'));
  if (uid === 0 && bypass) {
    throw new Error('Claude Code refuses to bypass permissions when run as root: allow the tools it may use instead, '
      + 'e.g. `gateway claude-code --allowedTools "Bash Edit Write Read" -p …`, or `permissions.allow` in .claude/settings.json');
  }
}

export interface Launched {
  child: ChildProcess;
  token: string;
  /** Resolves when Claude Code exited and the host was told; `refused`: why the host refused its prompts or tool calls. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; refused: string[] }>;
}

export interface LaunchOptions {
  /** The host's directory (`--dir` of `gateway host claude-code`). */
  dir: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Settings merged into the launch's settings file beside the hooks (e.g. permissions). */
  settings?: Record<string, unknown>;
  /**
   * 'pipe': standard output and error piped, standard input closed (`claude -p` waits 3 s for a piped stdin that
   * stays open); 'pipe-input': standard input piped too (`--input-format stream-json`: prompts written to it).
   */
  stdio?: 'inherit' | 'pipe' | 'pipe-input';
  /** Own process group (the seal stops the whole group). Default: when stdin is not a terminal. */
  detached?: boolean;
  bin?: string;
  /** The host's own launch for a PROMPT command (review comments sent to the agent): its prompt is the command's. */
  commandID?: string;
}

export async function launchClaude(o: LaunchOptions): Promise<Launched> {
  const bin = o.bin ?? findClaudeBinary();
  if (!bin) throw new Error('the claude binary was not found (install @anthropic-ai/claude-code, or set CLAUDE_BIN)');
  checkPermissionArgs(o.args);
  const cwd = o.cwd ?? process.cwd();
  const { token, settings } = await hostCall(o.dir, '/launch', { cwd, settings: o.settings ?? {}, ...sessionArgs(o.args), ...(o.commandID ? { commandID: o.commandID } : {}) });
  const detached = o.detached ?? !process.stdin.isTTY;
  const child = spawn(bin, ['--settings', settings, ...o.args], {
    cwd, env: { ...(o.env ?? process.env), GATEWAY_CLAUDE_LAUNCH: token }, stdio: o.stdio === 'pipe' ? ['ignore', 'pipe', 'pipe'] : o.stdio === 'pipe-input' ? 'pipe' : 'inherit', detached,
  });
  const exitedRaw = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const spawned = new Promise<void>((r, j) => { child.once('spawn', () => r()); child.once('error', j); });
  await spawned;
  await hostCall(o.dir, '/launched', { token, pid: child.pid });
  const exited = exitedRaw.then(async (x) => {
    const r = await hostCall(o.dir, '/exited', { token, code: x.code, signal: x.signal }).catch(() => null); // host down: it finds the PID gone at its next start
    return { ...x, refused: Array.isArray(r?.refused) ? r.refused.map(String) : [] };
  });
  return { child, token, exited };
}
