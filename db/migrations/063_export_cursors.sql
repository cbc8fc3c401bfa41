-- Where an exporter of the settlement log has got to: one row per exporter (the OpenTelemetry trace export,
-- server/otel-export.ts, is 'otel'). `pos` is the last settlement position exported; an exporter resumes
-- after it, so a restart loses nothing and sends nothing twice. The row is advanced in the transaction that
-- holds the exporter's advisory lock (db/advisory-locks.ts otelExport), so several gateway instances export
-- each settlement once.
CREATE TABLE export_cursors (
  name text NOT NULL PRIMARY KEY,
  pos bigint NOT NULL DEFAULT 0,
  exported bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
