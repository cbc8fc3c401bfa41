import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbedded } from './embedded.js';

export const PROJECT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The database to use: DATABASE_URL when set, otherwise the embedded PostgreSQL whose data lives in
 * `.data/pg` of the project (kept across restarts, ignored by git).
 */
export async function openDatabase(log: (m: string) => void = () => {}): Promise<{ url: string; embedded: boolean; stop(): Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, embedded: false, stop: async () => {} };
  const dir = process.env.GATEWAY_DATA_DIR ?? path.join(PROJECT_DIR, '.data', 'pg');
  const pg = await startEmbedded({ dir, port: Number(process.env.EMBEDDED_PG_PORT ?? 54329), log });
  return { url: pg.url, embedded: true, stop: pg.stop };
}
