import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './errors.js';
import './connection.js';
import './enums.js';
import './session.js';
import './execution.js';
import './changeset.js';
import './snapshot-text.js';
import './attribution.js';
import './job.js';
import './message.js';
import './host.js';
import './continuity.js';
import './token.js';
import './settlement.js';
import './events.js';
import './corrections.js';
import './context.js';
import './seal.js';
import './commands.js';
import './admission.js';
import './compaction.js';
import './generation.js';
import './usage.js';
import './review-comments.js';

export const schema = builder.toSchema();

/** The SDL committed as schema.graphql (sorted, so diffs show real changes only). */
export function printGatewaySchema(): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}
