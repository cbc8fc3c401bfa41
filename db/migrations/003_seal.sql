-- Seal: the durable host command channel.
--
-- A command asks one host to cancel a job or interrupt an execution of one session. It stays
-- pending until the host acknowledges it, so a host that reconnects receives every command it has
-- not acknowledged yet. Inserted under the session row lock, in the transaction that decides it;
-- the pg_notify that wakes the host's subscription is delivered at that commit.
CREATE TABLE host_commands (
  id               text PRIMARY KEY,
  host_id          text NOT NULL REFERENCES hosts (id),
  session_id       text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  kind             text NOT NULL CHECK (kind IN ('CANCEL_JOB', 'INTERRUPT_EXECUTION')),
  job_id           text REFERENCES jobs (id) ON DELETE CASCADE,
  execution_id     text REFERENCES executions (id) ON DELETE CASCADE,
  reason           text NOT NULL DEFAULT 'SEAL' CHECK (reason IN ('SEAL')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  acknowledged_at  timestamptz,
  CHECK ((kind = 'CANCEL_JOB') = (job_id IS NOT NULL)),
  CHECK ((kind = 'INTERRUPT_EXECUTION') = (execution_id IS NOT NULL))
);
CREATE INDEX host_commands_pending ON host_commands (host_id, id) WHERE acknowledged_at IS NULL;
CREATE INDEX host_commands_session ON host_commands (session_id, id);
