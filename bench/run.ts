/**
 * `npm run bench [-- name ...]`: runs the named benchmarks (default: all of them) one after the other,
 * each in its own process, and prints their figures. Names are the files of bench/ without `.ts`.
 * The benchmarks need a Postgres server: DATABASE_URL, or an embedded one started here for the run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const all = fs.readdirSync(here).filter((f) => f.endsWith('.ts') && f !== 'run.ts').map((f) => f.slice(0, -3)).sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${all.join(', ')}`);
  process.exit(2);
}

async function main() {
  let url = process.env.DATABASE_URL;
  let stop: (() => Promise<void>) | null = null;
  if (!url) {
    const { startEmbedded } = await import('../db/embedded.js');
    const { PROJECT_DIR } = await import('../db/index.js');
    const pg = await startEmbedded({ dir: path.join(PROJECT_DIR, '.data', 'bench-pg') });
    url = pg.url;
    stop = () => pg.stop();
  }
  const tsx = path.join(here, '..', 'node_modules', '.bin', 'tsx');
  let failed = 0;
  for (const name of wanted.length ? wanted : all) {
    console.log(`\n== bench/${name}.ts`);
    const r = spawnSync(tsx, [path.join(here, `${name}.ts`)], { stdio: 'inherit', env: { ...process.env, DATABASE_URL: url } });
    if (r.status !== 0) { failed++; console.error(`bench/${name}.ts exited with ${r.status ?? r.signal}`); }
  }
  await stop?.();
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
