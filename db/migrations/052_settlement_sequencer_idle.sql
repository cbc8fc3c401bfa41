-- A sequencer pass with nothing to position no longer takes the clock.
--
-- Every gateway instance runs a pass on every "staged" notice, so for each settlement all but one of
-- the passes find its row already positioned. Such a pass used to lock the clock row anyway: a row
-- lock gives the transaction an ID, so its commit waits for a WAL flush (an fsync) while it holds the
-- clock, and the next settlement's pass waited behind it (or was told "busy" and retried 20 ms later).
-- Now a pass first looks (through the partial index settlements_unsequenced) for a committed row
-- without a position, in a snapshot taken after it was called; when there is none it returns at once,
-- locking and writing nothing. That answer is the one a locked pass would give: every settlement that
-- committed before the call already has a committed position (a pass that has positioned rows but not
-- committed yet leaves them without a position in this snapshot, so we go on to the clock and, with
-- wait = true, wait for it as before).
--
-- The locked pass itself is migration 005's function, unchanged, under a new name; this one is the
-- guard in front of it.
ALTER FUNCTION sequence_settlements(boolean, integer) RENAME TO sequence_settlements_locked;

CREATE FUNCTION sequence_settlements(wait boolean, batch integer)
RETURNS TABLE (busy boolean, n integer, top bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM settlements s WHERE s.pos IS NULL) THEN
    RETURN QUERY SELECT false, 0, coalesce((SELECT c.value FROM clocks c WHERE c.name = 'settlement'), 0::bigint);
    RETURN;
  END IF;
  RETURN QUERY SELECT l.busy, l.n, l.top FROM sequence_settlements_locked(wait, batch) l;
END
$$;
