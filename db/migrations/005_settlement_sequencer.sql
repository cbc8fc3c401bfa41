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
