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
CREATE OR REPLACE FUNCTION sequence_settlements(wait boolean, batch integer)
RETURNS TABLE (busy boolean, n integer, top bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v bigint;
  cnt integer;
  mx bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM settlements s WHERE s.pos IS NULL) THEN
    SELECT value INTO v FROM clocks WHERE name = 'settlement';
    RETURN QUERY SELECT false, 0, coalesce(v, 0);
    RETURN;
  END IF;
  IF wait THEN
    SELECT value INTO v FROM clocks WHERE name = 'settlement' FOR UPDATE;
  ELSE
    SELECT value INTO v FROM clocks WHERE name = 'settlement' FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      RETURN QUERY SELECT true, 0, 0::bigint;
      RETURN;
    END IF;
  END IF;
  WITH todo AS (
    SELECT s.id, row_number() OVER (ORDER BY s.id) AS rn FROM settlements s WHERE s.pos IS NULL ORDER BY s.id LIMIT batch
  ), u AS (
    UPDATE settlements s SET pos = v + todo.rn FROM todo WHERE s.id = todo.id RETURNING s.pos
  )
  SELECT count(*)::integer, max(u.pos) INTO cnt, mx FROM u;
  IF cnt > 0 THEN
    UPDATE clocks SET value = mx WHERE name = 'settlement';
    PERFORM pg_notify('gateway_events', json_build_object('k', 's', 'p', mx)::text);
  END IF;
  RETURN QUERY SELECT false, cnt, coalesce(mx, v);
END
$$;
