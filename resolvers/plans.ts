import type { FieldNode, GraphQLResolveInfo } from 'graphql';
import { fieldsAt, oneWay, selectedFields, type Operation } from './selection.js';

/**
 * Read plans: what a selection of a Session, an Execution, a Changeset or a FileChange needs read, as a
 * typed value, computed once per selection (per field of an operation) by the type's planner. A
 * planner has one entry per field of its type, saying what selecting that field adds to the read
 * (columns of the row, the changeset to bring along, a page of children). The loaders of
 * resolvers/loaders.ts are keyed by (ID, plan) and return what the plan asked for, attached to the
 * row they read (`ExecutionRead.changesetRead`, `SessionRead.executionsRead`); a child field takes its
 * parent's read, and loads what it needs itself only when its parent reached it another way (a row by
 * ID, a mutation's answer), so a plan that reads too little costs a load, never a wrong answer.
 *
 * A field added to one of these types needs an entry here: planning a selection of a field without
 * one throws, and test/read-plans.test.ts fails for every field of the printed schema a planner lacks.
 */

/** What of an execution's frozen changeset row a selection reads: its counts (ChangesetCounts), or the whole row. */
export type RowRead = 'counts' | 'whole';
/** What of a changeset's files a selection reads: none, their list (no patch), or their whole rows (with patches). */
export type FileRead = 'none' | 'list' | 'patches';

export interface ChangesetPlan {
  /** Of its frozen row (an execution's changeset): the counts at least, to tell whether its files are readable. */
  readonly row: RowRead;
  readonly files: FileRead;
  /** Columns of its execution read through `Changeset.execution`, which hands on the execution it belongs to. */
  readonly executionColumns: readonly string[];
  readonly key: string;
}

export interface ExecutionPlan {
  /** The columns of the execution row, sorted (the key columns always). */
  readonly columns: readonly string[];
  /** What of its changeset to read along with it (`changeset`, `boundary`); null: nothing. */
  readonly changeset: ChangesetPlan | null;
  readonly key: string;
}

export interface SessionPlan {
  readonly columns: readonly string[];
  /** `executions` when every session of a list selects it one way (one key, the same arguments): a list reads those pages along. */
  readonly executions: { readonly nodes: FieldNode[]; readonly plan: ExecutionPlan } | null;
}

type Entry<A> = (into: A, nodes: FieldNode[], op: Operation) => void;

/** A planner: the type it plans, its fields (each with an entry), and `plan` (cached per selection). */
export interface Planner<P> {
  readonly typeName: string;
  readonly fields: readonly string[];
  plan(op: Operation, nodes: readonly FieldNode[]): P;
}

function planner<A, P>(typeName: string, start: () => A, entries: Record<string, Entry<A>>, finish: (a: A) => P): Planner<P> {
  const cache = new WeakMap<readonly FieldNode[], P>();
  return {
    typeName,
    fields: Object.keys(entries),
    plan(op, nodes) {
      let p = cache.get(nodes);
      if (p === undefined) {
        const into = start();
        for (const [name, sub] of selectedFields(op, nodes, typeName)) {
          if (name.startsWith('__')) continue;
          const entry = Object.prototype.hasOwnProperty.call(entries, name) ? entries[name] : undefined;
          if (!entry) throw new Error(`${typeName}.${name} has no entry in its read planner (resolvers/plans.ts)`);
          entry(into, sub, op);
        }
        cache.set(nodes, (p = finish(into)));
      }
      return p;
    },
  };
}

interface Columns { columns: Set<string> }
/** An entry that reads these columns of the row (none: the field reads nothing of it, or loads what it shows itself). */
const columns = <A extends Columns>(...names: string[]): Entry<A> => (into) => { for (const n of names) into.columns.add(n); };

const ROW_ORDER: readonly RowRead[] = ['counts', 'whole'];
const FILE_ORDER: readonly FileRead[] = ['none', 'list', 'patches'];
const most = <T>(order: readonly T[], a: T, b: T): T => (order.indexOf(a) >= order.indexOf(b) ? a : b);

