#!/usr/bin/env node
// The patched build of @parcel/watcher (patches/@parcel+watcher+*.patch: inotify queue overflows and
// directories it failed to watch are reported as errors, a batch is taken atomically; the prebuilt binary
// drops lost events silently). The worktree capturer watches only with a binding that reports lost events
// (`reportsLostEvents`); without one it walks the whole worktree at every capture: the same captures, slower
// on a large worktree.
//
// It is compiled on first use, not at install (the compile was 2 of the 5 minutes of a newcomer's `npm ci`):
// the first process that wants the watcher (host/worktree-watch.ts `parcelWatcher`) starts this script
// detached, in the background, and walks meanwhile; its captures watch once the build is in place. One build
// at a time: a starter that finds a live builder starts none, and a builder waits for the lock
// (bin/build-state.mjs) and then finds the work done. It compiles in a scratch copy of the sources inside
// build/ and renames the result into place, so nothing ever loads half a build; what it prints goes to
// build/patched-build.log. A build that failed for this patch is not started again on its own (the log says
// why); running this script retries it.
//
//   node bin/build-watcher.mjs            build now unless the build is in place, waiting for one under way; exit 1
//                                         when it fails. What needs the watcher runs it first: its test
//                                         (test/capture-watch.test.ts), the capture bench, bin/package.mjs (which
//                                         ships the build), CI (.ci/run).
//   node bin/build-watcher.mjs --shipped  an installed package's postinstall: put the build it was packed with
//                                         (native/parcel-watcher) in place when it was made from the same patch and
//                                         loads on this machine; never compiles (its first use does).
//
// A build is in place when build/Release/watcher.node exists with the stamp of the current patch beside it.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lockHeld, root, withBuildLock } from './build-state.mjs';

const script = fileURLToPath(import.meta.url);
const dir = path.join(root, 'node_modules', '@parcel', 'watcher');
const buildDir = path.join(dir, 'build');
const release = path.join(buildDir, 'Release');
const stampFile = path.join(release, '.patch-stamp');
/** What the builders print (appended, one header per build). */
export const logFile = path.join(buildDir, 'patched-build.log');
const lockFile = path.join(buildDir, '.patched-build.lock');
/** The stamp of the patch whose build failed: not started again on its own. */
const failedFile = path.join(buildDir, '.patched-build-failed');
const shipped = path.join(root, 'native', 'parcel-watcher');

/** Only Linux's backend is patched; elsewhere the prebuilt binary is all there is. */
const supported = process.platform === 'linux' && existsSync(dir);
const patch = existsSync(path.join(root, 'patches')) ? readdirSync(path.join(root, 'patches')).find((f) => f.startsWith('@parcel+watcher+')) : undefined;
const stamp = createHash('sha256').update(patch ? readFileSync(path.join(root, 'patches', patch)) : '').digest('hex');

const read = (f) => { try { return readFileSync(f, 'utf8'); } catch { return null; } };
/** Writes a file whole or not at all (a reader sees the old content or the new). */
const writeWhole = (f, content) => { const tmp = `${f}.tmp-${process.pid}`; writeFileSync(tmp, content); renameSync(tmp, f); };

/** Whether the build of the current patch is in place. */
export function patchedBuildReady() {
  return existsSync(path.join(release, 'watcher.node')) && read(stampFile) === stamp;
}

let started = null;

/**
 * For a process that wants the watcher: whether the patched build is in place (`ready`), else why not, after
 * starting a build in the background when none is under way and none failed for this patch. Never waits.
 */
export function startPatchedWatcherBuild() {
  if (!supported) {
    return { ready: false, why: process.platform === 'linux' ? `@parcel/watcher is not installed (${dir})` : '@parcel/watcher reports lost events only in its patched build for Linux' };
  }
  if (patchedBuildReady()) return { ready: true, why: null };
  const building = `the patched @parcel/watcher is being built in the background (log: ${logFile}); until it is in place, captures walk the worktree`;
  if ((started && started.exitCode === null && !started.signalCode) || lockHeld(lockFile)) return { ready: false, why: building };
  if (read(failedFile) === stamp) {
    return { ready: false, why: `the patched @parcel/watcher could not be built (log: ${logFile}; \`node ${script}\` tries again); captures walk the worktree` };
  }
  try {
    mkdirSync(buildDir, { recursive: true });
    const log = openSync(logFile, 'a');
    try {
      started = spawn(process.execPath, [script, '--detached'], { cwd: root, detached: true, stdio: ['ignore', log, log] });
    } finally {
      closeSync(log);
    }
    started.on('error', () => {});
    started.unref();
  } catch (e) {
    return { ready: false, why: `cannot build the patched @parcel/watcher here (${e.message}); captures walk the worktree` };
  }
  return { ready: false, why: building };
}

