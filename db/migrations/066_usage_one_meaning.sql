-- One meaning of a step's token counts on every agent (issue 59; docs/CONTRACT.md section 1a): `input_tokens`
-- counts every input token, cached ones included, and `output_tokens` every output token, reasoning ones
-- included (the OpenTelemetry GenAI meaning of gen_ai.usage.input_tokens and output_tokens), with cache reads,
-- cache writes and reasoning tokens also given apart.
-- - Codex and the reference host counted them so already (OpenAI's input and output tokens).
-- - Claude Code's host reported Anthropic's `input_tokens`, which leave out the cache reads and writes: added.
-- - OpenCode's bridge reported OpenCode's step-finish `tokens` (1.18), which subtract the cache reads and writes
--   from the input and the reasoning from the output: both added back.
-- Replay reads the stored execution.settled v2 events of those hosts the same way (domain/events/catalogue.ts,
-- usageV3): the host of an execution and its name are the same rows here and there (hosts are never deleted).
-- Every settled execution here was settled by a v1 or v2 event (v1 carried no usage: replay calls those rows inexact).
--
-- And the cache writes by lifetime (Anthropic's 5-minute and 1-hour prompt caches), where the agent says.
ALTER TABLE executions ADD COLUMN IF NOT EXISTS cache_write_5m_tokens bigint, ADD COLUMN IF NOT EXISTS cache_write_1h_tokens bigint;

UPDATE executions e SET input_tokens = e.input_tokens + coalesce(e.cache_read_tokens, 0) + coalesce(e.cache_write_tokens, 0)
FROM hosts h
WHERE h.id = e.host_id AND split_part(h.name, ' ', 1) IN ('claude-code', 'opencode')
  AND e.input_tokens IS NOT NULL AND (e.cache_read_tokens IS NOT NULL OR e.cache_write_tokens IS NOT NULL);

UPDATE executions e SET output_tokens = e.output_tokens + e.reasoning_tokens
FROM hosts h
WHERE h.id = e.host_id AND split_part(h.name, ' ', 1) = 'opencode' AND e.output_tokens IS NOT NULL AND e.reasoning_tokens IS NOT NULL;
