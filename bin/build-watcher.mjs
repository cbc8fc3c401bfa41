#!/usr/bin/env node
// Run by `postinstall` (a checkout's after patch-package, and an installed package's): compiles @parcel/watcher from its patched source
// (patches/@parcel+watcher+*.patch: inotify queue overflows and directories it failed to watch are
// reported as errors; the prebuilt binary drops them silently). The worktree capturer watches only
// with a binding that reports lost events (`reportsLostEvents`); without one it walks every time.
// A failed build is reported and does not fail the install. Skipped when the build is already made
// from the current patch (a stamp beside it). In an installed package (bin/package.mjs), the build of the
// checkout it was packed from comes along in native/parcel-watcher/: it is used, not compiled again, when it
// was made from the same patch and loads on this machine.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'node_modules', '@parcel', 'watcher');
if (!existsSync(dir) || process.platform !== 'linux') process.exit(0);
const patch = readdirSync(path.join(root, 'patches')).find((f) => f.startsWith('@parcel+watcher+'));
const release = path.join(dir, 'build', 'Release');
const stampFile = path.join(release, '.patch-stamp');
const stamp = createHash('sha256').update(patch ? readFileSync(path.join(root, 'patches', patch)) : '').digest('hex');
if (existsSync(path.join(release, 'watcher.node')) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) process.exit(0);

const shipped = path.join(root, 'native', 'parcel-watcher');
if (existsSync(path.join(shipped, 'watcher.node')) && existsSync(path.join(shipped, '.patch-stamp'))
  && readFileSync(path.join(shipped, '.patch-stamp'), 'utf8') === stamp) {
  mkdirSync(release, { recursive: true });
  copyFileSync(path.join(shipped, 'watcher.node'), path.join(release, 'watcher.node'));
  try {
    process.dlopen({ exports: {} }, path.join(release, 'watcher.node'));
    writeFileSync(stampFile, stamp);
    process.exit(0);
  } catch {
    rmSync(path.join(release, 'watcher.node'), { force: true }); // made for another platform: compile
  }
}

// npm names its bundled node-gyp for scripts; otherwise look beside npm.
const candidates = [process.env.npm_config_node_gyp,
  path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')];
const gyp = candidates.find((c) => c && existsSync(c));
// Headers of the running node (no download: the machine reaches no site but the registries).
const nodedir = path.resolve(path.dirname(process.execPath), '..');
const args = [gyp, 'rebuild', '--jobs', '2', ...(existsSync(path.join(nodedir, 'include', 'node', 'node_api.h')) ? [`--nodedir=${nodedir}`] : [])];
const t0 = Date.now();
const r = gyp ? spawnSync(process.execPath, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' }) : null;
if (!r || r.status !== 0) {
  console.warn(`build-watcher: could not build @parcel/watcher from its patched source (${gyp ? (r.stderr ?? '').trim().split('\n').slice(-3).join(' / ') : 'node-gyp not found'}); ` +
    'the worktree capturer will walk every capture instead of watching');
  process.exit(0);
}
writeFileSync(stampFile, stamp);
console.log(`build-watcher: @parcel/watcher built from its patched source in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
