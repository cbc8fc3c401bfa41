import { builder } from './builder.js';
import type { ExecutionRow, HostRow, JobRow, MessageRow, PartRow, SessionRow } from '../domain/rows.js';

/** Object references shared across the per-type files (each file implements its own). */
export const SessionRef = builder.objectRef<SessionRow>('Session');
export const ExecutionRef = builder.objectRef<ExecutionRow>('Execution');
export const JobRef = builder.objectRef<JobRow>('Job');
export const MessageRef = builder.objectRef<MessageRow>('Message');
export const HostRef = builder.objectRef<HostRow>('Host');
export const PartRef = builder.interfaceRef<PartRow>('Part');

export const NodeRef = builder.interfaceRef<{ id: string }>('Node').implement({
  description: 'An object with a stable, prefixed ID (ses_, exe_, msg_, job_).',
  fields: (t) => ({ id: t.exposeID('id') }),
});
