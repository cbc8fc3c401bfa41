-- A pass positions only rows that are still staged when it writes them, and a pass that finds one of its
-- rows positioned meanwhile gives up as a pass that found the clock busy.
--
-- On a Citus cluster a pass commits in two phases: the coordinator commits its own part (the clock row,
-- releasing its lock) and then each worker commits the part it prepared. In between, the next pass can
-- take the clock and read the staged rows of a worker that has not committed yet: it sees the rows of
-- the previous pass still unpositioned. Its UPDATE then waited for them (they are locked by the prepared
-- part) and, joined by ID alone, positioned them a second time: a position left empty for ever, and a
-- settlement delivered twice under two positions (seen under load in test/subscriptions.test.ts on the
-- cluster). Now the UPDATE requires `pos IS NULL`, which PostgreSQL checks again on the row it waited
-- for, and the pass checks that its positions are exactly v+1 … v+cnt before it moves the clock; if a row
-- was skipped (a gap) it raises lock_not_available, which rolls the pass back: the sequencer treats it as
-- a busy clock (tried again once the other pass is visible), and the settling commit's trigger (on one
-- Postgres, where this cannot happen: a pass is visible at once) already leaves its row staged then.
CREATE OR REPLACE FUNCTION sequence_settlements_locked(wait boolean, batch integer)
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
  WHERE s.session_id = todo.session_id AND s.id = todo.id AND s.pos IS NULL;
  GET DIAGNOSTICS cnt = ROW_COUNT;
  IF cnt > 0 THEN
    SELECT json_agg(json_build_object('id', r.id, 'pos', r.pos, 'session_id', r.session_id, 'execution_id', r.execution_id,
        'status', r.status, 'directory', r.directory, 'settled_at', r.settled_at) ORDER BY r.pos)
      INTO got FROM settlements r WHERE r.pos > v AND r.pos <= v + cnt;
    IF json_array_length(got) IS DISTINCT FROM cnt THEN
      RAISE EXCEPTION 'a settlement this pass numbered was positioned by a pass not yet visible to it'
        USING ERRCODE = 'lock_not_available';
    END IF;
    UPDATE clocks SET value = v + cnt WHERE name = 'settlement';
    PERFORM pg_notify('gateway_events', json_build_object('k', 's', 'p', v + cnt,
      'r', CASE WHEN octet_length(got::text) <= 7500 THEN got END)::text);
  END IF;
  RETURN QUERY SELECT false, cnt, v + cnt, got;
END
$$;
