// The launches: agent processes started by a host's launcher (`gateway claude-code`, `gateway codex`), and
// which sessions each runs or may run. The host asks two questions of them:
// - which processes a seal must stop: those that ran the session (their hooks named it) or were started to
//   resume it (their arguments name it);
// - whether a transcript may be rewritten now: not while a process that may read or append to it runs, i.e.
//   one of the above, or one started to resume "the latest session" of the session's directory (`--continue`,
//   or `--resume` without an ID: the agent's picker). A process running another session never holds a
//   rewrite back.
// A process that binds to a session (its first hook) after that session's transcript was rewritten, having
// started before the rewrite and named nothing, may have read the old text (an interactive `/resume`): it is
// marked stale for that session, and the host refuses its prompts there.
import path from 'node:path';
import { alive, processFacts } from './processes.js';

export interface LaunchState {
  token: string;
  pid: number | null;
  exited: boolean;
  cwd: string;
  /** When the host issued it (ms since the epoch). */
  createdAt?: number;
  /** Its process's start time (`processFacts().startTicks`): its PID names it only while this matches. */
  startTicks?: number | null;
  /** The session its arguments name (`--resume <id>`, `--session-id <id>`), if any. */
  names?: string | null;
  /** Its arguments may resume any session of its directory (`--continue`, `--resume` without an ID). */
  anyInCwd?: boolean;
  /** The agent's sessions whose hooks came from it. Absent in a launch stored by an older host. */
  sessions?: string[];
  /** The sessions whose process admission (admitWork) the gateway recorded. */
  admitted?: string[];
  /** The sessions it bound to after their transcript was rewritten since it started (it may hold the old text). */
  stale?: string[];
  /**
   * A launch the host made itself to carry out a PROMPT command (review comments sent to the agent): its first
   * prompt in the session it names is the command's (its execution begins with the command's ID).
   */
  commandID?: string | null;
  /** That first prompt was admitted with the command's ID (a later prompt of the launch is its own). */
  commandTaken?: boolean;
  /** The settings the launcher asked for besides the hooks (Claude Code: e.g. permissions), kept for the session's later resumes. */
  settings?: Record<string, unknown> | null;
}

/** How long a launch may go without reporting its PID (the launcher reports it right after spawning the agent). */
const PID_REPORTED_WITHIN_MS = 60_000;

/**
 * Whether the launch's process may still run: it has not exited, and its PID is still that process, or is
 * not known yet (a launch just issued; one whose launcher never reported a PID is taken as gone after a minute).
 */
export function launchRunning(l: LaunchState): boolean {
  if (l.exited) return false;
  if (l.pid === null) return Date.now() - (l.createdAt ?? 0) < PID_REPORTED_WITHIN_MS;
  if (l.startTicks == null) return alive(l.pid);
  return processFacts(l.pid)?.startTicks === l.startTicks;
}

/** Whether the launch ran session `cc`, or was started to resume it. */
export function runsSession(l: LaunchState, cc: string): boolean {
  return !!l.sessions?.includes(cc) || l.names === cc;
}

/**
 * Whether the launch may read or append to the transcript of session `cc` (in directory `cwd`). A launch
 * stored by an older host, which did not record its sessions, may touch any.
 */
export function mayTouch(l: LaunchState, cc: string, cwd: string): boolean {
  if (!l.sessions) return true;
  return runsSession(l, cc) || (!!l.anyInCwd && !!cwd && path.resolve(l.cwd) === path.resolve(cwd));
}
