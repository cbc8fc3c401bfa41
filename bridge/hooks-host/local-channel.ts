// Who may talk to a hooks-driven host (Claude Code's, Codex's). The host listens on loopback, where every local process (of any user)
// can connect, so reaching the port proves nothing. Every request carries a secret only the host's user can
// read: a random value in `<dir>/host.secret` (mode 0600) in the host's directory (mode 0700, the user's own),
// read by the hook script and by the launcher, and compared in constant time. The hook script, the settings
// files, the port file and the state file live in that same directory, so another user can neither read the
// secret nor replace the script the agent runs.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The request header that carries the secret (the hook script and the launcher send it). */
export const SECRET_HEADER = 'x-gateway-host-secret';

const SECRET_FILE = 'host.secret';

/** How an agent is named: `label` in messages, `command` in `gateway <command>` and in keys, `transcript` for its session file. */
export interface AgentNames { label: string; command: string; transcript: string }

/** A directory the host can trust: made 0700 if it is new; refused when another user owns it. */
export function prepareHostDir(dir: string, names: AgentNames): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.statSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
    throw new Error(`${dir} belongs to another user (uid ${st.uid}): the ${names.label} host keeps its secret there; choose a directory of your own with --dir`);
  }
  // Made by an earlier version (0755), or by hand: narrowed, since the host's own user owns it.
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

/** The host's secret: read from `<dir>/host.secret`, or made there (0600) at the host's first start. */
export function hostSecret(dir: string): string {
  const file = path.join(dir, SECRET_FILE);
  try {
    // One that others could read (made by hand, or copied) may be known: replaced by a new one.
    if (privateFile(file)) {
      const s = fs.readFileSync(file, 'utf8').trim();
      if (s) return s;
    }
  } catch (e: any) {
    if (e?.code !== 'ENOENT') throw e;
  }
  const secret = randomBytes(32).toString('hex');
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${secret}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return secret;
}

/**
 * The secret as a client of the host (the launcher) reads it; a clear error when it cannot be read, which
 * names the directory and the command that makes it.
 */
export function clientSecret(dir: string, names: AgentNames): string {
  const file = path.join(dir, SECRET_FILE);
  try {
    if (!privateFile(file)) throw new Error(`${file} can be read by other users: restart the host (\`gateway host ${names.command} --dir ${dir}\`), which replaces it`);
    const s = fs.readFileSync(file, 'utf8').trim();
    if (s) return s;
  } catch (e: any) {
    if (e?.code !== 'ENOENT') throw new Error(`cannot read the ${names.label} host's secret in ${dir}: ${e?.message ?? e}`);
  }
  throw new Error(`no ${names.label} host has run with directory ${dir} (no ${SECRET_FILE}): start it first with \`gateway host ${names.command} --dir ${dir}\``);
}

/** Whether only its owner, this process's user, can read `file` (a regular file). */
function privateFile(file: string): boolean {
  const st = fs.statSync(file);
  return st.isFile() && (st.mode & 0o077) === 0 && (typeof process.getuid !== 'function' || st.uid === process.getuid());
}

/** Whether `given` is the secret, in time independent of where they differ (both hashed to one length). */
export function sameSecret(given: string | undefined, secret: string): boolean {
  if (!given) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}