function changesetPlan(row: RowRead, files: FileRead, executionColumns: Iterable<string>): ChangesetPlan {
  const cols = [...new Set(executionColumns)].sort();
  return { row, files, executionColumns: cols, key: `${row}|${files}|${cols.join()}` };
}
function mergeChangesets(a: ChangesetPlan | null, b: ChangesetPlan): ChangesetPlan {
  if (!a) return b;
  return changesetPlan(most(ROW_ORDER, a.row, b.row), most(FILE_ORDER, a.files, b.files), [...a.executionColumns, ...b.executionColumns]);
}

// ---- FileChange ------------------------------------------------------------------------------------

/** What a selection of a changeset's files reads of them (schema/changeset.ts FileChange). */
export const fileChange = planner<{ files: FileRead }, FileRead>('FileChange', () => ({ files: 'list' }), {
  path: () => {}, status: () => {}, previousPath: () => {}, similarity: () => {}, additions: () => {}, deletions: () => {}, binary: () => {},
  patch: (into) => { into.files = 'patches'; },
  attribution: () => {}, // who changed it: loaded per changeset by its own loader (schema/attribution.ts)
}, (a) => a.files);

// ---- Changeset -------------------------------------------------------------------------------------

interface ChangesetAcc { row: RowRead; files: FileRead; executionColumns: Set<string> }
const wholeRow: Entry<ChangesetAcc> = (into) => { into.row = 'whole'; };

/** Changeset (schema/changeset.ts): an execution's (Execution.changeset), a range's (Session.changes) or a drift (Execution.driftBefore). */
export const changeset: Planner<ChangesetPlan> = planner<ChangesetAcc, ChangesetPlan>('Changeset', () => ({ row: 'counts', files: 'none', executionColumns: new Set() }), {
  execution: (into, nodes, op) => { for (const c of execution.plan(op, nodes).columns) into.executionColumns.add(c); },
  boundary: wholeRow,
  coverage: wholeRow,
  files: (into, nodes, op) => { into.files = most(FILE_ORDER, into.files, fileChange.plan(op, nodes)); },
  file: () => {}, // one file by path: loaded when asked
  fileCount: () => {}, additions: () => {}, deletions: () => {},
  patch: (into) => { into.files = 'patches'; },
  comments: () => {}, // review comments: one batched load of their own (resolvers/loaders.ts commentsOfChangeset)
}, (a) => changesetPlan(a.row, a.files, a.executionColumns));

// ---- Execution -------------------------------------------------------------------------------------

const EXECUTION_KEY = ['id', 'session_id', 'sequence', 'status'];
const USAGE = ['input_tokens', 'output_tokens', 'reasoning_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cache_write_5m_tokens', 'cache_write_1h_tokens', 'cost'];
interface ExecutionAcc extends Columns { changeset: ChangesetPlan | null }

/** Execution (schema/execution.ts; `boundary`, `changeset`, `driftBefore` in schema/changeset.ts). */
export const execution: Planner<ExecutionPlan> = planner<ExecutionAcc, ExecutionPlan>('Execution', () => ({ columns: new Set(EXECUTION_KEY), changeset: null }), {
  id: columns(), session: columns(), sequence: columns(), status: columns(),
  interruptReason: columns('interrupt_reason'), trigger: columns('trigger'), startedAt: columns('started_at'), settledAt: columns('settled_at'), durationMs: columns('started_at', 'settled_at'),
  error: columns('error'), hostID: columns('host_id'), externalID: columns('external_id'), model: columns('provider_id', 'model_id'),
  agent: columns('agent'), mode: columns('mode'), finishReason: columns('finish_reason'), errorName: columns('error_name'), usage: columns(...USAGE),
  messages: columns(), jobs: columns(), modelCalls: columns(), // loads of their own
  boundary: (into) => {
    into.columns.add('start_snapshot_id').add('end_snapshot_id');
    into.changeset = mergeChangesets(into.changeset, changesetPlan('whole', 'none', []));
  },
  changeset: (into, nodes, op) => {
    const c = changeset.plan(op, nodes);
    into.changeset = mergeChangesets(into.changeset, c);
    for (const col of c.executionColumns) into.columns.add(col);
  },
  // The drift goes from the previous execution (loaded by sequence) to this one's start boundary.
  driftBefore: (into, nodes, op) => {
    into.columns.add('start_snapshot_id');
    for (const col of changeset.plan(op, nodes).executionColumns) into.columns.add(col);
  },
}, (a) => {
  const cols = [...a.columns].sort();
  return { columns: cols, changeset: a.changeset, key: `${cols.join()}|${a.changeset?.key ?? ''}` };
});

