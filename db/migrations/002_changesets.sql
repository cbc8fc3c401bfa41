-- Frozen execution changesets (CONTRACT section 2): content-addressed file contents, worktree
-- snapshots (manifests), execution boundaries, and the changeset frozen when an execution settles.

-- The one table shared by all sessions: file contents by SHA-256 (hex). Stored once whatever the
-- number of snapshots, executions or sessions that reference them (TOAST compresses large values).
CREATE TABLE contents (
  hash        text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
  size        bigint NOT NULL,
  data        bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  -- Refreshed when a host uploads or asks about it again: the grace period of unreferenced contents.
  touched_at  timestamptz NOT NULL DEFAULT now()
);

-- A manifest of one worktree capture: { files: [{p,h,s,m,b,k,t,n}], unscanned: [{p,detail}] }.
-- k: 'f' stored file, 'o' over the size limit (hash and size only), 'i' ignored file (metadata only),
-- 'd' ignored directory (fingerprint of its metadata). `manifest` is null once pruned.
CREATE TABLE snapshots (
  id           text PRIMARY KEY,
  session_id   text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  host_id      text,
  captured_at  timestamptz NOT NULL DEFAULT now(),
  file_count   integer NOT NULL,
  byte_size    bigint NOT NULL,
  manifest     jsonb,
  pruned_at    timestamptz
);
CREATE INDEX snapshots_session ON snapshots (session_id, id);

ALTER TABLE executions ADD COLUMN start_snapshot_id text REFERENCES snapshots (id);
ALTER TABLE executions ADD COLUMN end_snapshot_id text REFERENCES snapshots (id);
CREATE INDEX executions_start_snapshot ON executions (start_snapshot_id) WHERE start_snapshot_id IS NOT NULL;
CREATE INDEX executions_end_snapshot ON executions (end_snapshot_id) WHERE end_snapshot_id IS NOT NULL;

-- Written once, in the settling transaction; afterwards only retention touches it (pruned_at).
CREATE TABLE changesets (
  execution_id  text PRIMARY KEY REFERENCES executions (id) ON DELETE CASCADE,
  session_id    text NOT NULL,
  coverage      text NOT NULL CHECK (coverage IN ('COMPLETE', 'OMITTED', 'UNAVAILABLE')),
  unavailable_reason text,
  detail        text,
  omissions     jsonb NOT NULL DEFAULT '[]',
  file_count    integer NOT NULL DEFAULT 0,
  additions     integer NOT NULL DEFAULT 0,
  deletions     integer NOT NULL DEFAULT 0,
  patch_bytes   bigint NOT NULL DEFAULT 0,
  frozen_at     timestamptz NOT NULL DEFAULT now(),
  pruned_at     timestamptz
);
CREATE INDEX changesets_session ON changesets (session_id);
CREATE INDEX changesets_unpruned ON changesets (frozen_at) WHERE pruned_at IS NULL;

CREATE TABLE changeset_files (
  execution_id  text NOT NULL REFERENCES changesets (execution_id) ON DELETE CASCADE,
  session_id    text NOT NULL,
  ord           integer NOT NULL,
  path          text NOT NULL,
  status        text NOT NULL CHECK (status IN ('ADDED', 'MODIFIED', 'DELETED')),
  additions     integer NOT NULL DEFAULT 0,
  deletions     integer NOT NULL DEFAULT 0,
  "binary"      boolean NOT NULL DEFAULT false, -- quoted: BINARY is a reserved word
  patch         text,
  PRIMARY KEY (execution_id, ord)
);

-- One row: the limits and the retention policy every instance applies (so they all agree).
CREATE TABLE changeset_policy (
  id                         boolean PRIMARY KEY DEFAULT true CHECK (id),
  file_patch_bytes           bigint NOT NULL DEFAULT 1048576,
  changeset_patch_bytes      bigint NOT NULL DEFAULT 8388608,
  max_content_bytes          bigint NOT NULL DEFAULT 16777216,
  max_upload_bytes           bigint NOT NULL DEFAULT 33554432,
  max_manifest_files         integer NOT NULL DEFAULT 200000,
  -- Retention: a settled execution's changeset is pruned when it is older than retain_ms, at least
  -- retain_executions later executions of its session have settled, and (always) its next one has.
  retain_ms                  bigint NOT NULL DEFAULT 2592000000,
  retain_executions          integer NOT NULL DEFAULT 10,
  -- Unreferenced contents and unused snapshots younger than this are kept (an upload in progress).
  grace_ms                   bigint NOT NULL DEFAULT 3600000
);
INSERT INTO changeset_policy DEFAULT VALUES;
