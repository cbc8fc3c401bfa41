#!/usr/bin/env node
// `npm run package`: packs the `gateway` command as an installable tarball and prints its path, so that
//
//   npm install -g "$(npm run -s package)"
//
// puts `gateway` on the PATH of every directory. The tarball holds the compiled gateway (dist/, built
// first when stale, and the review page's bundle), bin/gateway.mjs as the `gateway` command, and the
// runtime dependencies as this checkout has them installed (bundled): the versions its lock and
// `overrides` chose and its tests ran, with the patches of patches/ applied. A global install reads
// neither the package's `overrides` nor a shrinkwrap of a tarball, so without the bundle it would resolve
// the ranges anew (@whatwg-node/* releases that need Node 22, an unpatched postgres). The optional
// dependencies (the embedded PostgreSQL, the OpenCode and Claude Code binaries) are left to the
// install, for the platform it runs on; `--omit=optional` leaves them out. No dev dependency is needed
// to run it.
//
// It is packed from a staging folder with a package.json of its own, not from the checkout: a `bin` in
// the root package.json would make `npx gateway` in the checkout install the project into npx's cache on
// every call (npm 11's libnpmexec installs a local package whose own bin matches the command before it
// looks in node_modules/.bin); bin/npx/ gives the checkout its fast `npx gateway` instead.
//
//   node bin/package.mjs [--pack-destination <dir>]   (default: the checkout's folder; *.tgz is ignored by git)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { distIsStale, root } from './build-state.mjs';

const say = (m) => process.stderr.write(`package: ${m}\n`);

/** What is packed besides the staged package.json and the bundled dependencies (paths of the checkout). */
const CONTENTS = ['dist', 'review/dist', 'client/persisted-documents.json', 'bin/gateway.mjs', 'bin/build-state.mjs', 'bin/build-watcher.mjs', 'patches', 'README.md'];

/**
 * Files of the bundled dependencies that nothing reads at run time: type declarations and source maps (4,560 of
 * about 9,500 files, 22 of 65 MB): files only, never a directory so named. The gateway's own dist/ keeps its maps.
 */
const BUILD_ONLY_FILE = /\.(d\.[cm]?ts|map)$/;

/** Dependencies that only install the others (the patches are applied in the bundled copies already). */
const INSTALL_ONLY = new Set(['patch-package']);

/** The installable package's manifest, derived from the checkout's: its runtime part and the `gateway` command. */
function packageManifest(pkg) {
  const dependencies = Object.fromEntries(Object.entries(pkg.dependencies ?? {}).filter(([name]) => !INSTALL_ONLY.has(name)));
  return {
    name: pkg.name,
    version: pkg.version,
    description: pkg.description,
    // Never published to a registry: installed from the tarball this script writes.
    private: true,
    type: pkg.type,
    engines: pkg.engines,
    bin: { gateway: 'bin/gateway.mjs' },
    // @parcel/watcher's build from its patched source, packed in native/parcel-watcher: put in place when it
    // loads on this machine; else compiled on first use, in the background (bin/build-watcher.mjs).
    scripts: { postinstall: 'node bin/build-watcher.mjs --shipped' },
    dependencies,
    bundleDependencies: Object.keys(dependencies),
    optionalDependencies: pkg.optionalDependencies,
  };
}

/**
 * The installed packages that `dependencies` reach from `dir` (a folder with node_modules), as paths
 * relative to it (`node_modules/a`, `node_modules/a/node_modules/b`): Node's lookup, from each package
 * through its dependencies, optional dependencies (those installed) and peer dependencies. Throws when
 * a dependency that is not optional is not installed.
 */
