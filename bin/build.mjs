#!/usr/bin/env node
// `npm run build`: compiles the gateway to JavaScript in dist/ (tsc -p tsconfig.build.json), copies
// what it reads at run time (SQL migrations), builds the typed client package (client/dist) and, when
// the project has one, the review page (`npm run build:review`). One build at a time per checkout
// (bin/build-state.mjs); with --if-stale it does nothing when dist/ is already up to date once it
// holds the lock (another start built it meanwhile).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { distIsStale, root, withBuildLock } from './build-state.mjs';

const require = createRequire(import.meta.url);
class StepFailed extends Error {}
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw Object.assign(new StepFailed(`${cmd} ${args.join(' ')}`), { status: r.status ?? 1 });
};
const tsc = require.resolve('typescript/bin/tsc');

function build() {
  rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  run(process.execPath, [tsc, '-p', 'tsconfig.build.json']);
  mkdirSync(path.join(root, 'dist', 'db'), { recursive: true });
  cpSync(path.join(root, 'db', 'migrations'), path.join(root, 'dist', 'db', 'migrations'), { recursive: true });
  cpSync(path.join(root, 'bridge', 'opencode', 'plugin'), path.join(root, 'dist', 'bridge', 'opencode', 'plugin'), { recursive: true });
  run(process.execPath, [tsc, '-p', 'client/tsconfig.json']);
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  if (pkg.scripts?.['build:review']) run('npm', ['run', '--silent', 'build:review']);
  // Written last: a build that stops half-way leaves dist/ stale, so the next start builds again.
  writeFileSync(path.join(root, 'dist', '.build-stamp'), new Date().toISOString() + '\n');
}

try {
  withBuildLock(() => {
    if (process.argv.includes('--if-stale') && !distIsStale()) return;
    build();
  });
} catch (e) {
  if (!(e instanceof StepFailed)) throw e;
  process.exit(e.status);
}
