-- The usage aggregates (domain/usage.ts) read the executions settled in a time range: with this index a range
-- that is a small part of the history (a day, a week of a year) reads only its executions, and from them their
-- messages, parts and jobs by their own indexes. (Settling already updates an indexed row: one more entry.)
CREATE INDEX executions_settled_at ON executions (settled_at) WHERE settled_at IS NOT NULL;
