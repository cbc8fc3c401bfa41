// The hooks the Claude Code host installs into Claude Code: one bash script (no Node start-up on the path of
// every prompt and tool call: a hook is a bash process and one loopback HTTP request) and the settings that
// run it for every event the host follows.
//
// The script reads the host's port from `<dir>/host.port` (written by the host at start, so settings stay
// valid across host restarts) and its secret from `<dir>/host.secret` (local-channel.ts), forwards the hook's JSON (stdin) to `POST /hook/<event>` with the launch token
// (`GATEWAY_CLAUDE_LAUNCH`, set by `gateway claude-code`) and its parent's PID (Claude Code), and answers with
// the host's decision: exit 0, or exit 2 with the reason on stderr (Claude Code blocks the prompt or the tool
// call). When the host cannot be reached or does not answer within 100 s (Claude Code lets a hook through when
// its own 120 s timeout kills it, so the script answers first): `closed` (sessions the gateway fronts) refuses
// prompts and tool calls, `open` (sessions it only observes) lets them through; other events never block.
import { shellQuote as quote, writeHookScript as writeScript, type HookScriptSpec } from '../hooks-host/hook-script.js';
import { CLAUDE_CODE_NAMES } from './local-channel.js';

/** What a hook of Claude Code's sends on its stdin (the fields the host reads; the rest is kept as it came). */
export interface HookInput {
  session_id?: string;
  transcript_path?: string;
  cwd?: string;
  prompt_id?: string;
  hook_event_name?: string;
  prompt?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  tool_use_id?: string;
  last_assistant_message?: string;
  [k: string]: unknown;
}

export const HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'StopFailure', 'SubagentStart', 'SubagentStop', 'SessionEnd'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Claude Code's hook script (the kit's, bridge/hooks-host/hook-script.ts): Claude Code lets a hook through when its 120 s timeout kills it, so the script answers within 100 s. */
export const CLAUDE_HOOK_SCRIPT: HookScriptSpec = {
  names: CLAUDE_CODE_NAMES, launchVar: 'GATEWAY_CLAUDE_LAUNCH', hiddenVar: 'GATEWAY_CLAUDE_HIDDEN',
  largeEvents: ['PreToolUse', 'PostToolUse'], admittingEvents: ['UserPromptSubmit', 'PreToolUse'], answerWithinS: 100,
};

/** Writes the hook script into `dir` (idempotent); answers its path. */
export function writeHookScript(dir: string): string {
  return writeScript(dir, CLAUDE_HOOK_SCRIPT);
}

/** Claude Code settings (`--settings FILE`, or merged into ~/.claude/settings.json) running the hook for every event. */
export function hookSettings(script: string, mode: 'open' | 'closed', extra: Record<string, unknown> = {}): Record<string, unknown> {
  const hooks: Record<string, unknown[]> = {};
  for (const ev of HOOK_EVENTS) {
    const entry: Record<string, unknown> = { hooks: [{ type: 'command', command: `bash ${quote(script)} ${ev} ${mode}`, timeout: 120 }] };
    if (ev === 'PreToolUse' || ev === 'PostToolUse' || ev === 'SubagentStart' || ev === 'SubagentStop' || ev === 'StopFailure') entry.matcher = '*';
    hooks[ev] = [entry];
  }
  return { ...extra, hooks };
}
