-- Changesets between two boundary snapshots of one session (CONTRACT section 11): `Session.changes`
-- (from the start boundary of one execution to the end boundary of a later one) and `Execution.driftBefore`
-- (from the previous execution's end boundary to this one's start). Computed from the stored manifests and
-- contents the first time they are read and kept, written once: the manifests never change, so the same
-- pair always gives the same changeset. Retention deletes a pair's rows when it prunes either snapshot.
CREATE TABLE snapshot_changesets (
  session_id         text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  start_snapshot_id  text NOT NULL,
  end_snapshot_id    text NOT NULL,
  coverage           text NOT NULL CHECK (coverage IN ('COMPLETE', 'OMITTED')),
  omissions          jsonb NOT NULL DEFAULT '[]',
  file_count         integer NOT NULL DEFAULT 0,
  additions          integer NOT NULL DEFAULT 0,
  deletions          integer NOT NULL DEFAULT 0,
  patch_bytes        bigint NOT NULL DEFAULT 0,
  frozen_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, start_snapshot_id, end_snapshot_id)
);

CREATE TABLE snapshot_changeset_files (
  session_id         text NOT NULL,
  start_snapshot_id  text NOT NULL,
  end_snapshot_id    text NOT NULL,
  ord                integer NOT NULL,
  path               text NOT NULL,
  status             text NOT NULL CHECK (status IN ('ADDED', 'MODIFIED', 'DELETED')),
  additions          integer NOT NULL DEFAULT 0,
  deletions          integer NOT NULL DEFAULT 0,
  "binary"           boolean NOT NULL DEFAULT false,
  patch              text,
  PRIMARY KEY (session_id, start_snapshot_id, end_snapshot_id, ord),
  FOREIGN KEY (session_id, start_snapshot_id, end_snapshot_id)
    REFERENCES snapshot_changesets (session_id, start_snapshot_id, end_snapshot_id) ON DELETE CASCADE
);
CREATE INDEX snapshot_changeset_files_path ON snapshot_changeset_files (session_id, start_snapshot_id, end_snapshot_id, path);
