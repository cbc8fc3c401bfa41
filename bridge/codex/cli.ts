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
import { HOST_TOKEN, PLUGIN_TOKEN, readSecret } from '../../cli/credentials.js';
import { argsOf, optionsOf } from '../../cli/commands.js';

const defaultDir = () => process.env.GATEWAY_CODEX_DIR ?? path.join(os.homedir(), '.gateway', 'codex');

export async function runCodexHostCommand(rest: string[]): Promise<void> {
  const { values } = parseArgs({ args: argsOf('host codex', rest), options: optionsOf('host codex') });
  const dir = path.resolve(values.dir ?? defaultDir());
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
  const token = readSecret(values, HOST_TOKEN, { required: true });
  const pluginToken = readSecret(values, PLUGIN_TOKEN);
  const log = (m: string) => console.error(`[codex] ${m}`);
  const host = new CodexHost({
    gatewayUrl: values.gateway ?? process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', hostToken: token,
    pluginToken, dir, port: values.port ? Number(values.port) : undefined,
    leaseMs: values['lease-ms'] ? Number(values['lease-ms']) : undefined, log,
    models: values.models ? values.models.split(',').map((m) => m.trim()).filter(Boolean) : undefined,
    // The arguments of the runs that carry out PROMPT commands (review comments sent to the agent), split on spaces.
    promptArgs: values['prompt-args'] ? values['prompt-args'].split(/\s+/).filter(Boolean) : undefined,
  });
  await host.start();
  log(`ready: run Codex with \`gateway codex …\` (directory ${dir})`);
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

export async function runCodexLauncher(args: string[]): Promise<void> {
  let dir = defaultDir();
  if (args[0] === '--dir') { dir = args[1]; args = args.slice(2); }
  const l = await launchCodex({ dir: path.resolve(dir), args });
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => { l.child.kill(s); });
  const r = await l.exited;
  // `codex exec` exits 0 after a refused prompt: the refusals go to standard error, where a script or a user sees them.
  for (const why of r.refused) process.stderr.write(`gateway: the Codex host refused ${why}\n`);
  process.exit(r.code ?? (r.signal ? 128 + (os.constants.signals[r.signal] ?? 0) : 1));
}
