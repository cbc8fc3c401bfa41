import { builder } from './builder.js';

export const SessionStatusEnum = builder.enumType('SessionStatus', { values: ['IDLE', 'BUSY', 'SEALING', 'SEALED'] as const });
export const ExecutionStatusEnum = builder.enumType('ExecutionStatus', {
  values: ['RUNNING', 'SUCCEEDED', 'FAILED', 'INTERRUPTED', 'ABANDONED'] as const,
});
export const InterruptReasonEnum = builder.enumType('InterruptReason', { values: ['USER', 'SHUTDOWN', 'SUPERSEDED', 'SEAL'] as const });
export const TriggerEnum = builder.enumType('Trigger', { values: ['PROMPT', 'SYNTHETIC', 'COMMAND', 'RESUME'] as const });
export const JobKindEnum = builder.enumType('JobKind', { values: ['SHELL', 'SUBAGENT', 'OTHER'] as const });
export const JobStatusEnum = builder.enumType('JobStatus', {
  values: ['RUNNING', 'CANCELLING', 'COMPLETED', 'ERROR', 'CANCELLED', 'LOST'] as const,
});
export const MessageRoleEnum = builder.enumType('MessageRole', { values: ['USER', 'ASSISTANT', 'SYSTEM'] as const });
export const MessageOriginEnum = builder.enumType('MessageOrigin', { values: ['PROMPT', 'SYNTHETIC', 'MODEL', 'HOST'] as const });
export const PartTypeEnum = builder.enumType('PartType', { values: ['TEXT', 'TOOL', 'FILE', 'REASONING'] as const });
export const TokenRoleEnum = builder.enumType('TokenRole', { values: ['admin', 'host', 'plugin', 'reader'] as const });
