import { getArgumentValues, isObjectType, Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type ValueNode } from 'graphql';

/**
 * Look-ahead: what a field's selection reads below it, so a batch can load it along (resolvers/loaders.ts)
 * or load only the columns it reads (resolvers/projection.ts). Fragments (named and inline) are
 * followed; `@include`/`@skip` are not evaluated, so a look-ahead answers for a superset of what runs.
 * The field nodes of one field are the same array for every item of a list, so each answer is computed
 * once per field of the operation.
 */

type Fragments = Record<string, FragmentDefinitionNode>;

/** The fields selected directly under these field nodes (by field name, aliases merged), through fragments. */
export function selectedFields(fragments: Fragments, nodes: readonly FieldNode[]): Map<string, FieldNode[]> {
  const out = new Map<string, FieldNode[]>();
  const seen = new Set<string>();
  const walk = (selections: FieldNode['selectionSet']) => {
    if (!selections) return;
    for (const s of selections.selections) {
      if (s.kind === Kind.FIELD) {
        const name = s.name.value;
        const list = out.get(name);
        if (list) list.push(s);
        else out.set(name, [s]);
      } else if (s.kind === Kind.INLINE_FRAGMENT) walk(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        walk(fragments[s.name.value]?.selectionSet);
      }
    }
  };
  for (const n of nodes) walk(n.selectionSet);
  return out;
}

/** The field nodes reached from these by a path of field names (e.g. `edges`, `node` of a connection). */
export function fieldsAt(fragments: Fragments, nodes: readonly FieldNode[], path: readonly string[]): FieldNode[] {
  let at: readonly FieldNode[] = nodes;
  for (const name of path) at = selectedFields(fragments, at).get(name) ?? [];
  return at as FieldNode[];
}

/**
 * What a read of changeset rows brings of each: its `counts` (ChangesetCounts: the counts and whether
 * the files are readable, what a list of executions shows) or the `whole` row (coverage and boundary
 * read the rest).
 */
export type ChangesetAlong = 'counts' | 'whole';

/**
 * Fields of `Changeset` that read no more of its row than ChangesetCounts (schema/changeset.ts; `files`,
 * `file` and `patch` read the files themselves). Any other field, one added later included, reads the
 * whole row.
 */
const COUNTS_FIELDS = new Set(['__typename', 'execution', 'fileCount', 'additions', 'deletions', 'files', 'file', 'patch']);

/** What a selection of `Execution.changeset` reads of the changeset row (computed once per field of the operation). */
const rowReadsOf = new WeakMap<readonly FieldNode[], ChangesetAlong>();
export function changesetRowReads(fragments: Fragments, changesetNodes: readonly FieldNode[]): ChangesetAlong {
  let v = rowReadsOf.get(changesetNodes);
  if (v === undefined) {
    v = [...selectedFields(fragments, changesetNodes).keys()].every((f) => COUNTS_FIELDS.has(f)) ? 'counts' : 'whole';
    rowReadsOf.set(changesetNodes, v);
  }
  return v;
}

/**
 * What a selection of `Session.executions` reads of its executions' changeset rows (`edges.node.changeset`,
 * `.boundary`): null when nothing, else what to read along with the page.
 */
const changesetsAlongOf = new WeakMap<readonly FieldNode[], ChangesetAlong | null>();
export function changesetsAlong(info: GraphQLResolveInfo, fieldNodes: readonly FieldNode[] = info.fieldNodes): ChangesetAlong | null {
  let v = changesetsAlongOf.get(fieldNodes);
  if (v === undefined) {
    const node = selectedFields(info.fragments, fieldsAt(info.fragments, fieldNodes, ['edges', 'node']));
    const changeset = node.get('changeset');
    v = node.has('boundary') ? 'whole' : changeset ? changesetRowReads(info.fragments, changeset) : null;
    changesetsAlongOf.set(fieldNodes, v);
  }
  return v;
}

