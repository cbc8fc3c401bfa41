-- Plugin-requested host work: compactSession and generate travel over the durable host
-- command channel (003_seal.sql) as commands that carry a payload and expect a reply.
--
-- A reply-able command is pending until the host replies, the waiting caller gives up (timed_out_at),
-- or expires_at passes, whichever comes first; a reply after that is discarded. Replying and timing
-- out are both single-row updates guarded by `replied_at IS NULL AND timed_out_at IS NULL`, so exactly
-- one of them wins. The reply's commit notifies `{k:'r', id}` so the waiting instance wakes up.

-- The CHECK constraints of 003 were unnamed: drop them whatever Postgres called them, re-add named ones.
DO $$
DECLARE c record;
BEGIN
  FOR c IN SELECT conname FROM pg_constraint
           WHERE conrelid = 'host_commands'::regclass AND contype = 'c' LOOP
    EXECUTE format('ALTER TABLE host_commands DROP CONSTRAINT %I', c.conname);
  END LOOP;
END $$;

ALTER TABLE host_commands
  ADD COLUMN payload       jsonb,
  ADD COLUMN reply         jsonb,
  ADD COLUMN replied_at    timestamptz,
  ADD COLUMN timed_out_at  timestamptz,
  ADD COLUMN expires_at    timestamptz,
  ADD CONSTRAINT host_commands_kind_check
    CHECK (kind IN ('CANCEL_JOB', 'INTERRUPT_EXECUTION', 'COMPACT_SESSION', 'GENERATE')),
  ADD CONSTRAINT host_commands_reason_check CHECK (reason IN ('SEAL', 'PLUGIN')),
  ADD CONSTRAINT host_commands_job_check CHECK ((kind = 'CANCEL_JOB') = (job_id IS NOT NULL)),
  ADD CONSTRAINT host_commands_execution_check CHECK ((kind = 'INTERRUPT_EXECUTION') = (execution_id IS NOT NULL)),
  -- Reply-able commands always carry a payload and a deadline; cancel/interrupt never expire.
  ADD CONSTRAINT host_commands_request_check
    CHECK ((kind IN ('COMPACT_SESSION', 'GENERATE')) = (expires_at IS NOT NULL AND payload IS NOT NULL));

-- The in-flight compaction of a session (at most one is joined by every concurrent request).
CREATE INDEX host_commands_open_requests ON host_commands (session_id, kind)
  WHERE replied_at IS NULL AND timed_out_at IS NULL AND expires_at IS NOT NULL;

-- Compactions recorded in a session's journal (event session.compacted): the projection
-- Session.context reads. The latest one (highest seq) wins: context = its summary message, then the
-- messages positioned after through_position (appended while the host was summarizing, or later).
CREATE TABLE compactions (
  session_id          text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq                 bigint NOT NULL,
  summary_message_id  text NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  through_position    bigint NOT NULL,
  compacted_messages  integer NOT NULL,
  command_id          text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, seq)
);
