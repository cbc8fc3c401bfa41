// What Claude Code's arguments say of the session it will run (the launches themselves: bridge/hooks-host/launches.ts).
export { launchRunning, mayTouch, runsSession, type LaunchState } from '../hooks-host/launches.js';

const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * What Claude Code's arguments say of the session it will run: `--resume <id>` / `-r <id>` / `--session-id
 * <id>` name one; `--continue` / `-c`, or `--resume` with no ID or a search term (the picker), may take any
 * session of the directory. `--fork-session` reads the named session and writes a new one: still named here,
 * since it reads that transcript at start.
 */
export function sessionArgs(args: string[]): { names: string | null; anyInCwd: boolean } {
  let names: string | null = null;
  let anyInCwd = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') break;
    const eq = a.indexOf('=');
    const [flag, inline] = a.startsWith('--') && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, null];
    if (flag === '--continue' || flag === '-c') anyInCwd = true;
    else if (flag === '--resume' || flag === '-r' || flag === '--session-id') {
      const next = inline ?? (args[i + 1] !== undefined && !args[i + 1].startsWith('-') ? args[i + 1] : null);
      if (inline === null && next !== null) i++;
      if (next !== null && SESSION_ID.test(next)) names = next.toLowerCase();
      else if (flag !== '--session-id') anyInCwd = true;
    }
  }
  return { names, anyInCwd };
}

