// `GATEWAY_TOKEN=… gateway host codex [--dir DIR] [--gateway URL] [--token-file F] [--plugin-token-file F] [--port N] [--models id,…] [--prompt-args ARGS] [--print-hooks] [--trust]`
// `gateway codex [--dir DIR] [codex arguments…]`
//
// The host keeps its state, the hook script, its secret and its port in --dir (default $GATEWAY_CODEX_DIR, else
// ~/.gateway/codex). One process: SIGTERM/SIGINT stop it cleanly.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CodexHost } from './host.js';
import { findCodexBinary, hooksJson, launchCodex, writeHookScript } from './launch.js';
import { trustHostHooks } from './trust.js';
import { argsOf, optionsOf } from '../../cli/commands.js';
import { hostCommandOptions, runLauncher, serveHost } from '../hooks-host/cli.js';

const defaultDir = () => process.env.GATEWAY_CODEX_DIR ?? path.join(os.homedir(), '.gateway', 'codex');

export async function runCodexHostCommand(rest: string[]): Promise<void> {
  const { values } = parseArgs({ args: argsOf('host codex', rest), options: optionsOf('host codex') });
  const { dir, log, host } = hostCommandOptions(values, defaultDir, 'codex');
  if (values['print-hooks']) {
    process.stdout.write(JSON.stringify(hooksJson(writeHookScript(dir)), null, 2) + '\n');
    process.exit(0);
  }
  if (values.trust) {
    const bin = findCodexBinary();
    if (!bin) throw new Error('the codex binary was not found (install @openai/codex, or set CODEX_BIN)');
    const r = await trustHostHooks({ bin, script: writeHookScript(dir), cwd: process.cwd(), env: process.env });
    console.log(`trusted ${r.trusted.length} hook(s) of the Codex host (${dir})${r.already.length ? `; ${r.already.length} were trusted already` : ''}`);
    for (const k of r.trusted) console.log(`  ${k}`);
    if (r.missing.length) console.error(`gateway: Codex's configuration has no hook of the host for ${r.missing.join(', ')}: the host does not see those events (gateway host codex --print-hooks)`);
    process.exit(0);
  }
  await serveHost(new CodexHost(host()), log, `ready: run Codex with \`gateway codex …\` (directory ${dir})`);
}

export async function runCodexLauncher(args: string[]): Promise<void> {
  await runLauncher(args, defaultDir, 'Codex', launchCodex);
}
