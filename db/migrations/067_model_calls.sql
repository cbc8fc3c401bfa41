-- The model calls of an execution (issue 59): each request the agent made to a model within the execution, in
-- order, with its model, usage (in the one meaning of migration 066), cost where the agent reported one, finish
-- reason, and its start and end as the agent recorded them (times_from AGENT) or, where it did not, as its host
-- observed them (HOST). Written by execution.settled's projector from the settlement's modelCalls, so the
-- journal owns them (replay rebuilds them); distributed by session with the execution (db/distribute.ts).
CREATE TABLE model_calls (
  session_id text NOT NULL,
  execution_id text NOT NULL,
  index integer NOT NULL,
  external_id text,
  provider_id text,
  model_id text,
  started_at timestamptz,
  ended_at timestamptz,
  times_from text NOT NULL CHECK (times_from IN ('AGENT', 'HOST')),
  finish_reason text,
  input_tokens bigint,
  output_tokens bigint,
  reasoning_tokens bigint,
  cache_read_tokens bigint,
  cache_write_tokens bigint,
  cache_write_5m_tokens bigint,
  cache_write_1h_tokens bigint,
  cost double precision,
  PRIMARY KEY (session_id, execution_id, index),
  CONSTRAINT model_calls_execution_fkey FOREIGN KEY (session_id, execution_id) REFERENCES executions (session_id, id) ON DELETE CASCADE
);
