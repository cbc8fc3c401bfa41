import { builder } from './builder.js';
import { SnapshotRef } from './changeset.js';
import { snapshotText, SNAPSHOT_TEXT_MAX_BYTES } from '../domain/snapshot-text.js';

builder.objectField(SnapshotRef, 'text', (t) => t.string({
  nullable: true,
  description: `The stored content of one file of this snapshot as UTF-8 text (e.g. to expand the context around a hunk exactly). Null when the path is not a stored file of the snapshot (absent, ignored, over the capture limit), the file is binary, not UTF-8 or over ${SNAPSHOT_TEXT_MAX_BYTES / 1024 / 1024} MiB, or its contents were pruned.`,
  args: { path: t.arg.string({ required: true }) },
  resolve: (s, { path }, ctx) => snapshotText(ctx.sql, s.id, path),
}));
