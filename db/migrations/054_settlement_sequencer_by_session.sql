-- The sequencer pass in a form Citus distributes, and the same answers on one Postgres.
--
-- Migration 005's pass numbered the staged rows with a window function over the settlements table and
-- updated them by id. On a cluster distributed by session neither goes down to the shards: a window
-- without PARTITION BY the distribution column is not pushed down, and an UPDATE by id alone visits
-- every shard. Now the staged rows are read first (ORDER BY id LIMIT batch: each shard returns its
-- first rows and the coordinator merges them), numbered over that result, and updated by their key
-- (session_id, id). The count of rows updated gives the new top: positions v+1 … v+cnt, no gap.
--
-- Uniqueness of pos comes from here alone (053 dropped its unique index, which a cluster cannot
-- enforce): passes run one at a time under the clock row lock, each numbers only rows that have no
-- position yet, and commits before the next pass reads.
CREATE OR REPLACE FUNCTION sequence_settlements_locked(wait boolean, batch integer)
RETURNS TABLE (busy boolean, n integer, top bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v bigint;
  cnt integer;
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
  UPDATE settlements s SET pos = v + todo.rn
  FROM (
    SELECT staged.session_id, staged.id, row_number() OVER (ORDER BY staged.id) AS rn
    FROM (SELECT t.session_id, t.id FROM settlements t WHERE t.pos IS NULL ORDER BY t.id LIMIT batch) staged
  ) todo
  WHERE s.session_id = todo.session_id AND s.id = todo.id;
  GET DIAGNOSTICS cnt = ROW_COUNT;
  IF cnt > 0 THEN
    UPDATE clocks SET value = v + cnt WHERE name = 'settlement';
    PERFORM pg_notify('gateway_events', json_build_object('k', 's', 'p', v + cnt)::text);
  END IF;
  RETURN QUERY SELECT false, cnt, v + cnt;
END
$$;
