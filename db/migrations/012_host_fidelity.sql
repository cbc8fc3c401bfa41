-- What a host like OpenCode records about its work, and session mutations routed to the host.
--
-- Fidelity (all optional, sent by any host): per execution the host's own ID (OpenCode: the step's
-- assistant message), model, agent, mode, finish reason, error name and the step's usage (tokens, cost);
-- per message and part the host's own ID; REASONING parts; per part a title, metadata and timing.
ALTER TABLE executions
  ADD COLUMN external_id         text,
  ADD COLUMN provider_id         text,
  ADD COLUMN model_id            text,
  ADD COLUMN agent               text,
  ADD COLUMN mode                text,
  ADD COLUMN finish_reason       text,
  ADD COLUMN error_name          text,
  ADD COLUMN input_tokens        bigint,
  ADD COLUMN output_tokens       bigint,
  ADD COLUMN reasoning_tokens    bigint,
  ADD COLUMN cache_read_tokens   bigint,
  ADD COLUMN cache_write_tokens  bigint,
  ADD COLUMN cost                double precision;
CREATE INDEX executions_external ON executions (session_id, external_id) WHERE external_id IS NOT NULL;

ALTER TABLE messages ADD COLUMN external_id text;
CREATE INDEX messages_external ON messages (session_id, external_id) WHERE external_id IS NOT NULL;

DO $$
DECLARE c record;
BEGIN
  FOR c IN SELECT conname FROM pg_constraint
           WHERE conrelid = 'parts'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%type%' LOOP
    EXECUTE format('ALTER TABLE parts DROP CONSTRAINT %I', c.conname);
  END LOOP;
END $$;
ALTER TABLE parts
  ADD COLUMN external_id  text,
  ADD COLUMN title        text,
  ADD COLUMN metadata     jsonb,
  ADD COLUMN started_at   timestamptz,
  ADD COLUMN ended_at     timestamptz,
  ADD CONSTRAINT parts_type_check CHECK (type IN ('TEXT', 'TOOL', 'FILE', 'REASONING'));

-- Host-owned session metadata (e.g. the bridge's `opencode` key): set when the session is created by
-- or for its host, shown inside Session.metadata, never changed by updateSession.
ALTER TABLE sessions ADD COLUMN host_metadata jsonb NOT NULL DEFAULT '{}';
UPDATE sessions SET host_metadata = jsonb_build_object('opencode', metadata -> 'opencode'), metadata = metadata - 'opencode'
  WHERE host_id IS NOT NULL AND jsonb_typeof(metadata -> 'opencode') = 'object';

-- A host that manages sessions (capabilities.sessions): createSession under one of its sessions, a
-- rename and a removal are routed to it as host commands.
ALTER TABLE hosts ADD COLUMN can_manage_sessions boolean NOT NULL DEFAULT false;

-- CREATE_SESSION expects a reply (like COMPACT_SESSION); RENAME_SESSION and REMOVE_SESSION are
-- acknowledged. A REMOVE_SESSION command outlives its session row, so session_id no longer references
-- sessions: removeSession deletes the other commands of the sessions it removes itself.
ALTER TABLE host_commands DROP CONSTRAINT IF EXISTS host_commands_session_id_fkey;
ALTER TABLE host_commands DROP CONSTRAINT host_commands_kind_check,
  DROP CONSTRAINT host_commands_request_check,
  ADD CONSTRAINT host_commands_kind_check CHECK (kind IN ('CANCEL_JOB', 'INTERRUPT_EXECUTION', 'COMPACT_SESSION', 'GENERATE',
    'CREATE_SESSION', 'RENAME_SESSION', 'REMOVE_SESSION')),
  ADD CONSTRAINT host_commands_request_check
    CHECK ((kind IN ('COMPACT_SESSION', 'GENERATE', 'CREATE_SESSION')) = (expires_at IS NOT NULL AND payload IS NOT NULL));
