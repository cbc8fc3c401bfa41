import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { embeddedDataDir } from '../server/data-dir.js';
import { startEmbedded } from './embedded.js';

/** The project's folder (the same from the sources, `db/`, and from the build, `dist/db/`). */
export const PROJECT_DIR = (() => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up = path.resolve(here, '..');
  return path.basename(up) === 'dist' && existsSync(path.join(up, '..', 'package.json')) ? path.resolve(up, '..') : up;
})();

/**
 * The database to use: DATABASE_URL when set, otherwise the embedded PostgreSQL whose data lives in
 * GATEWAY_DATA_DIR, or by default `.data/pg` of a checkout (kept across restarts, ignored by git) and
 * the user's data folder for an installed package (server/data-dir.ts).
 */
export async function openDatabase(
  log: (m: string) => void = () => {},
  opts: { url?: string; dataDir?: string; port?: number } = {},
): Promise<{ url: string; embedded: boolean; stop(): Promise<void> }> {
  const url = opts.url ?? process.env.DATABASE_URL;
  if (url) return { url, embedded: false, stop: async () => {} };
  const dir = opts.dataDir ?? embeddedDataDir(PROJECT_DIR);
  const pg = await startEmbedded({ dir, port: opts.port ?? Number(process.env.EMBEDDED_PG_PORT ?? 54329), log });
  return { url: pg.url, embedded: true, stop: pg.stop };
}
