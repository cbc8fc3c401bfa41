-- Review comments (issue 50): a reviewer's comment on a line, a file or the whole of a changeset (an execution's,
-- a range's or a drift's), which can be sent to the session's agent as its next prompt. Journal-owned: written
-- only by the projectors of the review_comment.* events (domain/events/projectors.ts), so replay rebuilds it.
CREATE TABLE review_comments (
  id                        text NOT NULL,
  session_id                text NOT NULL REFERENCES sessions(id),
  author_token_id           text,
  author_role               text NOT NULL CHECK (author_role IN ('admin', 'host', 'plugin', 'reader')),
  body                      text NOT NULL CHECK (body <> ''),
  -- The anchor: the changeset (EXECUTION: execution_id's own; RANGE: Session.changes(from_execution_id, execution_id);
  -- DRIFT: execution_id's driftBefore), then the file (null: the whole changeset), the side and the lines.
  changeset_kind            text NOT NULL CHECK (changeset_kind IN ('EXECUTION', 'RANGE', 'DRIFT')),
  execution_id              text NOT NULL,
  from_execution_id         text,
  path                      text,
  side                      text CHECK (side IN ('OLD', 'NEW')),
  line                      integer CHECK (line >= 1),
  start_line                integer CHECK (start_line >= 1),
  quote                     text,
  state                     text NOT NULL DEFAULT 'OPEN' CHECK (state IN ('OPEN', 'RESOLVED')),
  created_at                timestamptz NOT NULL,
  updated_at                timestamptz NOT NULL,
  resolved_at               timestamptz,
  -- The last send that carried it (a PROMPT host command) and the execution that answered it.
  sent_command_id           text,
  sent_at                   timestamptz,
  answered_by_execution_id  text,
  PRIMARY KEY (session_id, id),
  CHECK ((changeset_kind = 'RANGE') = (from_execution_id IS NOT NULL)),
  CHECK (path IS NOT NULL OR (side IS NULL AND line IS NULL)),
  CHECK ((side IS NULL) = (line IS NULL)),
  CHECK (start_line IS NULL OR (line IS NOT NULL AND start_line <= line)),
  CHECK ((state = 'RESOLVED') = (resolved_at IS NOT NULL))
);
-- Changeset.comments: the comments of one changeset, by its kind and executions.
CREATE INDEX review_comments_changeset ON review_comments (session_id, execution_id, changeset_kind);
-- A comment by ID alone (an ID of the old shape carries no session).
CREATE INDEX review_comments_id ON review_comments (id);

-- Hosts that can take a prompt (capabilities.prompt): sendReviewComments asks them with a PROMPT command.
ALTER TABLE hosts ADD COLUMN can_prompt boolean NOT NULL DEFAULT false;

ALTER TABLE host_commands
  DROP CONSTRAINT host_commands_kind_check,
  ADD CONSTRAINT host_commands_kind_check
    CHECK (kind IN ('CANCEL_JOB', 'INTERRUPT_EXECUTION', 'COMPACT_SESSION', 'GENERATE',
      'CREATE_SESSION', 'RENAME_SESSION', 'REMOVE_SESSION', 'CLOSE_ADMISSIONS', 'PROMPT')),
  -- A PROMPT is a request: a payload ({ text, commentIDs }) and a deadline, answered by the execution that carries it out.
  DROP CONSTRAINT host_commands_request_check,
  ADD CONSTRAINT host_commands_request_check
    CHECK ((kind IN ('COMPACT_SESSION', 'GENERATE', 'CREATE_SESSION', 'PROMPT')) = (expires_at IS NOT NULL AND payload IS NOT NULL));
