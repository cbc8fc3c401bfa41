#!/usr/bin/env node
// The `gateway` command and `npm start`: runs the compiled CLI (dist/cli/main.js) in this same
// process, so a supervisor's signal reaches the gateway itself. In a checkout with the dev tools
// installed it first builds when dist/ is missing or older than the sources (a fresh clone's
// `npm start` builds once); an installation with only runtime dependencies runs dist/ as it is.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');
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

const canBuild = existsSync(path.join(root, 'node_modules', 'typescript')) && existsSync(path.join(root, 'tsconfig.build.json'));
if (canBuild && (!existsSync(stamp) || statSync(stamp).mtimeMs < newestSource())) {
  process.stderr.write('building dist/ (npm run build)…\n');
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'build.mjs')], { cwd: root, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const entry = path.join(root, 'dist', 'cli', 'main.js');
if (!existsSync(entry)) {
  process.stderr.write('gateway: dist/ is missing: run `npm run build` (needs the dev dependencies)\n');
  process.exit(1);
}
await import(pathToFileURL(entry).href);
