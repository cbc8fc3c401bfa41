// The processes of a Claude Code session: the kit's /proc readers and the seal's kill of a process tree
// (bridge/hooks-host/processes.ts), and what is Claude Code's: which process is Claude Code, where it keeps its
// sessions.
import * as kit from '../hooks-host/processes.js';

export { alive, killProcessTree, type ProcessFacts } from '../hooks-host/processes.js';

/** Whether a command line is Claude Code's (the `claude` binary, or the package's script). */
export const isClaude = (argv: string[]) => /(^|\/)claude$/.test(argv[0] ?? '') || argv.join('\0').includes('claude-code');

/** The Claude Code process a hook ran under: the hook's parent or its parent's parent (a shell in between). */
export function claudeProcess(ppid: number): number | null {
  return kit.agentProcess(ppid, isClaude);
}

/** Where a Claude Code process keeps its sessions: `$CLAUDE_CONFIG_DIR`, else `$HOME/.claude`, of its own environment. */
export const claudeConfigDir = (env: Map<string, string>) => env.get('CLAUDE_CONFIG_DIR') || (env.get('HOME') ? `${env.get('HOME')}/.claude` : null);

/** The facts of process `pid` (with Claude Code's sessions folder), or null when it is gone or cannot be read. */
export const processFacts = (pid: number) => kit.processFacts(pid, claudeConfigDir);
