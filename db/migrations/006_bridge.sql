-- The OpenCode bridge's durable state: which OpenCode server it mirrors under which host ID,
-- and per OpenCode session the gateway session it maps to, the last applied history sequence number
-- and the in-flight mapping state (open execution, jobs, messages already mirrored). Written by the
-- bridge process after each applied OpenCode event, so a restarted bridge resumes without gap or duplicate.
CREATE TABLE bridge_opencode_hosts (
  server      text PRIMARY KEY,          -- the OpenCode base URL (normalized)
  host_id     text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bridge_opencode_sessions (
  server         text NOT NULL,
  oc_session_id  text NOT NULL,
  session_id     text,                   -- the gateway session (null until created)
  last_seq       integer NOT NULL DEFAULT -1,
  state          jsonb NOT NULL DEFAULT '{}',
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (server, oc_session_id)
);
CREATE INDEX bridge_opencode_sessions_session ON bridge_opencode_sessions (session_id);

-- Gateway message -> OpenCode message, and gateway part -> OpenCode part (for corrections/retractions).
CREATE TABLE bridge_opencode_messages (
  message_id     text PRIMARY KEY,
  session_id     text NOT NULL,
  server         text NOT NULL,
  oc_session_id  text NOT NULL,
  oc_message_id  text NOT NULL,
  parts          jsonb NOT NULL DEFAULT '{}'  -- { gatewayPartID: ocPartID }
);
CREATE INDEX bridge_opencode_messages_oc ON bridge_opencode_messages (server, oc_message_id);