/** An installed package's build, packed with it: put in place when it was made from this patch and loads here. */
function placeShipped() {
  if (!existsSync(path.join(shipped, 'watcher.node')) || read(path.join(shipped, '.patch-stamp')) !== stamp) return false;
  mkdirSync(release, { recursive: true });
  const tmp = path.join(release, `watcher.node.tmp-${process.pid}`);
  copyFileSync(path.join(shipped, 'watcher.node'), tmp);
  try {
    process.dlopen({ exports: {} }, tmp);
  } catch {
    rmSync(tmp, { force: true }); // made for another platform: compiled on first use
    return false;
  }
  renameSync(tmp, path.join(release, 'watcher.node'));
  writeWhole(stampFile, stamp);
  return true;
}

/**
 * Compiles the patched sources in a scratch copy and renames the result into place, node-gyp's output
 * appended to the log; throws saying why it failed.
 */
function compile() {
  // npm names its bundled node-gyp for scripts; otherwise look beside npm.
  const gyp = [process.env.npm_config_node_gyp,
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')]
    .find((c) => c && existsSync(c));
  if (!gyp) throw new Error('node-gyp not found (it comes with npm)');
  // Headers of the running node (no download: the machine may reach no site but the registries).
  const nodedir = path.resolve(path.dirname(process.execPath), '..');
  const args = [gyp, 'rebuild', '--jobs', '2', ...(existsSync(path.join(nodedir, 'include', 'node', 'node_api.h')) ? [`--nodedir=${nodedir}`] : [])];
  // Scratch copies of builders that were killed (the lock is ours: nobody else compiles).
  for (const e of readdirSync(buildDir)) if (e.startsWith('scratch-')) rmSync(path.join(buildDir, e), { recursive: true, force: true });
  const scratch = mkdtempSync(path.join(buildDir, 'scratch-'));
  try {
    for (const f of ['binding.gyp', 'package.json', 'src']) cpSync(path.join(dir, f), path.join(scratch, f), { recursive: true });
    const log = openSync(logFile, 'a');
    let r;
    try {
      r = spawnSync(process.execPath, args, { cwd: scratch, stdio: ['ignore', log, log] });
    } finally {
      closeSync(log);
    }
    if (r.status !== 0) throw new Error(r.error?.message ?? `node-gyp exited with ${r.status}: ${(read(logFile) ?? '').split('\n').filter((l) => l.trim()).slice(-3).join(' / ')}`);
    mkdirSync(release, { recursive: true });
    renameSync(path.join(scratch, 'build', 'Release', 'watcher.node'), path.join(release, 'watcher.node'));
    writeWhole(stampFile, stamp);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Builds unless the build is in place (waiting for a build under way); false when it failed (said on stderr). */
function build({ compiling }) {
  return withBuildLock(() => {
    if (patchedBuildReady() || placeShipped()) return true;
    // A builder started in the background while another was under way: that one's failure stands.
    if (!compiling || (detached && read(failedFile) === stamp)) return false;
    const t0 = Date.now();
    const say = (line) => writeFileSync(logFile, `build-watcher: ${line}\n`, { flag: 'a' });
    say(`${new Date().toISOString()} PID ${process.pid} compiles @parcel/watcher from its patched source (${patch})`);
    try {
      compile();
    } catch (e) {
      writeWhole(failedFile, stamp);
      const line = `could not build @parcel/watcher from its patched source (${e.message}); the worktree capturer walks every capture instead of watching`;
      say(line);
      if (!detached) process.stderr.write(`build-watcher: ${line}\n`);
      return false;
    }
    rmSync(failedFile, { force: true });
    const line = `@parcel/watcher built from its patched source in ${((Date.now() - t0) / 1000).toFixed(0)} s`;
    say(line);
    if (!detached) process.stdout.write(`build-watcher: ${line}\n`);
    return true;
  }, { lockFile });
}

/** Started by startPatchedWatcherBuild: what it prints goes to the log already. */
const detached = process.argv.includes('--detached');

if (process.argv[1] && realpathSync(path.resolve(process.argv[1])) === realpathSync(script) && supported) {
  mkdirSync(buildDir, { recursive: true });
  const shippedOnly = process.argv.includes('--shipped');
  if (!build({ compiling: !shippedOnly }) && !shippedOnly) process.exitCode = 1;
}
