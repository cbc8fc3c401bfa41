// The hook script a hooks-driven host installs into its agent: one bash script (no Node start-up on the path
// of every prompt and tool call: a hook is a bash process and one loopback HTTP request).
//
// The script reads the host's port from `<dir>/host.port` (written by the host at start, so the agent's hook
// configuration stays valid across host restarts) and its secret from `<dir>/host.secret` (local-channel.ts),
// forwards the hook's JSON (stdin) to `POST /hook/<event>` with the launch token (the launcher's variable, e.g.
// GATEWAY_CLAUDE_LAUNCH) and its parent's PID (the agent, or a shell the agent ran it under), and answers with the
// host's decision: exit 0, or exit 2 with the reason on stderr (the agent blocks the prompt or the tool call).
// When the host cannot be reached or does not answer within `answerWithinS` (the agent lets a hook through when
// its own timeout kills it, so the script answers first): `closed` (sessions the gateway fronts) refuses prompts
// and tool calls, `open` (sessions it only observes) lets them through; other events never block.
import fs from 'node:fs';
import path from 'node:path';
import { prepareHostDir, type AgentNames } from './local-channel.js';

export interface HookScriptSpec {
  names: AgentNames;
  /** The variable the launcher sets to the launch token. */
  launchVar: string;
  /** Set in the runs the host makes itself (compaction, a hidden completion): the hook answers at once. */
  hiddenVar: string;
  /** Events whose input can be large (read by `cat`: bash reads a pipe one byte per system call). */
  largeEvents: readonly string[];
  /** The events that admit (a prompt, a tool call): refused in `closed` mode when the host cannot be reached. */
  admittingEvents: readonly string[];
  /** Seconds the script waits for the host's answer (below the agent's own hook timeout). */
  answerWithinS: number;
}

export function hookScript(s: HookScriptSpec): string {
  return `#!/usr/bin/env bash
# gateway host ${s.names.command}: forwards a ${s.names.label} hook to the host (bridge/hooks-host/hook-script.ts).
# usage: gateway-hook.sh <event> <open|closed|auto>
# Builtins only (read, printf, the /dev/tcp redirection) but for the large inputs: bash reads a pipe one byte
# per system call, so an input that can be large (a tool's input or output: 400 KB took 1.4 s) is read by cat
# (one process, ~30 ms) and the small ones by read.
LC_ALL=C
ev=$1 fail=$2
# auto: closed in a process the launcher started (its launch token set), open in any other.
[ "$fail" = auto ] && { [ -n "\${${s.launchVar}:-}" ] && fail=closed || fail=open; }
# A run the host makes itself (compaction, a hidden completion): not mirrored, never refused.
[ -n "\${${s.hiddenVar}:-}" ] && exit 0
dir=\${BASH_SOURCE[0]%/*}
case "$ev" in ${s.largeEvents.join('|') || '__none__'}) body=$(cat) ;; *) IFS= read -r -d '' body ;; esac
down() {
  if [ "$fail" = closed ] && { ${s.admittingEvents.map((e) => `[ "$ev" = ${e} ]`).join(' || ')}; }; then
    printf '%s\\n' "refused: the gateway's ${s.names.label} host cannot be reached ($1), and this session is fronted by the gateway" >&2
    exit 2
  fi
  exit 0
}
read -r port < "$dir/host.port" 2>/dev/null || down "no host.port"
read -r secret < "$dir/host.secret" 2>/dev/null || down "no host.secret"
{ exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || down "connection refused"
printf 'POST /hook/%s HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nX-Gateway-Host-Secret: %s\\r\\nX-Launch: %s\\r\\nX-Ppid: %s\\r\\nContent-Length: %d\\r\\n\\r\\n%s' \\
  "$ev" "$secret" "\${${s.launchVar}:-}" "$PPID" "\${#body}" "$body" >&3 2>/dev/null || down "write failed"
IFS= read -t ${s.answerWithinS} -r status <&3 || down "no answer within ${s.answerWithinS} s"
case "$status" in "HTTP/1."?" 200"*) ;; "HTTP/1."?" 401"*) down "the host at port $port refused this hook's secret" ;; *) down "bad answer" ;; esac
while IFS= read -r line <&3 && [ "\${line%$'\\r'}" != "" ]; do :; done
IFS= read -r code <&3
msg=
while IFS= read -r line <&3 || [ -n "$line" ]; do msg+="$line"$'\\n'; done
exec 3<&-
if [ "$code" = 2 ]; then printf '%s' "\${msg:-refused}" >&2; exit 2; fi
# Anything but an explicit allow (a torn answer) is no decision: refused where the session is fronted.
[ "$code" = 0 ] || down "no decision in the host's answer"
exit 0
`;
}

/** Writes the hook script into `dir` (idempotent; the directory made, or narrowed to, 0700 first); answers its path. */
export function writeHookScript(dir: string, spec: HookScriptSpec): string {
  prepareHostDir(dir, spec.names);
  const text = hookScript(spec);
  const file = path.join(dir, 'gateway-hook.sh');
  let same = false;
  try { same = fs.readFileSync(file, 'utf8') === text; } catch { /* absent */ }
  if (!same) {
    fs.writeFileSync(`${file}.tmp`, text, { mode: 0o700 });
    fs.renameSync(`${file}.tmp`, file);
  } else if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o700);
  return file;
}

/** A value quoted for a shell command line. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
