-- The children of a session, kept with the parent: a row per child, on the parent's shard (distributed by
-- parent_id, colocated with sessions). createSession writes it in the transaction that holds the parent's
-- share lock (the session.created projector); the removal of either session deletes it.
--
-- removeSession reads a parent's children here, not by sessions.parent_id. On a Citus cluster a child's
-- creation commits on two workers (the parent's, holding its share lock and this row, and the child's,
-- holding its sessions row) in two phases, and the parent's worker may commit first: a removal that then
-- takes the parent's lock would not see the child's row on the other worker and leave it an orphan. This
-- row is visible as soon as the lock is released, so the removal knows the child and waits for its row.
CREATE TABLE session_children (
  parent_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  child_id  text NOT NULL,
  PRIMARY KEY (parent_id, child_id)
);

-- (A child whose parent is already gone, an orphan the race above left, keeps no row.)
-- (An IN list, not a join: a Citus cluster cannot join sessions to itself by parent_id.)
INSERT INTO session_children (parent_id, child_id)
SELECT parent_id, id FROM sessions WHERE parent_id IN (SELECT id FROM sessions);