function installedTree(dir, dependencies) {
  const manifestOf = (p) => JSON.parse(readFileSync(path.join(dir, p, 'package.json'), 'utf8'));
  const lookup = (from, name) => {
    for (let base = from; ; ) {
      const p = path.posix.join(base, 'node_modules', name);
      if (existsSync(path.join(dir, p, 'package.json'))) return p;
      if (!base) return null;
      const i = base.lastIndexOf('/node_modules/');
      base = i < 0 ? '' : base.slice(0, i);
    }
  };
  const edges = (from, m) => [
    ...Object.keys(m.dependencies ?? {}).map((name) => ({ from, name, optional: false })),
    ...Object.keys(m.optionalDependencies ?? {}).map((name) => ({ from, name, optional: true })),
    ...Object.keys(m.peerDependencies ?? {}).map((name) => ({ from, name, optional: !!m.peerDependenciesMeta?.[name]?.optional })),
  ];
  const seen = new Set();
  const queue = edges('', { dependencies });
  while (queue.length) {
    const e = queue.shift();
    const p = lookup(e.from, e.name);
    if (!p) {
      if (e.optional) continue;
      throw new Error(`${e.name} (a dependency of ${e.from || 'the gateway'}) is not installed: run \`npm ci\``);
    }
    if (seen.has(p)) continue;
    seen.add(p);
    queue.push(...edges(p, manifestOf(p)));
  }
  return [...seen].sort();
}

async function build() {
  if (!existsSync(path.join(root, 'node_modules', 'typescript'))) throw new Error('run `npm ci` first: packing builds dist/ with the dev dependencies');
  if (distIsStale()) {
    say('building dist/ (npm run build)…');
    const r = spawnSync(process.execPath, [path.join(root, 'bin', 'build.mjs'), '--if-stale'], { cwd: root, stdio: ['ignore', 2, 2] });
    if (r.status !== 0) throw new Error(`the build failed (exit ${r.status})`);
  }
  // The review page's bundle has its own staleness rule (its sources are not dist/'s): the one the
  // checkout's gateway applies when it starts.
  const { ensureReviewBuilt } = await import(pathToFileURL(path.join(root, 'dist', 'server', 'review.js')).href);
  await ensureReviewBuilt();
  // @parcel/watcher's patched build, which the package carries (a checkout compiles it on first use): built now
  // unless it is in place, or waited for when a build is under way.
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'build-watcher.mjs')], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) say('packing without the patched @parcel/watcher: the installed package compiles it on first use');
}

/** Builds when stale, stages and packs; returns the tarball's path. */
async function pack(destination) {
  await build();
  const manifest = packageManifest(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')));
  const stage = mkdtempSync(path.join(os.tmpdir(), 'gateway-package-'));
  try {
    for (const p of CONTENTS) cpSync(path.join(root, p), path.join(stage, p), { recursive: true });
    writeFileSync(path.join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
    // @parcel/watcher's build from its patched source, which the bundled copy leaves out (its package
    // lists the files it publishes): the postinstall puts it in place when it loads there (else its first use
    // compiles it).
    const watcher = path.join(root, 'node_modules', '@parcel', 'watcher', 'build', 'Release');
    if (existsSync(path.join(watcher, 'watcher.node')) && existsSync(path.join(watcher, '.patch-stamp'))) {
      for (const f of ['watcher.node', '.patch-stamp']) cpSync(path.join(watcher, f), path.join(stage, 'native', 'parcel-watcher', f));
    }
    for (const p of installedTree(root, manifest.dependencies)) {
      // Each package without its own node_modules: the nested packages it needs are in the tree too.
      const nested = path.join(root, p, 'node_modules');
      cpSync(path.join(root, p), path.join(stage, p), { recursive: true, filter: (src) => src !== nested && !(BUILD_ONLY_FILE.test(src) && statSync(src).isFile()) });
    }
    mkdirSync(destination, { recursive: true });
    // `--json` lists every file of the tarball: several MiB with the bundled dependencies, over spawnSync's
    // default 1 MiB of output (which kills npm: exit null, ENOBUFS).
    const r = spawnSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination],
      { cwd: stage, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 30 });
    if (r.status !== 0) throw new Error(`npm pack failed (${r.error ? r.error.message : `exit ${r.status}`})`);
    const [{ filename, size, unpackedSize, entryCount }] = JSON.parse(r.stdout);
    const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
    say(`${entryCount} files, ${mib(size)} (${mib(unpackedSize)} unpacked)`);
    return path.join(destination, filename);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

try {
  const { values } = parseArgs({ options: { 'pack-destination': { type: 'string' } } });
  process.stdout.write(await pack(path.resolve(values['pack-destination'] ?? root)) + '\n');
} catch (e) {
  say(e instanceof Error ? e.message : String(e));
  process.exit(1);
}
