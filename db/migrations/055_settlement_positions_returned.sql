-- A sequencer pass hands back the rows it positioned, and its head notice carries them.
--
-- Until now every instance's settlement feed read the log again after each pass (the head notice, or
-- the pass of its own instance, said up to where): one more round trip between a settlement's commit
-- and its delivery, per instance and pass. Now the pass reads its positioned rows back in its own
-- transaction (positions v+1 … v+cnt, exactly those: nothing else can hold them) and returns them as
-- one JSON array, so the instance that ran it hands them out at once; and the head notice carries the
-- same array in `r` when it fits in a notification (NOTIFY payloads are limited to 8000 bytes; `r` is
-- null otherwise, and a listener reads the log as before). The rows are the columns of `settlements`,
-- keyed as their columns are named.
--
-- Same locking, numbering and Citus form as migration 054; the read back is a range of `pos`, which
-- every shard answers from its own rows.
DROP FUNCTION sequence_settlements(boolean, integer);
DROP FUNCTION sequence_settlements_locked(boolean, integer);

CREATE FUNCTION sequence_settlements_locked(wait boolean, batch integer)
RETURNS TABLE (busy boolean, n integer, top bigint, positioned json)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v bigint;
  cnt integer;
  got json;
BEGIN
  IF wait THEN
    SELECT value INTO v FROM clocks WHERE name = 'settlement' FOR UPDATE;
  ELSE
    SELECT value INTO v FROM clocks WHERE name = 'settlement' FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      RETURN QUERY SELECT true, 0, 0::bigint, NULL::json;
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
    SELECT json_agg(json_build_object('id', r.id, 'pos', r.pos, 'session_id', r.session_id, 'execution_id', r.execution_id,
        'status', r.status, 'directory', r.directory, 'settled_at', r.settled_at) ORDER BY r.pos)
      INTO got FROM settlements r WHERE r.pos > v AND r.pos <= v + cnt;
    PERFORM pg_notify('gateway_events', json_build_object('k', 's', 'p', v + cnt,
      'r', CASE WHEN octet_length(got::text) <= 7500 THEN got END)::text);
  END IF;
  RETURN QUERY SELECT false, cnt, v + cnt, got;
END
$$;

-- Migration 052's guard, unchanged but for the rows it passes on.
CREATE FUNCTION sequence_settlements(wait boolean, batch integer)
RETURNS TABLE (busy boolean, n integer, top bigint, positioned json)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM settlements s WHERE s.pos IS NULL) THEN
    RETURN QUERY SELECT false, 0, coalesce((SELECT c.value FROM clocks c WHERE c.name = 'settlement'), 0::bigint), NULL::json;
    RETURN;
  END IF;
  RETURN QUERY SELECT l.busy, l.n, l.top, l.positioned FROM sequence_settlements_locked(wait, batch) l;
END
$$;
