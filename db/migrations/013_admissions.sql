-- Admission through a host's front: a host whose runtime can be reached only through a
-- front the gateway controls (the OpenCode admission proxy) asks the gateway (admitWork) before it
-- forwards a request that can start work in a session, under the same session lock and seal check as
-- beginExecution. An admission stays open until the host has quiesced the session for a seal: it
-- acknowledges a CLOSE_ADMISSIONS command once nothing it forwarded can still start or run. A seal is
-- never SessionSealed while an admission granted before its first commit is open.
CREATE TABLE admissions (
  id           text PRIMARY KEY,
  session_id   text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  host_id      text NOT NULL REFERENCES hosts(id),
  route        text NOT NULL,
  admitted_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  closed_at    timestamptz
);
CREATE INDEX admissions_open ON admissions (session_id, host_id) WHERE closed_at IS NULL;

ALTER TABLE host_commands
  DROP CONSTRAINT host_commands_kind_check,
  ADD CONSTRAINT host_commands_kind_check
    CHECK (kind IN ('CANCEL_JOB', 'INTERRUPT_EXECUTION', 'COMPACT_SESSION', 'GENERATE', 'CLOSE_ADMISSIONS'));

-- A seal that terminated everything known of the session but cannot prove that nothing new starts
-- (its host admits work behind the gateway): the session reads SEALED (admissions closed, nothing
-- known runs) and every seal call answers SealUnsupportedError with this reason.
ALTER TABLE sessions ADD COLUMN seal_unproven text;
