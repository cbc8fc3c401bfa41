import type { FieldNode, GraphQLResolveInfo } from 'graphql';
import { fieldsAt, selectedFields } from './lookahead.js';

/**
 * Projection: the columns a page of rows is read with, from what the selection reads of them.
 *
 * Reading every column costs the gateway per column and row (postgres.js decodes each value, a
 * timestamp into a Date, a jsonb by JSON.parse), which is most of a session list's CPU: 28 columns of
 * an execution where a list shows five. So a connection page of sessions or executions is read with the
 * columns its `edges.node` selection reads, and nothing else.
 *
 * The rule that keeps it safe: each type lists, per field, the columns its resolver reads from the row;
 * a field that is not listed (one added later, or one that hands the row itself to another type, such
 * as `Changeset.execution`) makes the page read whole rows. Rows read in part never reach a cache that
 * answers other fields (the loaders by ID are not primed with them). `test/projection.test.ts` checks
 * every listed field against the same field read through a whole row.
 */
export interface Projection {
  /** Columns every row is read with (keys, cursors, what the loaders themselves use). */
  key: readonly string[];
  /** Per field: the columns its resolver reads, or a function of the field's nodes (null: the whole row). */
  fields: Readonly<Record<string, readonly string[] | ((nodes: FieldNode[], info: GraphQLResolveInfo) => readonly string[] | null)>>;
}

const USAGE = ['input_tokens', 'output_tokens', 'reasoning_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost'];

/** Execution (schema/execution.ts, and `changeset`/`boundary` in schema/changeset.ts). */
export const EXECUTION: Projection = {
  key: ['id', 'session_id', 'sequence', 'status'],
  fields: {
    __typename: [], id: [], session: [], sequence: [], status: [],
    interruptReason: ['interrupt_reason'], trigger: ['trigger'], startedAt: ['started_at'], settledAt: ['settled_at'],
    error: ['error'], hostID: ['host_id'], externalID: ['external_id'], model: ['provider_id', 'model_id'],
    agent: ['agent'], mode: ['mode'], finishReason: ['finish_reason'], errorName: ['error_name'], usage: USAGE,
    messages: [], jobs: [],
    boundary: ['start_snapshot_id', 'end_snapshot_id'],
    // The changeset reads the execution's status and ID; `Changeset.execution` hands the row on whole.
    changeset: (nodes, info) => (selectedFields(info.fragments, nodes).has('execution') ? null : []),
    // The drift reads the execution's start boundary (its session and sequence are key columns).
    driftBefore: (nodes, info) => (selectedFields(info.fragments, nodes).has('execution') ? null : ['start_snapshot_id']),
  },
};

/** Session (schema/session.ts, `eventsCursor` in schema/events.ts). */
export const SESSION: Projection = {
  key: ['id'],
  fields: {
    __typename: [], id: [], parentID: ['parent_id'], parent: ['parent_id'], children: [],
    title: ['title'], directory: ['directory'], metadata: ['metadata', 'host_metadata'],
    status: ['sealed_at', 'seal_requested_at'], sealedAt: ['sealed_at'], createdAt: ['created_at'], updatedAt: ['updated_at'],
    executions: [], runningExecution: [], lastSettledExecution: [], messages: [], jobs: [],
    eventsCursor: ['last_seq'],
  },
};

const cache = new WeakMap<Projection, WeakMap<readonly FieldNode[], readonly string[] | null>>();

/**
 * The columns to read the rows of this connection field's page with (`edges.node`), in a stable order,
 * or null to read whole rows. Computed once per field of the operation. `fieldNodes`: the nodes of the
 * connection field when they are not info's own (a look-ahead from a field above it).
 */
export function pageColumns(p: Projection, info: GraphQLResolveInfo, fieldNodes: readonly FieldNode[] = info.fieldNodes): readonly string[] | null {
  let byNodes = cache.get(p);
  if (!byNodes) cache.set(p, (byNodes = new WeakMap()));
  if (byNodes.has(fieldNodes)) return byNodes.get(fieldNodes)!;
  const node = fieldsAt(info.fragments, fieldNodes, ['edges', 'node']);
  let cols: Set<string> | null = new Set(p.key);
  for (const [name, nodes] of selectedFields(info.fragments, node)) {
    const f = Object.prototype.hasOwnProperty.call(p.fields, name) ? p.fields[name] : undefined;
    const c = typeof f === 'function' ? f(nodes, info) : f;
    if (!c) { cols = null; break; }
    for (const x of c) cols.add(x);
  }
  const out = cols && [...cols].sort();
  byNodes.set(fieldNodes, out);
  return out;
}
