-- Every history row is keyed by its session, so the schema distributes on Citus by session
-- (`gateway distribute`, db/distribute.ts) and a row is found on its session's shard alone.
--
-- On one Postgres nothing changes for users: the same rows, IDs and answers. What changes is the keys:
-- - every history table's primary key starts with session_id (Citus: a UNIQUE constraint must include
--   the distribution column), and foreign keys between history tables include session_id (Citus: a
--   foreign key between distributed tables must join on the distribution column);
-- - sessions.parent_id no longer references sessions: a self-reference across shards is refused in any
--   form. createSession checks the parent under its row lock and removeSession removes the subtree
--   itself (domain/sessions.ts), so nothing relied on the database to refuse a dangling parent;
-- - idempotency_keys no longer references sessions (it is distributed by scope, and the global scope
--   has no session): the session's removal deletes its keys (domain/events/projectors.ts);
-- - settlements.pos is no longer UNIQUE (it cannot be enforced across shards): the sequencer alone
--   gives each row its position, once (migrations 005 and 052; test/settlements-sequencer.test.ts).

-- Foreign keys that go by id alone.
ALTER TABLE executions DROP CONSTRAINT executions_start_snapshot_id_fkey, DROP CONSTRAINT executions_end_snapshot_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_execution_id_fkey;
ALTER TABLE parts DROP CONSTRAINT parts_message_id_fkey;
ALTER TABLE jobs DROP CONSTRAINT jobs_execution_id_fkey;
ALTER TABLE host_commands DROP CONSTRAINT host_commands_job_id_fkey, DROP CONSTRAINT host_commands_execution_id_fkey;
ALTER TABLE changesets DROP CONSTRAINT changesets_execution_id_fkey;
ALTER TABLE changeset_files DROP CONSTRAINT changeset_files_execution_id_fkey;
ALTER TABLE compactions DROP CONSTRAINT compactions_summary_message_id_fkey;
ALTER TABLE sessions DROP CONSTRAINT sessions_parent_id_fkey;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_session_id_fkey;

-- Keys led by session_id.
ALTER TABLE executions DROP CONSTRAINT executions_pkey, ADD PRIMARY KEY (session_id, id);
ALTER TABLE snapshots DROP CONSTRAINT snapshots_pkey, ADD PRIMARY KEY (session_id, id);
ALTER TABLE messages DROP CONSTRAINT messages_pkey, ADD PRIMARY KEY (session_id, id);
ALTER TABLE parts DROP CONSTRAINT parts_pkey, ADD PRIMARY KEY (session_id, id);
ALTER TABLE parts DROP CONSTRAINT parts_message_id_index_key, ADD CONSTRAINT parts_message_index_key UNIQUE (session_id, message_id, index);
ALTER TABLE jobs DROP CONSTRAINT jobs_pkey, ADD PRIMARY KEY (session_id, id);
ALTER TABLE tombstones DROP CONSTRAINT tombstones_pkey, ADD PRIMARY KEY (session_id, id);
ALTER TABLE settlements DROP CONSTRAINT settlements_pkey, ADD PRIMARY KEY (session_id, id);
DROP INDEX settlements_pos;
CREATE INDEX settlements_pos ON settlements (pos);
ALTER TABLE host_commands DROP CONSTRAINT host_commands_pkey, ADD PRIMARY KEY (session_id, id);
ALTER TABLE changesets DROP CONSTRAINT changesets_pkey, ADD PRIMARY KEY (session_id, execution_id);
ALTER TABLE changeset_files DROP CONSTRAINT changeset_files_pkey, ADD PRIMARY KEY (session_id, execution_id, ord);
ALTER TABLE admissions DROP CONSTRAINT admissions_pkey, ADD PRIMARY KEY (session_id, id);

-- Foreign keys within a session.
ALTER TABLE executions
  ADD CONSTRAINT executions_start_snapshot_fkey FOREIGN KEY (session_id, start_snapshot_id) REFERENCES snapshots (session_id, id),
  ADD CONSTRAINT executions_end_snapshot_fkey FOREIGN KEY (session_id, end_snapshot_id) REFERENCES snapshots (session_id, id);
ALTER TABLE messages ADD CONSTRAINT messages_execution_fkey
  FOREIGN KEY (session_id, execution_id) REFERENCES executions (session_id, id) ON DELETE CASCADE;
ALTER TABLE parts ADD CONSTRAINT parts_message_fkey
  FOREIGN KEY (session_id, message_id) REFERENCES messages (session_id, id) ON DELETE CASCADE;
ALTER TABLE jobs ADD CONSTRAINT jobs_execution_fkey
  FOREIGN KEY (session_id, execution_id) REFERENCES executions (session_id, id) ON DELETE CASCADE;
ALTER TABLE host_commands
  ADD CONSTRAINT host_commands_job_fkey FOREIGN KEY (session_id, job_id) REFERENCES jobs (session_id, id) ON DELETE CASCADE,
  ADD CONSTRAINT host_commands_execution_fkey FOREIGN KEY (session_id, execution_id) REFERENCES executions (session_id, id) ON DELETE CASCADE;
ALTER TABLE changesets ADD CONSTRAINT changesets_execution_fkey
  FOREIGN KEY (session_id, execution_id) REFERENCES executions (session_id, id) ON DELETE CASCADE;
ALTER TABLE changeset_files ADD CONSTRAINT changeset_files_changeset_fkey
  FOREIGN KEY (session_id, execution_id) REFERENCES changesets (session_id, execution_id) ON DELETE CASCADE;
ALTER TABLE compactions ADD CONSTRAINT compactions_summary_message_fkey
  FOREIGN KEY (session_id, summary_message_id) REFERENCES messages (session_id, id) ON DELETE CASCADE;

-- Indexes that now lead with session_id (the ones the new primary keys make redundant go).
DROP INDEX executions_start_snapshot, executions_end_snapshot, messages_execution, jobs_execution,
  jobs_session, snapshots_session, changesets_session, host_commands_session;
CREATE INDEX executions_start_snapshot ON executions (session_id, start_snapshot_id) WHERE start_snapshot_id IS NOT NULL;
CREATE INDEX executions_end_snapshot ON executions (session_id, end_snapshot_id) WHERE end_snapshot_id IS NOT NULL;
CREATE INDEX messages_execution ON messages (session_id, execution_id, position);
CREATE INDEX jobs_execution ON jobs (session_id, execution_id, id);
CREATE INDEX compactions_summary ON compactions (session_id, summary_message_id);

-- A row is normally found by (session_id, id): new IDs carry their session (domain/ids.ts sessionOf).
-- IDs made before they did are found by id alone, through these (not unique: Citus cannot enforce
-- uniqueness without the distribution column; IDs are unique by construction).
CREATE INDEX executions_id ON executions (id);
CREATE INDEX snapshots_id ON snapshots (id);
CREATE INDEX messages_id ON messages (id);
CREATE INDEX parts_id ON parts (id);
CREATE INDEX jobs_id ON jobs (id);
CREATE INDEX tombstones_id ON tombstones (id);
CREATE INDEX host_commands_id ON host_commands (id);
CREATE INDEX admissions_id ON admissions (id);
CREATE INDEX changesets_execution ON changesets (execution_id);
