#!/usr/bin/env node
// Run by `postinstall`: builds the typed client (client/ → client/dist) so that `@agent-history/client`
// resolves right after `npm ci` (the example OpenCode plugins and the review page import it by name).
// Skipped when TypeScript is not installed (`npm ci --omit=dev`: `npm run build` made dist/ already) or
// when client/dist is newer than the client's sources. A failed build is reported, not fatal.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const client = path.join(root, 'client');
if (!existsSync(tsc) || !existsSync(path.join(client, 'tsconfig.json'))) process.exit(0);
const built = path.join(client, 'dist', 'index.js');
const sources = ['index.ts', 'generated.ts', 'tsconfig.json'].map((f) => path.join(client, f));
if (existsSync(built) && sources.every((s) => statSync(s).mtimeMs <= statSync(built).mtimeMs)) process.exit(0);
const r = spawnSync(process.execPath, [tsc, '-p', path.join(client, 'tsconfig.json')], { cwd: client, stdio: ['ignore', 'inherit', 'inherit'] });
if (r.status !== 0) process.stderr.write(`client/dist: the build failed (exit ${r.status}); run \`npm run build\` to see why\n`);
