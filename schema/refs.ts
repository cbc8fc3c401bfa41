import { builder, nodeType } from './builder.js';
import type { HostRow, JobRow, PartRow } from '../domain/rows.js';
import type { Context } from '../resolvers/context.js';
import { executionsById, jobsById, loaderOptions, messagesById, sessionsById } from '../resolvers/loaders.js';

/**
 * Object references shared across the per-type files (each file implements its own). Session,
 * Execution, Message and Job are loadable objects (@pothos/plugin-dataloader): a field of one of
 * these types may resolve to its ID, which is loaded through the type's per-context loader in one
 * batch with every other ID of the same wave (a missing or out-of-scope ID loads as null), or to the
 * row itself. They are also what `node(id)` answers.
 */
export const SessionRef = nodeType(builder.loadableObjectRef('Session', { load: sessionsById, sort: (r) => r.id, loaderOptions }));
export const ExecutionRef = nodeType(builder.loadableObjectRef('Execution', { load: executionsById, sort: (r) => r.id, loaderOptions }));
export const MessageRef = nodeType(builder.loadableObjectRef('Message', { load: messagesById, sort: (r) => r.id, loaderOptions }));
export const JobRef = nodeType(builder.loadableObjectRef('Job', { load: jobsById, sort: (r) => r.id, loaderOptions }));
export const HostRef = builder.objectRef<HostRow>('Host');
export const PartRef = builder.interfaceRef<PartRow>('Part');

/** The Relay Node interface (and with it `node(id)`), from @pothos/plugin-relay. */
export const NodeRef = builder.nodeInterfaceRef();

/** The jobs of these IDs that exist and are in the caller's scope, in the order given. */
export async function existingJobs(ctx: Context, ids: readonly string[]): Promise<JobRow[]> {
  return (await JobRef.getDataloader(ctx).loadMany(ids)).filter((j): j is JobRow => !!j && !(j instanceof Error));
}
