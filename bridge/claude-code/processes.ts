// The processes of a Claude Code session: the kit's /proc readers and the seal's kill of a process tree
// (bridge/hooks-host/processes.ts), and what is Claude Code's: which process is Claude Code, where it keeps its
// sessions.
import path from 'node:path';
import * as kit from '../hooks-host/processes.js';
import { inside, real } from '../hooks-host/worktree.js';

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

/**
 * Why a hook's transcripts are not Claude Code session `cc`'s (null: they are): each transcript it names must lie
 * in the sessions folder of the Claude Code process it ran under (`<configDir>/projects/`), and its own be `<cc>.jsonl`.
 */
export function transcriptsRefused(cc: string, input: { transcript_path?: unknown; agent_transcript_path?: unknown }, configDir: string | null | undefined): string | null {
  const projects = configDir ? path.join(real(configDir), 'projects') : null;
  for (const t of [input.transcript_path, input.agent_transcript_path]) {
    if (t === undefined) continue;
    if (typeof t !== 'string' || !projects || !inside(real(t), projects) || real(t) === projects) {
      return `the hook names transcript ${String(t).slice(0, 500)}, outside Claude Code's own sessions (${projects ?? 'no HOME'})`;
    }
  }
  if (typeof input.transcript_path === 'string' && path.basename(input.transcript_path) !== `${cc}.jsonl`) {
    return `the hook's transcript ${input.transcript_path.slice(0, 500)} is not session ${cc.slice(0, 100)}'s`;
  }
  return null;
}
