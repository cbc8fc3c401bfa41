-- The settlement log gets its positions from a sequencer instead of inside the settling transaction.
--
-- A settling transaction now only stages its row (pos NULL) and notifies; it no longer holds the
-- global clock lock through its COMMIT, which capped the whole gateway at one settlement per
-- commit latency (~100/s on a disk with 7 ms fsync). The sequencer (any gateway instance; passes are
-- serialised by the clock row lock) gives every committed staged row the next positions, in the
-- order the rows became visible to it, and commits. Positions are therefore assigned only by
-- transactions that run one after the other, so a position is visible only when every smaller one
-- is: a reader that has seen p never later finds a new row below p, and a slow settling transaction
-- that commits late simply gets a later position. Readers only ever see sequenced rows (pos > x).
ALTER TABLE settlements DROP CONSTRAINT settlements_pkey;
ALTER TABLE settlements ALTER COLUMN pos DROP NOT NULL;
ALTER TABLE settlements ADD COLUMN id bigserial;
ALTER TABLE settlements ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX settlements_pos ON settlements (pos);
CREATE INDEX settlements_unsequenced ON settlements (id) WHERE pos IS NULL;

-- One sequencer pass, in one round trip: the clock row lock is held only server-side, from the first
-- statement of the function to the commit, never across a busy client's event loop. Each statement
-- of a volatile PL/pgSQL function takes a fresh snapshot, so the sequencing statement sees every row
-- committed before the clock lock was obtained. With wait = false a held clock means "busy".
CREATE FUNCTION sequence_settlements(wait boolean, batch integer)
RETURNS TABLE (busy boolean, n integer, top bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v bigint;
  cnt integer;
  mx bigint;
BEGIN
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