/** A connection field selected below a list's `edges.node`, as every node of the list will resolve it. */
export interface NestedField { nodes: FieldNode[]; args: Record<string, unknown> }
const nestedOf = new WeakMap<readonly FieldNode[], Map<string, FieldNode[] | null>>();
/**
 * The field `name` of type `typeName` selected under `edges.node` of this connection field, with its
 * arguments evaluated (variables included), when the selection reads it in one way only: one response
 * key, the same arguments on every node of it, no directive on it. Else null: what it resolves is then
 * not known before it runs (several pages per node, a condition), and it loads as usual. A look-ahead
 * only, so a field below a skipped fragment still counts (what is read along is then not used).
 */
export function nestedField(info: GraphQLResolveInfo, typeName: string, name: string): NestedField | null {
  let byName = nestedOf.get(info.fieldNodes);
  if (!byName) nestedOf.set(info.fieldNodes, (byName = new Map()));
  let nodes = byName.get(name);
  if (nodes === undefined) {
    const found = selectedFields(info.fragments, fieldsAt(info.fragments, info.fieldNodes, ['edges', 'node'])).get(name) ?? [];
    const keys = new Set(found.map((n) => n.alias?.value ?? n.name.value));
    const printed = new Set(found.map((n) => JSON.stringify(n.arguments?.map((a) => [a.name.value, a.value]) ?? [], (k, v) => (k === 'loc' ? undefined : v))));
    nodes = found.length && keys.size === 1 && printed.size === 1 && found.every((n) => !n.directives?.length) ? found : null;
    byName.set(name, nodes);
  }
  if (!nodes) return null;
  const type = info.schema.getType(typeName);
  const def = isObjectType(type) ? type.getFields()[name] : undefined;
  if (!def) return null;
  const literal = literalArgsOf.get(nodes[0]);
  if (literal) return { nodes, args: literal };
  try {
    const args = getArgumentValues(def, nodes[0], info.variableValues);
    // Arguments written out in the document (`first: 5`) are the same on every request: coerced once.
    if (!nodes[0].arguments?.some((a) => usesVariables(a.value))) literalArgsOf.set(nodes[0], args);
    return { nodes, args };
  } catch {
    return null; // a bad argument: the field's own resolver answers it
  }
}
const literalArgsOf = new WeakMap<FieldNode, Record<string, unknown>>();
function usesVariables(v: ValueNode): boolean {
  switch (v.kind) {
    case Kind.VARIABLE: return true;
    case Kind.LIST: return v.values.some(usesVariables);
    case Kind.OBJECT: return v.fields.some((f) => usesVariables(f.value));
    default: return false;
  }
}

/** What a selection reads of a changeset's files: nothing, their list (no patch), or their whole rows (a patch too). */
export type FileReads = 'none' | 'list' | 'patches';

/** What a selection of `Execution.changeset` reads of its files (`files`, `files { patch }`, `patch`), through fragments. */
export function changesetFileReads(fragments: Fragments, changesetNodes: readonly FieldNode[]): FileReads {
  const fields = selectedFields(fragments, changesetNodes);
  if (fields.has('patch')) return 'patches';
  const files = fields.get('files');
  if (!files) return 'none';
  return selectedFields(fragments, files).has('patch') ? 'patches' : 'list';
}

/**
 * What a selection of one Execution (a field returning it, such as `Query.execution`) reads of its
 * changeset: null when neither `changeset` nor `boundary`, else what of its files.
 */
const changesetReadsOf = new WeakMap<readonly FieldNode[], { files: FileReads } | null>();
export function changesetReads(info: GraphQLResolveInfo): { files: FileReads } | null {
  let v = changesetReadsOf.get(info.fieldNodes);
  if (v === undefined) {
    const fields = selectedFields(info.fragments, info.fieldNodes);
    const changeset = fields.get('changeset');
    v = changeset ? { files: changesetFileReads(info.fragments, changeset) } : fields.has('boundary') ? { files: 'none' } : null;
    changesetReadsOf.set(info.fieldNodes, v);
  }
  return v;
}
