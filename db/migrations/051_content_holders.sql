-- Which directory scopes hold each stored content. Contents are stored once for the whole gateway, but
-- whether the gateway holds a given hash is itself information: a host scoped to /a must not learn that
-- some other directory has a file with these exact bytes (missingContents, uploadContents' counts and
-- createSnapshot would otherwise answer it). A content counts as held for a scoped caller only when a
-- holder row lies within the caller's scope: the caller (or a host below it) uploaded it. Unscoped callers
-- see every directory and need no row. The bytes are still stored once.
CREATE TABLE content_holders (
  hash   text NOT NULL REFERENCES contents (hash) ON DELETE CASCADE,
  -- The uploading token's directory scope ('' for an unscoped token), or a session directory (backfill).
  scope  text NOT NULL,
  PRIMARY KEY (hash, scope)
);
CREATE INDEX content_holders_scope ON content_holders (scope text_pattern_ops, hash);

-- Contents already stored are held by the directories of the sessions whose manifests reference them.
INSERT INTO content_holders (hash, scope)
SELECT DISTINCT f->>'h', s.directory
FROM snapshots sn
JOIN sessions s ON s.id = sn.session_id
CROSS JOIN LATERAL jsonb_array_elements(sn.manifest->'files') f
WHERE sn.manifest IS NOT NULL AND f->>'k' = 'f'
  AND EXISTS (SELECT 1 FROM contents c WHERE c.hash = f->>'h')
ON CONFLICT DO NOTHING;
