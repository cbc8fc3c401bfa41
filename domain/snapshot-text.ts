import type { Db } from '../db/connection.js';
import { rowKey } from './shard.js';

/** At most this much of a stored file is handed out as text (a review page expands context from it). */
export const SNAPSHOT_TEXT_MAX_BYTES = 4 * 1024 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The stored content of one file of a snapshot as UTF-8 text: what a review page reads to expand the
 * context around a hunk exactly. Null when the path is not a stored file of the manifest (absent,
 * ignored, over the capture limit), the file is binary, not valid UTF-8 or over
 * SNAPSHOT_TEXT_MAX_BYTES, or its manifest or content was pruned. Two reads, each on its own table's
 * key: the manifest entry (the snapshot's session and ID), then the content by hash.
 */
export async function snapshotText(db: Db, snapshotID: string, path: string): Promise<string | null> {
  const [entry] = await db<{ hash: string | null; binary: boolean | null; size: number | null }[]>`
    SELECT f->>'h' AS hash, (f->>'b')::boolean AS binary, (f->>'s')::bigint AS size
    FROM snapshots s, jsonb_array_elements(s.manifest->'files') f
    WHERE ${rowKey(db, snapshotID, { alias: 's' })} AND s.manifest IS NOT NULL AND f->>'p' = ${path} AND f->>'k' = 'f'
    LIMIT 1`;
  if (!entry?.hash || entry.binary || Number(entry.size) > SNAPSHOT_TEXT_MAX_BYTES) return null;
  const [c] = await db<{ data: Uint8Array }[]>`SELECT data FROM contents WHERE hash = ${entry.hash}`;
  if (!c) return null;
  try {
    return utf8.decode(c.data);
  } catch {
    return null;
  }
}
