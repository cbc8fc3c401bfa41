// Files and folders only their owner can read or change: the secrets a command reads (cli/credentials.ts),
// the OpenCode bridge's state file and its fence folder. Every user of the machine can list processes and
// connect to loopback ports; what keeps them out is the file system's owner and mode bits, so these
// checks are what the local channels trust (docs/hosts/opencode.md, "What each local channel trusts").
//
// On a system without POSIX owners (Windows: process.getuid is undefined) the owner and mode checks are
// skipped; the files are still created with the modes below, which Node maps to what Windows supports.
import fs from 'node:fs';
import path from 'node:path';

/** A file or folder that fails these checks, with what fixes it in the message. */
export class PermissionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermissionError';
  }
}

const myUid = (): number | null => (typeof process.getuid === 'function' ? process.getuid() : null);
const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const octal = (mode: number) => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

/**
 * Checks the status of a file or folder of this user that no one else may read or change: owned by this
 * user, no permission bit for its group or others. `fix` is the command that repairs the mode.
 */
export function checkOwnerOnly(st: fs.Stats, what: string, fix: string): void {
  const uid = myUid();
  if (uid === null) return;
  if (st.uid !== uid) {
    throw new PermissionError(`${what} belongs to another user (uid ${st.uid}; you are uid ${uid}): `
      + 'only one of your own can be trusted with what it holds (create your own, then run `' + fix + '`)');
  }
  if (st.mode & 0o077) {
    throw new PermissionError(`${what} can be read or changed by other users (mode ${octal(st.mode)}): run \`${fix}\``);
  }
}

/**
 * The contents of a file only its owner can read: a regular file (a symbolic link to one is followed),
 * owned by this user, mode 0600 or stricter. Opened first and checked through the open descriptor, so
 * the file checked is the file read; a FIFO or a device is refused without blocking on it.
 */
export function readOwnerOnlyFile(file: string, what: string, maxBytes = 64 * 1024): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e: any) {
    throw new PermissionError(e?.code === 'ENOENT' ? `${what} ${file} does not exist` : `${what} ${file} cannot be read (${e?.code ?? e?.message ?? e})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new PermissionError(`${what} ${file} is not a regular file`);
    checkOwnerOnly(st, `${what} ${file}`, `chmod 600 ${file}`);
    if (st.size > maxBytes) throw new PermissionError(`${what} ${file} is larger than ${maxBytes} bytes: not a secret`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Reads a file of this user's that no one else may read or change (a state file), or null when there is
 * none yet: refused when it is a symbolic link, not a regular file, or another user's; a mode that lets
 * others read it (an earlier version's 0644) is narrowed to 0600 first. Create it with `openOwnerOnly`.
 */
export function readOwnFile(file: string, what: string): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e: any) {
    if (e?.code === 'ENOENT') return null;
    if (e?.code === 'ELOOP') throw new PermissionError(`${what} ${file} is a symbolic link: give the file itself`);
    throw e;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new PermissionError(`${what} ${file} is not a regular file`);
    const uid = myUid();
    if (uid !== null && st.uid !== uid) {
      throw new PermissionError(`${what} ${file} belongs to another user (uid ${st.uid}; you are uid ${uid}), who could have written anything into it: move it away`);
    }
    if (uid !== null && (st.mode & 0o077)) fs.fchmodSync(fd, st.mode & 0o700);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Opens a file only this user can read (mode 0600 when created), never through a symbolic link. `create`:
 * a new file, a leftover of that name (a crash between writing and renaming it) removed first; `append`:
 * the file as it is, created when missing.
 */
export function openOwnerOnly(file: string, how: 'create' | 'append'): number {
  const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | NOFOLLOW
    | (how === 'create' ? fs.constants.O_EXCL : fs.constants.O_APPEND);
  try {
    return fs.openSync(file, flags, 0o600);
  } catch (e: any) {
    if (how === 'create' && e?.code === 'EEXIST') {
      fs.unlinkSync(file); // a link is removed, not followed
      return fs.openSync(file, flags, 0o600);
    }
    if (e?.code === 'ELOOP') throw new PermissionError(`${file} is a symbolic link: give the file itself`);
    throw e;
  }
}

/**
 * Makes sure no other user can replace `p` (a file or folder, present or not): each folder from the one
 * holding it up to the root is owned by this user or by root, and writable by no one else unless its
 * sticky bit is set (as /tmp's: there others cannot rename or remove what is not theirs). Checked on the
 * real path of the folder holding it, which must exist.
 */
export function checkNoOtherWriter(p: string, what: string): void {
  const uid = myUid();
  if (uid === null) return;
  let cur = fs.realpathSync(path.dirname(path.resolve(p)));
  for (;;) {
    const st = fs.statSync(cur);
    if (st.uid !== uid && st.uid !== 0) {
      throw new PermissionError(`${what} is inside ${cur}, which belongs to another user (uid ${st.uid}), who could replace it: use a folder of your own`);
    }
    if ((st.mode & 0o022) && !(st.mode & 0o1000)) {
      throw new PermissionError(`${what} is inside ${cur}, which other users can write to (mode ${octal(st.mode)}), and so replace it: `
        + `run \`chmod go-w ${cur}\`, or use a folder of your own`);
    }
    const up = path.dirname(cur);
    if (up === cur) return;
    cur = up;
  }
}

/**
 * A folder only this user can read or change, created (with its missing parents) mode 0700 when missing:
 * an existing one that is a symbolic link, belongs to another user, has any permission bit for its group
 * or others, or sits in a folder another user can write is refused, the message naming the fix.
 */
export function ensurePrivateDir(dir: string, what: string): string {
  const abs = path.resolve(dir);
  fs.mkdirSync(abs, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(abs);
  if (st.isSymbolicLink()) throw new PermissionError(`${what} ${abs} is a symbolic link: give the folder it points to instead`);
  if (!st.isDirectory()) throw new PermissionError(`${what} ${abs} is not a folder`);
  checkOwnerOnly(st, `${what} ${abs}`, `chmod 700 ${abs}`);
  checkNoOtherWriter(abs, `${what} ${abs}`);
  return abs;
}
