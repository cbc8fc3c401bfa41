-- A settling commit waits a moment for the clock instead of skipping it.
--
-- Migration 056 has a settling transaction's COMMIT position its own row when the settlement clock
-- is free, and skip it (SKIP LOCKED) when another commit or a sequencer pass holds it. Settlements
-- that commit close together then mostly skip: measured at 200 settlements/s on two cores, about a
-- quarter of them found the clock held by a neighbour's commit, went out as a "staged" notice, woke
-- every instance's sequencer (a pass each, most of them empty or busy themselves) and were delivered
-- tens of milliseconds later. The holder of the clock keeps it only for its pass and its commit
-- (a fraction of a millisecond on an idle machine), so waiting for it is almost always shorter than
-- that detour.
--
-- Now the trigger waits for the clock, 20 ms at most by default (as `lock_timeout`, for this pass
-- only; the transaction's own setting is restored). Commits that settle at the same moment take the
-- clock one after another, each positioning its own row (and every other staged row it can see) and
-- sending the head notice with its commit. When the wait runs out (a long sequencer pass, a backlog, a
-- stalled machine), the pass is abandoned (its subtransaction rolled back; it had written nothing) and
-- the row stays staged with its "staged" notice, as before: a settling commit is delayed by at most
-- the bound. A transaction that stages several rows waits once: after a firing of its commit has
-- waited its bound out, the later ones only try the clock. The same bound covers a staged row the pass
-- would update while another transaction holds its row lock: the waiting pass gives up rather than
-- wait longer.
--
-- The bound is the setting `gateway.settlement_clock_wait_ms`, a whole number of milliseconds, per
-- database, role or transaction (e.g. `ALTER DATABASE … SET gateway.settlement_clock_wait_ms = 50`);
-- 0 skips a busy clock at once, as migration 056 did; more than 10000 counts as 10000 (a commit never
-- hangs on the clock for long). A value that is not a whole number is ignored (a setting must never
-- make a commit fail).
--
-- The promise is unchanged: positions are handed out only by passes holding the clock row lock.
-- A pass that waited reads the clock after the holder's commit (FOR UPDATE returns the row's latest
-- version) and, in its next statement's snapshot, the rows that holder positioned, because a
-- committing transaction becomes visible before it releases its locks.
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
    EXCEPTION WHEN lock_not_available THEN
      -- The clock (or a staged row) stayed locked: the sequencer positions the row.
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
