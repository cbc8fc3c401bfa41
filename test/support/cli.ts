import { spawnSync } from 'node:child_process';
import { PROJECT_DIR } from '../../db/index.js';

/**
 * `gateway <args>` from the sources (tsx), as `npm run dev` runs it, in the checkout, waited for; no
 * DATABASE_URL unless `env` gives one (the embedded database, or what the command says without one).
 */
export function cli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], {
    cwd: PROJECT_DIR, encoding: 'utf8', timeout: 120_000, env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'info', ...env },
  });
}
