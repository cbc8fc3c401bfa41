// `node(id)` and the Node interface come from @pothos/plugin-relay (schema/builder.ts: the type of an
// ID is read from its prefix; refs.ts: the loadable objects that answer it, by `nodeType`).
import { NodeRef } from './refs.js';

export { NodeRef };
