// Whether dist/ is older than the sources, and the lock that lets one build run at a time in a
// checkout: two `npm start`s of a fresh clone (or two test files starting the gateway at once) would
// otherwise both clear and rewrite dist/, one failing half-way (EEXIST) or running the other's
// half-written output.
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Whether this is an installed copy of the package (the tarball of bin/package.mjs, which npm always installs
 * under a `node_modules` folder) rather than a checkout: it runs what it was packed with and never builds
 * anything (its dev tools and sources are not there). The rule of server/data-dir.ts `isInstalledPackage`.
 */
export const installed = root.split(path.sep).includes('node_modules');
const stamp = path.join(root, 'dist', '.build-stamp');
const defaultLockFile = path.join(root, '.build.lock');
const SOURCES = ['cli', 'server', 'schema', 'resolvers', 'db', 'domain', 'subscriptions', 'host', 'client', 'bridge'];

function newestSource() {
  let newest = statSync(path.join(root, 'package.json')).mtimeMs;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'dist') continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|sql|js|json)$/.test(e.name)) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const d of SOURCES) if (existsSync(path.join(root, d))) walk(path.join(root, d));
  return newest;
}

/** dist/ is missing, unfinished (a build writes its stamp last) or older than a source file. */
export function distIsStale() {
  return !existsSync(stamp) || statSync(stamp).mtimeMs < newestSource();
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const alive = (pid) => {
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
};

/** Whether a live process holds `lockFile` (see withBuildLock; an empty one is a holder between create and write). */
export function lockHeld(lockFile = defaultLockFile) {
  try {
    const holder = Number(readFileSync(lockFile, 'utf8'));
    return holder > 0 ? alive(holder) : Date.now() - statSync(lockFile).mtimeMs <= 10_000;
  } catch {
    return false;
  }
}

/**
 * Runs `fn` holding the checkout's build lock (a file holding the builder's PID, created exclusively).
 * Waits while a live process holds it; takes over a lock whose process is gone (a build killed
 * half-way), so a crash never wedges later starts.
 */
export function withBuildLock(fn, { timeoutMs = 15 * 60_000, lockFile = defaultLockFile } = {}) {
  const deadline = Date.now() + timeoutMs;
  let waited = false;
  for (;;) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    let holder = NaN;
    let age = 0;
    try {
      holder = Number(readFileSync(lockFile, 'utf8'));
      age = Date.now() - statSync(lockFile).mtimeMs;
    } catch { continue; } // released meanwhile
    // An empty file is a holder between create and write; one that stays empty died there.
    if ((holder > 0 && !alive(holder)) || (!(holder > 0) && age > 10_000)) {
      try { unlinkSync(lockFile); } catch {}
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another build (PID ${holder}) has held ${lockFile} for too long`);
    if (!waited) process.stderr.write(`waiting for the build of PID ${holder} to finish…\n`);
    waited = true;
    sleep(200);
  }
  try {
    return fn();
  } finally {
    try { unlinkSync(lockFile); } catch {}
  }
}
