// `GATEWAY_TOKEN=… gateway host claude-code [--dir DIR] [--gateway URL] [--token-file F] [--plugin-token-file F] [--port N] [--prompt-args ARGS] [--print-settings]`
// `gateway claude-code [--dir DIR] [claude arguments…]`
//
// The host keeps its state, the hook script, the settings files and its port in --dir (default
// $GATEWAY_CLAUDE_DIR, else ~/.gateway/claude-code). One process: SIGTERM/SIGINT stop it cleanly.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ClaudeCodeHost } from './host.js';
import { hookSettings, writeHookScript } from './hook.js';
import { launchClaude } from './launch.js';
import { argsOf, commandOf, helpOf, optionsOf } from '../../cli/commands.js';
import { hostCommandOptions, runLauncher, serveHost } from '../hooks-host/cli.js';

const defaultDir = () => process.env.GATEWAY_CLAUDE_DIR ?? path.join(os.homedir(), '.gateway', 'claude-code');

export async function runHostCommand(args: string[]): Promise<void> {
  const [target, ...rest] = args;
  if (target !== 'claude-code') throw new Error(helpOf(commandOf('host claude-code')));
  const { values } = parseArgs({ args: argsOf('host claude-code', rest), options: optionsOf('host claude-code') });
  const { dir, log, host } = hostCommandOptions(values, defaultDir, 'claude-code');
  if (values['print-settings']) {
    process.stdout.write(JSON.stringify(hookSettings(writeHookScript(dir), 'open'), null, 2) + '\n');
    process.exit(0);
  }
  await serveHost(new ClaudeCodeHost(host()), log, `ready: run Claude Code with \`gateway claude-code …\` (directory ${dir})`);
}

/** `gateway claude-code`: signals the terminal sends reach Claude Code itself (same process group); the launcher waits. */
export async function runClaudeLauncher(args: string[]): Promise<void> {
  await runLauncher(args, defaultDir, 'Claude Code', launchClaude);
}
