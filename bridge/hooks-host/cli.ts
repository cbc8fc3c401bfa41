// What the command lines of the hooks hosts share: `gateway host <agent>` (the options every such host takes, and
// running it until SIGINT or SIGTERM) and `gateway <agent>` (the launcher: waiting for the agent, the refusals on
// standard error, the agent's exit code). Each agent's cli.ts adds only its own options and its launcher.
import os from 'node:os';
import path from 'node:path';
import { HOST_TOKEN, PLUGIN_TOKEN, readSecret } from '../../cli/credentials.js';
import type { HooksHostOptions } from './hooks-host.js';

/** What every hooks host's command accepts (declared per command in cli/commands.ts), as parseArgs gives it. */
export interface HostCommandValues {
  dir?: string; gateway?: string; port?: string; 'lease-ms'?: string; models?: string; 'prompt-args'?: string;
  [option: string]: unknown;
}

/** The host's directory, its log, and its options (read when the host is made: they require its token). */
export function hostCommandOptions(values: HostCommandValues, defaultDir: () => string, agent: string) {
  const dir = path.resolve(values.dir ?? defaultDir());
  const log = (m: string) => console.error(`[${agent}] ${m}`);
  const host = (): HooksHostOptions & { models?: string[]; promptArgs?: string[] } => ({
    gatewayUrl: values.gateway ?? process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql',
    hostToken: readSecret(values, HOST_TOKEN, { required: true }),
    pluginToken: readSecret(values, PLUGIN_TOKEN),
    dir, port: values.port ? Number(values.port) : undefined,
    leaseMs: values['lease-ms'] ? Number(values['lease-ms']) : undefined, log,
    models: values.models ? values.models.split(',').map((m) => m.trim()).filter(Boolean) : undefined,
    // The arguments of the runs that carry out PROMPT commands (review comments sent to the agent), split on spaces.
    promptArgs: values['prompt-args'] ? values['prompt-args'].split(/\s+/).filter(Boolean) : undefined,
  });
  return { dir, log, host };
}

/** Starts the host and keeps it until SIGINT or SIGTERM (a second one exits at once). */
export async function serveHost(host: { start(): Promise<void>; stop(): Promise<void> }, log: (m: string) => void, ready: string): Promise<void> {
  await host.start();
  log(ready);
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

interface Launched {
  child: { kill(signal: NodeJS.Signals): unknown };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; refused: string[] }>;
}

/**
 * `gateway <agent> [--dir DIR] [agent arguments…]`: runs the agent through `launch`, passes the terminal's signals on,
 * and exits as the agent did. The agents exit 0 after a refused prompt (the refusal only in their own output), so the
 * host's refusals go to standard error too, where a script or a user sees them.
 */
export async function runLauncher(args: string[], defaultDir: () => string, agentName: string,
  launch: (o: { dir: string; args: string[] }) => Promise<Launched>): Promise<never> {
  let dir = defaultDir();
  if (args[0] === '--dir') { dir = args[1]; args = args.slice(2); }
  const l = await launch({ dir: path.resolve(dir), args });
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => { l.child.kill(s); });
  const r = await l.exited;
  for (const why of r.refused) process.stderr.write(`gateway: the ${agentName} host refused ${why}\n`);
  process.exit(r.code ?? (r.signal ? 128 + (os.constants.signals[r.signal] ?? 0) : 1));
}
