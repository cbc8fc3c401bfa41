#!/usr/bin/env node
// Runs the TypeScript CLI through tsx (a dependency), so `npx gateway …` works from the package.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
const r = spawnSync(tsx, [path.join(root, 'cli', 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
