-- Why a host could not capture a boundary snapshot (e.g. the OpenCode bridge: which object is missing
-- in which snapshot directory). The boundary then reads START_NOT_CAPTURED / END_NOT_CAPTURED with this
-- as its detail, instead of saying the host did not capture one.
ALTER TABLE executions ADD COLUMN start_capture_error text, ADD COLUMN end_capture_error text;
