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
import { HOST_TOKEN, PLUGIN_TOKEN, readSecret } from '../../cli/credentials.js';
import { argsOf, commandOf, helpOf, optionsOf } from '../../cli/commands.js';

const defaultDir = () => process.env.GATEWAY_CLAUDE_DIR ?? path.join(os.homedir(), '.gateway', 'claude-code');

export async function runHostCommand(args: string[]): Promise<void> {
  const [target, ...rest] = args;
  if (target !== 'claude-code') throw new Error(helpOf(commandOf('host claude-code')));
  const { values } = parseArgs({ args: argsOf('host claude-code', rest), options: optionsOf('host claude-code') });
  const dir = path.resolve(values.dir ?? defaultDir());
  if (values['print-settings']) {
    process.stdout.write(JSON.stringify(hookSettings(writeHookScript(dir), 'open'), null, 2) + '\n');
    process.exit(0);
  }
  const token = readSecret(values, HOST_TOKEN, { required: true });
  const pluginToken = readSecret(values, PLUGIN_TOKEN);
  const log = (m: string) => console.error(`[claude-code] ${m}`);
  const host = new ClaudeCodeHost({
    gatewayUrl: values.gateway ?? process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', hostToken: token,
    pluginToken, dir, port: values.port ? Number(values.port) : undefined,
    leaseMs: values['lease-ms'] ? Number(values['lease-ms']) : undefined, log,
    models: values.models ? values.models.split(',').map((m) => m.trim()).filter(Boolean) : undefined,
    // The arguments of the runs that carry out PROMPT commands (review comments sent to the agent), split on spaces.
    promptArgs: values['prompt-args'] ? values['prompt-args'].split(/\s+/).filter(Boolean) : undefined,
  });
  await host.start();
  log(`ready: run Claude Code with \`gateway claude-code …\` (directory ${dir})`);
  let stopping = false;
  const shutdown = async (sig: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log(`${sig}: stopping`);
    await host.stop().catch((e) => log(`stop: ${e?.message ?? e}`));
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

export async function runClaudeLauncher(args: string[]): Promise<void> {
  let dir = defaultDir();
  if (args[0] === '--dir') { dir = args[1]; args = args.slice(2); }
  const l = await launchClaude({ dir: path.resolve(dir), args });
  // Signals the terminal sends reach Claude Code itself (same process group); the launcher only waits.
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => { l.child.kill(s); });
  const r = await l.exited;
  // Claude Code decides the exit code: `-p` exits 0 after a refused prompt, with the refusal only in its
  // result text. The refusals go to standard error too, where a script or a user sees them.
  for (const why of r.refused) process.stderr.write(`gateway: the Claude Code host refused ${why}\n`);
  process.exit(r.code ?? (r.signal ? 128 + (os.constants.signals[r.signal] ?? 0) : 1));
}
