import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Look-ahead of connection fields: what a selection reads of the rows of a page, so the page's batch
 * can load it along (resolvers/loaders.ts). The field nodes of one field are the same array for every
 * item of a list, so each answer is computed once per field of the operation.
 */

/** Whether a selection of `Session.executions` reads a changeset row of its executions (`edges.node.changeset` or `.boundary`). */
const readsChangesetsOf = new WeakMap<readonly FieldNode[], boolean>();
export function readsChangesets(info: GraphQLResolveInfo): boolean {
  let v = readsChangesetsOf.get(info.fieldNodes);
  if (v === undefined) {
    const seen = new Set<string>();
    const fields = (set: SelectionSetNode | undefined, name: string): FieldNode[] => !set ? [] : set.selections.flatMap((s) => {
      if (s.kind === Kind.FIELD) return s.name.value === name ? [s] : [];
      if (s.kind === Kind.INLINE_FRAGMENT) return fields(s.selectionSet, name);
      if (seen.has(s.name.value)) return [];
      seen.add(s.name.value);
      return fields(info.fragments[s.name.value]?.selectionSet, name);
    });
    const under = (nodes: FieldNode[], name: string) => { seen.clear(); return nodes.flatMap((f) => fields(f.selectionSet, name)); };
    const node = under(under(info.fieldNodes as FieldNode[], 'edges'), 'node');
    v = under(node, 'changeset').length > 0 || under(node, 'boundary').length > 0;
    readsChangesetsOf.set(info.fieldNodes, v);
  }
  return v;
}
