-- Foundation: access tokens, hosts, sessions, executions, messages, jobs, the per-session journal,
-- durable tombstones and the global settlement log.
--
-- Every table that grows with history carries session_id (the future distribution column); the
-- only tables without it are global by nature (tokens, hosts, clocks).

CREATE TABLE tokens (
  id          text PRIMARY KEY,
  hash        bytea NOT NULL UNIQUE,
  role        text NOT NULL CHECK (role IN ('admin', 'host', 'plugin', 'reader')),
  directory   text,
  label       text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

CREATE TABLE hosts (
  id                text PRIMARY KEY,
  name              text NOT NULL,
  can_cancel        boolean NOT NULL DEFAULT false,
  can_compact       boolean NOT NULL DEFAULT false,
  can_generate      boolean NOT NULL DEFAULT false,
  models            jsonb NOT NULL DEFAULT '[]',
  lease_ms          integer NOT NULL CHECK (lease_ms > 0),
  lease_expires_at  timestamptz NOT NULL,
  registered_at     timestamptz NOT NULL DEFAULT now(),
  renewed_at        timestamptz NOT NULL DEFAULT now(),
  token_id          text
);

CREATE TABLE sessions (
  id                 text PRIMARY KEY,
  parent_id          text REFERENCES sessions (id),
  title              text NOT NULL DEFAULT '',
  directory          text NOT NULL,
  metadata           jsonb NOT NULL DEFAULT '{}',
  host_id            text REFERENCES hosts (id),
  seal_requested_at  timestamptz,
  sealed_at          timestamptz,
  last_seq           bigint NOT NULL DEFAULT 0,
  execution_count    integer NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_parent ON sessions (parent_id, id);
CREATE INDEX sessions_directory ON sessions (directory text_pattern_ops);

CREATE TABLE executions (
  id                 text PRIMARY KEY,
  session_id         text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  sequence           integer NOT NULL,
  host_id            text NOT NULL REFERENCES hosts (id),
  status             text NOT NULL CHECK (status IN ('RUNNING', 'SUCCEEDED', 'FAILED', 'INTERRUPTED', 'ABANDONED')),
  trigger            text NOT NULL CHECK (trigger IN ('PROMPT', 'SYNTHETIC', 'COMMAND', 'RESUME')),
  interrupt_reason   text CHECK (interrupt_reason IN ('USER', 'SHUTDOWN', 'SUPERSEDED', 'SEAL')),
  error              text,
  started_at         timestamptz NOT NULL DEFAULT now(),
  settled_at         timestamptz,
  UNIQUE (session_id, sequence)
);
-- At most one running execution per session: the database says so, not only the code.
CREATE UNIQUE INDEX executions_one_running ON executions (session_id) WHERE status = 'RUNNING';
CREATE INDEX executions_host_running ON executions (host_id) WHERE status = 'RUNNING';

CREATE TABLE messages (
  id                 text PRIMARY KEY,
  session_id         text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  execution_id       text REFERENCES executions (id) ON DELETE CASCADE,
  position           bigint NOT NULL,
  role               text NOT NULL CHECK (role IN ('USER', 'ASSISTANT', 'SYSTEM')),
  origin             text NOT NULL CHECK (origin IN ('PROMPT', 'SYNTHETIC', 'MODEL', 'HOST')),
  revision           integer NOT NULL DEFAULT 1,
  retracted_at       timestamptz,
  retraction_reason  text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (session_id, position)
);
CREATE INDEX messages_execution ON messages (execution_id, position);

CREATE TABLE parts (
  id            text PRIMARY KEY,
  message_id    text NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  session_id    text NOT NULL,
  index         integer NOT NULL,
  type          text NOT NULL CHECK (type IN ('TEXT', 'TOOL', 'FILE')),
  text          text,
  revision      integer NOT NULL DEFAULT 1,
  corrected_at  timestamptz,
  tool          text,
  input         jsonb,
  output        text,
  status        text,
  path          text,
  mime          text,
  UNIQUE (message_id, index)
);

CREATE TABLE jobs (
  id             text PRIMARY KEY,
  session_id     text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  execution_id   text REFERENCES executions (id) ON DELETE CASCADE,
  host_id        text NOT NULL REFERENCES hosts (id),
  kind           text NOT NULL CHECK (kind IN ('SHELL', 'SUBAGENT', 'OTHER')),
  title          text NOT NULL DEFAULT '',
  command        text,
  status         text NOT NULL CHECK (status IN ('RUNNING', 'CANCELLING', 'COMPLETED', 'ERROR', 'CANCELLED', 'LOST')),
  background     boolean NOT NULL DEFAULT false,
  restored       boolean NOT NULL DEFAULT false,
  started_at     timestamptz NOT NULL DEFAULT now(),
  completed_at   timestamptz,
  exit_code      integer
);
CREATE INDEX jobs_session ON jobs (session_id, id);
CREATE INDEX jobs_execution ON jobs (execution_id, id);
CREATE INDEX jobs_host_unfinished ON jobs (host_id) WHERE status IN ('RUNNING', 'CANCELLING');

-- The per-session journal: append-only, gap-free seq per session, in commit order for that session
-- (seq is taken under the session row lock). Readable tables are projections of it. It outlives
-- the session's removal (the last event of a removed session is session.removed): not erasure.
CREATE TABLE journal (
  session_id  text NOT NULL,
  seq         bigint NOT NULL,
  type        text NOT NULL,
  version     integer NOT NULL DEFAULT 1,
  payload     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, seq)
);

-- Durable answers about removed IDs (sessions and their executions).
CREATE TABLE tombstones (
  id          text PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('session', 'execution')),
  session_id  text NOT NULL,
  directory   text NOT NULL,
  removed_at  timestamptz NOT NULL DEFAULT now()
);

-- Global counters whose row lock, taken as the last step before commit, makes their order the
-- commit order (a transaction waits for the previous holder to commit before it takes a number).
CREATE TABLE clocks (
  name   text PRIMARY KEY,
  value  bigint NOT NULL DEFAULT 0
);
INSERT INTO clocks (name) VALUES ('settlement');

CREATE TABLE settlements (
  pos           bigint PRIMARY KEY,
  session_id    text NOT NULL,
  execution_id  text NOT NULL,
  status        text NOT NULL,
  directory     text NOT NULL,
  settled_at    timestamptz NOT NULL
);
CREATE INDEX settlements_session ON settlements (session_id, pos);
