-- Idempotency keys of the host and plugin protocol (createSession, beginExecution, appendMessage,
-- startJob). A client that cannot know whether its last call landed (it crashed after sending it, or
-- the connection dropped before the answer) sends the same key again and gets the object the first
-- call created, instead of a second one. See domain/idempotency.ts.
--
-- scope: the session's ID for work inside a session (the key row goes with the session), or 'global'
-- for createSession (kept after the session is removed, so a late retry cannot resurrect it).
CREATE TABLE idempotency_keys (
  scope        text NOT NULL,
  operation    text NOT NULL,
  key          text NOT NULL,
  -- SHA-256 of the request's defining fields: the same key with a different request is refused.
  fingerprint  text NOT NULL,
  result_id    text NOT NULL,
  session_id   text REFERENCES sessions (id) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, operation, key)
);
CREATE INDEX idempotency_keys_session ON idempotency_keys (session_id) WHERE session_id IS NOT NULL;
