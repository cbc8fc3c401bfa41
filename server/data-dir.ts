import os from 'node:os';
import path from 'node:path';

/**
 * Where the gateway's commands keep their state when nothing names a place: the embedded PostgreSQL's
 * data (`gateway serve`, `migrate`, `token`, `replay`) and the OpenCode bridge's state file.
 *
 * A checkout keeps it in its own `.data/` (ignored by git), as `npm start` always has. An installed
 * package (`npm install -g`: the package lies under a `node_modules` folder) keeps it in the user's data
 * folder of the XDG convention, `$XDG_DATA_HOME/agent-history-gateway` or
 * `~/.local/share/agent-history-gateway`: never in the directory a command was started from (a user's
 * project), nor in the installed package, which the next install replaces.
 */

/** The name of the per-user data folder. */
export const DATA_FOLDER = 'agent-history-gateway';

type Env = Record<string, string | undefined>;

/**
 * Whether `packageDir` is an installed copy of the package rather than a checkout: it also serves the review page
 * it was packed with, never building it (server/review.ts). bin/build-state.mjs `installed` is the same rule for
 * the `gateway` command, which must know before it loads dist/ (it never builds, and runs in production).
 */
export function isInstalledPackage(packageDir: string): boolean {
  return path.resolve(packageDir).split(path.sep).includes('node_modules');
}

/**
 * The per-user data folder: `$XDG_DATA_HOME/agent-history-gateway`, or `~/.local/share/agent-history-gateway`
 * when XDG_DATA_HOME is unset, empty or relative (the XDG base directory specification ignores a relative one).
 */
export function userDataDir(env: Env = process.env): string {
  const xdg = env.XDG_DATA_HOME?.trim();
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME?.trim() || os.homedir(), '.local', 'share');
  return path.join(base, DATA_FOLDER);
}

/** The folder of the commands' state by default: the checkout's `.data`, or the per-user data folder of an installed package. */
export function stateDir(packageDir: string, env: Env = process.env): string {
  return isInstalledPackage(packageDir) ? userDataDir(env) : path.join(path.resolve(packageDir), '.data');
}

/**
 * The embedded PostgreSQL's data folder: GATEWAY_DATA_DIR (a relative one from the current directory),
 * else `pg` in the state folder.
 */
export function embeddedDataDir(packageDir: string, env: Env = process.env, cwd = process.cwd()): string {
  const set = env.GATEWAY_DATA_DIR?.trim();
  return set ? path.resolve(cwd, set) : path.join(stateDir(packageDir, env), 'pg');
}
