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
import fs from 'node:fs';
import path from 'node:path';
import { prepareHostDir } from './local-channel.js';

export const HOOK_EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'StopFailure', 'SubagentStart', 'SubagentStop', 'SessionEnd'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

const SCRIPT = `#!/usr/bin/env bash
# gateway host claude-code: forwards a Claude Code hook to the host (bridge/claude-code/hook.ts).
# usage: gateway-hook.sh <event> <open|closed>
# Builtins only (read, printf, the /dev/tcp redirection) but for the tool hooks' input: bash reads a pipe one
# byte per system call, so an input that can be large (a tool's input or output: 400 KB took 1.4 s) is read
# by cat (one process, ~30 ms) and the small ones (prompt, stop, session) by read.
LC_ALL=C
ev=$1 fail=$2
# A run the host makes itself (compaction, a hidden completion): not mirrored, never refused.
[ -n "\${GATEWAY_CLAUDE_HIDDEN:-}" ] && exit 0
dir=\${BASH_SOURCE[0]%/*}
case "$ev" in PreToolUse|PostToolUse) body=$(cat) ;; *) IFS= read -r -d '' body ;; esac
down() {
  if [ "$fail" = closed ] && { [ "$ev" = UserPromptSubmit ] || [ "$ev" = PreToolUse ]; }; then
    printf '%s\\n' "refused: the gateway's Claude Code host cannot be reached ($1), and this session is fronted by the gateway" >&2
    exit 2
  fi
  exit 0
}
read -r port < "$dir/host.port" 2>/dev/null || down "no host.port"
read -r secret < "$dir/host.secret" 2>/dev/null || down "no host.secret"
{ exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || down "connection refused"
printf 'POST /hook/%s HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nX-Gateway-Host-Secret: %s\\r\\nX-Launch: %s\\r\\nX-Ppid: %s\\r\\nContent-Length: %d\\r\\n\\r\\n%s' \\
  "$ev" "$secret" "\${GATEWAY_CLAUDE_LAUNCH:-}" "$PPID" "\${#body}" "$body" >&3 2>/dev/null || down "write failed"
IFS= read -t 100 -r status <&3 || down "no answer within 100 s"
case "$status" in "HTTP/1."?" 200"*) ;; "HTTP/1."?" 401"*) down "the host at port $port refused this hook's secret" ;; *) down "bad answer" ;; esac
while IFS= read -r line <&3 && [ "\${line%$'\\r'}" != "" ]; do :; done
IFS= read -r code <&3
msg=
while IFS= read -r line <&3 || [ -n "$line" ]; do msg+="$line"$'\\n'; done
exec 3<&-
if [ "$code" = 2 ]; then printf '%s' "\${msg:-refused}" >&2; exit 2; fi
exit 0
`;

/** Writes the hook script into `dir` (idempotent); answers its path. */
export function writeHookScript(dir: string): string {
  prepareHostDir(dir);
  const file = path.join(dir, 'gateway-hook.sh');
  let same = false;
  try { same = fs.readFileSync(file, 'utf8') === SCRIPT; } catch { /* absent */ }
  if (!same) {
    fs.writeFileSync(`${file}.tmp`, SCRIPT, { mode: 0o700 });
    fs.renameSync(`${file}.tmp`, file);
  } else if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o700);
  return file;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

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
