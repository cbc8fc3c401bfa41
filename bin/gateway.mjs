#!/usr/bin/env node
// The `gateway` command and `npm start`: runs the compiled CLI (dist/cli/main.js) in this same
// process, so a supervisor's signal reaches the gateway itself. In a checkout with the dev tools
// installed it first builds when dist/ is missing or older than the sources (a fresh clone's
// `npm start` builds once); an installation with only runtime dependencies runs dist/ as it is.
// The installed package (bin/package.mjs) is a production install: it runs with NODE_ENV=production
// unless NODE_ENV says otherwise (set here, before any module that reads it is loaded).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { distIsStale, installed, root } from './build-state.mjs';

if (installed && !process.env.NODE_ENV) process.env.NODE_ENV = 'production';
const canBuild = !installed && existsSync(path.join(root, 'node_modules', 'typescript')) && existsSync(path.join(root, 'tsconfig.build.json'));
if (canBuild && distIsStale()) {
  process.stderr.write('building dist/ (npm run build)…\n');
  // --if-stale: a build that finished while this one waited for the lock is not redone.
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'build.mjs'), '--if-stale'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const entry = path.join(root, 'dist', 'cli', 'main.js');
if (!existsSync(entry)) {
  process.stderr.write('gateway: dist/ is missing: run `npm run build` (needs the dev dependencies)\n');
  process.exit(1);
}
await import(pathToFileURL(entry).href);