// ---- Session ---------------------------------------------------------------------------------------

interface SessionAcc extends Columns { executions: SessionPlan['executions'] }

/** Session (schema/session.ts; `context` in schema/corrections.ts, `changes` in schema/changeset.ts, `eventsCursor` in schema/events.ts). */
export const session: Planner<SessionPlan> = planner<SessionAcc, SessionPlan>('Session', () => ({ columns: new Set(['id']), executions: null }), {
  id: columns(), parentID: columns('parent_id'), parent: columns('parent_id'), children: columns(),
  title: columns('title'), directory: columns('directory'), metadata: columns('metadata', 'host_metadata'),
  status: columns('sealed_at', 'seal_requested_at'), sealedAt: columns('sealed_at'), createdAt: columns('created_at'), updatedAt: columns('updated_at'),
  executions: (into, nodes, op) => {
    const one = oneWay(nodes);
    into.executions = one && { nodes: one, plan: executionPage(op, one) };
  },
  runningExecution: columns(), lastSettledExecution: columns(), messages: columns(), jobs: columns(),
  context: columns(), changes: columns(), eventsCursor: columns('last_seq'),
  comments: columns(), // a page of its own
  blame: columns(), // computed from the session's snapshots (schema/attribution.ts)
}, (a) => ({ columns: [...a.columns].sort(), executions: a.executions }));

// ---- entry points --------------------------------------------------------------------------------

const pagePlans = new WeakMap<Planner<unknown>, WeakMap<readonly FieldNode[], unknown>>();
/** The plan of the nodes of a connection page (`edges.node` of these connection field nodes). */
function pagePlan<P>(p: Planner<P>, op: Operation, connection: readonly FieldNode[]): P {
  let byNodes = pagePlans.get(p as Planner<unknown>);
  if (!byNodes) pagePlans.set(p as Planner<unknown>, (byNodes = new WeakMap()));
  let plan = byNodes.get(connection) as P | undefined;
  if (plan === undefined) byNodes.set(connection, (plan = p.plan(op, fieldsAt(op, connection, ['edges', 'node']))));
  return plan;
}
const executionPage = (op: Operation, connection: readonly FieldNode[]) => pagePlan(execution, op, connection);

/** The plan of the executions of the page this connection field (`Session.executions`) resolves. */
export const planExecutionPage = (info: GraphQLResolveInfo) => pagePlan(execution, info, info.fieldNodes);
/** The plan of the sessions of the page this connection field (`Query.sessions`) resolves. */
export const planSessionPage = (info: GraphQLResolveInfo) => pagePlan(session, info, info.fieldNodes);
/** The plan of the execution this field (`Query.execution`) resolves. */
export const planExecution = (info: GraphQLResolveInfo) => execution.plan(info, info.fieldNodes);
/** The plan of the changeset this field (`Execution.changeset`, `.driftBefore`, `Session.changes`) resolves. */
export const planChangeset = (info: GraphQLResolveInfo) => changeset.plan(info, info.fieldNodes);

/** Every planner, for the test that each covers every field of its type in the schema. */
export const PLANNERS: readonly Planner<unknown>[] = [session, execution, changeset, fileChange];
