-- Renames in changesets (issue 49): a deleted file and an added one whose contents are the same (by content hash)
-- or similar enough (the share of the bytes they have in common, as git measures it, at least 50%) are one
-- RENAMED file: `path` the new path, `previous_path` the old one, `similarity` the percentage (100 for the same
-- content), and the patch only of their differences. Frozen with the changeset like every other column.
ALTER TABLE changeset_files DROP CONSTRAINT changeset_files_status_check;
ALTER TABLE changeset_files ADD CONSTRAINT changeset_files_status_check CHECK (status IN ('ADDED', 'MODIFIED', 'DELETED', 'RENAMED'));
ALTER TABLE changeset_files ADD COLUMN previous_path text;
ALTER TABLE changeset_files ADD COLUMN similarity smallint;
ALTER TABLE changeset_files ADD CONSTRAINT changeset_files_rename_check
  CHECK ((status = 'RENAMED') = (previous_path IS NOT NULL AND similarity IS NOT NULL) AND (similarity IS NULL OR similarity BETWEEN 0 AND 100));

ALTER TABLE snapshot_changeset_files DROP CONSTRAINT snapshot_changeset_files_status_check;
ALTER TABLE snapshot_changeset_files ADD CONSTRAINT snapshot_changeset_files_status_check CHECK (status IN ('ADDED', 'MODIFIED', 'DELETED', 'RENAMED'));
ALTER TABLE snapshot_changeset_files ADD COLUMN previous_path text;
ALTER TABLE snapshot_changeset_files ADD COLUMN similarity smallint;
ALTER TABLE snapshot_changeset_files ADD CONSTRAINT snapshot_changeset_files_rename_check
  CHECK ((status = 'RENAMED') = (previous_path IS NOT NULL AND similarity IS NOT NULL) AND (similarity IS NULL OR similarity BETWEEN 0 AND 100));

-- Changesets between snapshots are a derived copy, computed on first read: those stored before this migration
-- are computed again (with their renames) when next read. An execution's own changeset stays as it was frozen.
DELETE FROM snapshot_changesets;
