// `GATEWAY_TOKEN=… gateway host gemini [--dir DIR] [--gateway URL] [--token-file F] [--plugin-token-file F] [--port N] [--models id,…] [--prompt-args ARGS]`
// `gateway gemini [--dir DIR] [gemini arguments…]`
//
// The host keeps its state, the hook script, its secret and its port in --dir (default $GATEWAY_GEMINI_DIR, else
// ~/.gateway/gemini). One process: SIGTERM/SIGINT stop it cleanly.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { GeminiHost } from './host.js';
import { launchGemini } from './launch.js';
import { argsOf, optionsOf } from '../../cli/commands.js';
import { hostCommandOptions, runLauncher, serveHost } from '../hooks-host/cli.js';

const defaultDir = () => process.env.GATEWAY_GEMINI_DIR ?? path.join(os.homedir(), '.gateway', 'gemini');

export async function runGeminiHostCommand(rest: string[]): Promise<void> {
  const { values } = parseArgs({ args: argsOf('host gemini', rest), options: optionsOf('host gemini') });
  const { dir, log, host } = hostCommandOptions(values, defaultDir, 'gemini');
  await serveHost(new GeminiHost(host()), log, `ready: run Gemini CLI with \`gateway gemini …\` (directory ${dir})`);
}

export async function runGeminiLauncher(args: string[]): Promise<void> {
  await runLauncher(args, defaultDir, 'Gemini CLI', launchGemini);
}
