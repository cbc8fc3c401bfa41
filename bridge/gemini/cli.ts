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
import { HOST_TOKEN, PLUGIN_TOKEN, readSecret } from '../../cli/credentials.js';
import { optionsOf } from '../../cli/commands.js';

const defaultDir = () => process.env.GATEWAY_GEMINI_DIR ?? path.join(os.homedir(), '.gateway', 'gemini');

export async function runGeminiHostCommand(rest: string[]): Promise<void> {
  const { values } = parseArgs({ args: rest, options: optionsOf('host gemini') });
  const dir = path.resolve(values.dir ?? defaultDir());
  const token = readSecret(values, HOST_TOKEN, { required: true });
  const pluginToken = readSecret(values, PLUGIN_TOKEN);
  const log = (m: string) => console.error(`[gemini] ${m}`);
  const host = new GeminiHost({
    gatewayUrl: values.gateway ?? process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', hostToken: token,
    pluginToken, dir, port: values.port ? Number(values.port) : undefined,
    leaseMs: values['lease-ms'] ? Number(values['lease-ms']) : undefined, log,
    models: values.models ? values.models.split(',').map((m) => m.trim()).filter(Boolean) : undefined,
    promptArgs: values['prompt-args'] ? values['prompt-args'].split(/\s+/).filter(Boolean) : undefined,
  });
  await host.start();
  log(`ready: run Gemini CLI with \`gateway gemini …\` (directory ${dir})`);
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

export async function runGeminiLauncher(args: string[]): Promise<void> {
  let dir = defaultDir();
  if (args[0] === '--dir') { dir = args[1]; args = args.slice(2); }
  const l = await launchGemini({ dir: path.resolve(dir), args });
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => { l.child.kill(s); });
  const r = await l.exited;
  // Gemini CLI exits 0 after a refused prompt: the refusals go to standard error, where a script or a user sees them.
  for (const why of r.refused) process.stderr.write(`gateway: the Gemini CLI host refused ${why}\n`);
  process.exit(r.code ?? (r.signal ? 128 + (os.constants.signals[r.signal] ?? 0) : 1));
}
