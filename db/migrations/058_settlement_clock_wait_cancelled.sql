-- A cancelled wait for the settlement clock ends the wait, never the commit.
--
-- Migration 057's trigger waits for a busy clock under a short `lock_timeout` and catches
-- lock_not_available. PostgreSQL does not always report that timeout as one: when it fires just as a
-- wait ends and the pass goes on to wait for another lock (the clock row's next version, after the
-- holder updated it: "while rechecking updated tuple"), the new wait resets the timeout's indicator,
-- and the pending cancel is reported as query_canceled ("canceling statement due to user request").
-- The trigger did not catch that, so the whole settling COMMIT failed: seen once in about 35,000
-- settlements with 40-50 sessions settling at once on two cores.
--
-- The wait is only a shortcut (a settlement the commit cannot position stays staged for the
-- sequencer), so it now also ends on query_canceled, as on a timeout: the row stays staged, the
-- staged notice goes out and the commit goes ahead. The same holds for a real cancel request (or
-- statement_timeout) arriving during the wait, at most the bound long: it abandons the wait, not the
-- settlement, which is then only a few statements from its end. A cancel anywhere else in the
-- transaction is not affected.
--
-- Citus: the trigger does not exist on a distributed log (migration 056, db/distribute.ts); this
-- replaces only its function.
CREATE OR REPLACE FUNCTION settlement_positioned_at_commit() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  own_timeout text := current_setting('lock_timeout');
  wait_setting text := current_setting('gateway.settlement_clock_wait_ms', true);
  wait_ms integer := 20;
  -- An earlier firing of this commit (for another row it staged) waited its bound out: later firings
  -- do not wait again (a transaction staging many rows waits once, not once per row).
  waited_out boolean := current_setting('gateway.settlement_clock_waited_out', true) IS NOT DISTINCT FROM 'on';
BEGIN
  -- Positioned already: by an earlier firing in this transaction (it positions every row it can
  -- see, this transaction's own included), or by a pass.
  IF NOT EXISTS (SELECT 1 FROM settlements s WHERE s.session_id = NEW.session_id AND s.id = NEW.id AND s.pos IS NULL) THEN
    RETURN NULL;
  END IF;
  IF wait_setting ~ '^\s*[0-9]{1,7}\s*$' THEN
    wait_ms := least(wait_setting::integer, 10000);
  END IF;
  -- A smaller batch than the sequencer's: a settling commit positions at most 500 rows (a backlog
  -- ahead of its own row is the sequencer's; its own row then stays staged).
  IF wait_ms = 0 OR waited_out THEN
    PERFORM 1 FROM sequence_settlements_locked(false, 500);
  ELSE
    BEGIN
      PERFORM set_config('lock_timeout', wait_ms || 'ms', true);
      PERFORM 1 FROM sequence_settlements_locked(true, 500);
    EXCEPTION WHEN lock_not_available OR query_canceled THEN
      -- The clock (or a staged row) stayed locked, or the wait was cancelled (which is also how
      -- PostgreSQL sometimes reports the timeout: migration 058): the sequencer positions the row.
      PERFORM set_config('gateway.settlement_clock_waited_out', 'on', true);
    END;
    PERFORM set_config('lock_timeout', own_timeout, true);
  END IF;
  IF EXISTS (SELECT 1 FROM settlements s WHERE s.session_id = NEW.session_id AND s.id = NEW.id AND s.pos IS NULL) THEN
    PERFORM pg_notify('gateway_events', json_build_object('k', 'q')::text);
  END IF;
  RETURN NULL;
END
$$;
