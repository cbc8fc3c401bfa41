-- A settlement is positioned by its own commit when the clock is free.
--
-- Until now a settling transaction only staged its row (pos NULL) and sent a "staged" notice; every
-- instance's sequencer heard it and ran a pass, one of them positioned the row and committed, and its
-- head notice went out. Between the settlement's commit and its delivery: the notice's trip to the
-- listening connections, a pass's round trip with a commit of its own, and for the other instances
-- the head notice's trip too. On a busy machine each of those hops is a scheduling delay.
--
-- Now a deferred constraint trigger runs the same locked pass (sequence_settlements_locked) inside
-- the settling transaction, at its COMMIT: the clock is taken with SKIP LOCKED, so a settling
-- transaction never waits for it. When it is free, the pass positions every staged row it can see,
-- its own among them, and its head notice (with the rows) is delivered by that very commit. When the
-- clock is busy (another pass, or another settlement committing at the same moment), or a backlog of
-- more than its batch (500 rows) is ahead of it, the row stays staged and the trigger sends the "staged"
-- notice instead: the sequencers position it, as before.
--
-- Why this keeps the log's promise: positions are still handed out only under the clock row lock, by
-- passes that run one after another, each starting after the previous one committed (a pass in a
-- settling transaction holds the clock until that transaction's commit is visible, like any pass).
-- Why at COMMIT and not in the settling statement: a deferred trigger runs inside the server's commit
-- processing, so the clock is held only for the pass and the commit itself, never across a round trip
-- to a client (a client that stalled between its last statement and COMMIT would hold up every
-- settlement). A transaction held open after staging its row therefore holds nothing.
--
-- On a Citus cluster the settlements table is distributed and has no trigger: db/distribute.ts drops
-- it before distributing, and this migration does not create it on a table that is already
-- distributed. There a settling transaction stays single-shard and the sequencer positions every row
-- (README "Scaling"); recordSettlement sends the staged notice itself when the trigger is absent.
CREATE FUNCTION settlement_positioned_at_commit() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- Positioned already: by an earlier firing in this transaction (it positions every row it can
  -- see, this transaction's own included), or by a pass.
  IF NOT EXISTS (SELECT 1 FROM settlements s WHERE s.session_id = NEW.session_id AND s.id = NEW.id AND s.pos IS NULL) THEN
    RETURN NULL;
  END IF;
  -- A smaller batch than the sequencer's: a settling commit positions at most 500 rows (a backlog
  -- ahead of its own row is the sequencer's; its own row then stays staged).
  PERFORM 1 FROM sequence_settlements_locked(false, 500);
  IF EXISTS (SELECT 1 FROM settlements s WHERE s.session_id = NEW.session_id AND s.id = NEW.id AND s.pos IS NULL) THEN
    PERFORM pg_notify('gateway_events', json_build_object('k', 'q')::text);
  END IF;
  RETURN NULL;
END
$$;

DO $$
DECLARE
  distributed boolean := false;
BEGIN
  IF to_regclass('pg_dist_partition') IS NOT NULL THEN
    EXECUTE 'SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = ''settlements''::regclass)' INTO distributed;
  END IF;
  IF distributed THEN
    RETURN;
  END IF;
  CREATE CONSTRAINT TRIGGER settlement_positioned_at_commit AFTER INSERT ON settlements
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION settlement_positioned_at_commit();
END
$$;
