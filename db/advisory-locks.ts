/**
 * Every advisory lock the gateway takes, by what it serialises: one registry, so that no two purposes share a
 * key by accident. Keys are transaction-scoped (`pg_advisory_xact_lock`). A one-key lock (bigint) and the first
 * key of a two-key lock (int, int) are separate lock spaces in PostgreSQL; both are numbered here alike.
 */
export const ADVISORY_LOCKS = {
  /** Migrating and placing the schema (db/migrate.ts, db/distribute.ts): instances starting together do it once. */
  schema: 7_424_001,
  /** The first admin token (domain/tokens.ts ensureAdminToken): exactly one, whatever starts at once. */
  firstAdmin: 7_424_002,
  /** Held shared by content uploads, exclusively by retention's content pruning (domain/snapshots.ts). */
  contents: 7_424_003,
  /** One changeset pruner at a time (domain/changesets.ts retention). */
  pruner: 7_424_004,
  /** Two-key: createSession calls with the same idempotency key, one at a time (domain/idempotency.ts). */
  idempotentCreate: 7_424_009,
  /** Two-key: uploads of the same content, one at a time (domain/snapshots.ts; second key from its hash). */
  contentUpload: 7_424_010,
  /** One OpenTelemetry trace exporter at a time, across instances (server/otel-export.ts): each settlement sent once. */
  otelExport: 7_424_011,
} as const;
