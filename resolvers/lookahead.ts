import { Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo } from 'graphql';

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

/** Whether a selection of `Session.executions` reads a changeset row of its executions (`edges.node.changeset` or `.boundary`). */
const readsChangesetsOf = new WeakMap<readonly FieldNode[], boolean>();
export function readsChangesets(info: GraphQLResolveInfo): boolean {
  let v = readsChangesetsOf.get(info.fieldNodes);
  if (v === undefined) {
    const node = selectedFields(info.fragments, fieldsAt(info.fragments, info.fieldNodes, ['edges', 'node']));
    v = node.has('changeset') || node.has('boundary');
    readsChangesetsOf.set(info.fieldNodes, v);
  }
  return v;
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
