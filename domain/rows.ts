/** Row shapes of the readable tables (camelCased by the connection). */

export interface SessionRow {
  id: string;
  parentId: string | null;
  title: string;
  directory: string;
  metadata: unknown;
  /** Host-owned metadata: shown inside Session.metadata, never changed by updateSession. */
  hostMetadata: Record<string, unknown>;
  hostId: string | null;
  sealRequestedAt: Date | null;
  sealedAt: Date | null;
  /** Set with sealedAt when the seal could not be proven (migration 013): the reason every seal call answers. */
  sealUnproven?: string | null;
  lastSeq: number;
  executionCount: number;
  createdAt: Date;
  updatedAt: Date;
  /** Present when the loader joined it: the session's running execution, if any. */
  runningExecutionId?: string | null;
}

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'INTERRUPTED' | 'ABANDONED';
export type InterruptReason = 'USER' | 'SHUTDOWN' | 'SUPERSEDED' | 'SEAL';
export type Trigger = 'PROMPT' | 'SYNTHETIC' | 'COMMAND' | 'RESUME';

export interface ExecutionRow {
  id: string;
  sessionId: string;
  sequence: number;
  hostId: string;
  status: ExecutionStatus;
  trigger: Trigger;
  interruptReason: InterruptReason | null;
  error: string | null;
  startedAt: Date;
  settledAt: Date | null;
  /** What the host recorded about the step (all optional). */
  externalId: string | null;
  providerId: string | null;
  modelId: string | null;
  agent: string | null;
  mode: string | null;
  finishReason: string | null;
  errorName: string | null;
  inputTokens: string | number | null;
  outputTokens: string | number | null;
  reasoningTokens: string | number | null;
  cacheReadTokens: string | number | null;
  cacheWriteTokens: string | number | null;
  cacheWrite5mTokens: string | number | null;
  cacheWrite1hTokens: string | number | null;
  cost: number | null;
}

/** The usage columns an execution and a model call share (one meaning: domain/executions.ts StepUsage). */
export type UsageColumns = Pick<ExecutionRow, 'inputTokens' | 'outputTokens' | 'reasoningTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'cacheWrite5mTokens' | 'cacheWrite1hTokens' | 'cost'>;

/** One model call of an execution (migration 067). */
export interface ModelCallRow extends UsageColumns {
  sessionId: string;
  executionId: string;
  index: number;
  externalId: string | null;
  providerId: string | null;
  modelId: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  timesFrom: 'AGENT' | 'HOST';
  finishReason: string | null;
}

export type JobKind = 'SHELL' | 'SUBAGENT' | 'OTHER';
export type JobStatus = 'RUNNING' | 'CANCELLING' | 'COMPLETED' | 'ERROR' | 'CANCELLED' | 'LOST';
export const UNFINISHED_JOB: JobStatus[] = ['RUNNING', 'CANCELLING'];

export interface JobRow {
  id: string;
  sessionId: string;
  executionId: string | null;
  hostId: string;
  kind: JobKind;
  title: string;
  command: string | null;
  status: JobStatus;
  background: boolean;
  restored: boolean;
  startedAt: Date;
  completedAt: Date | null;
  exitCode: number | null;
}

export type Role = 'USER' | 'ASSISTANT' | 'SYSTEM';
export type Origin = 'PROMPT' | 'SYNTHETIC' | 'MODEL' | 'HOST';

export interface MessageRow {
  id: string;
  sessionId: string;
  executionId: string | null;
  position: number;
  role: Role;
  origin: Origin;
  revision: number;
  retractedAt: Date | null;
  retractionReason: string | null;
  createdAt: Date;
  externalId: string | null;
}

export type PartType = 'TEXT' | 'TOOL' | 'FILE' | 'REASONING';
export interface PartRow {
  id: string;
  messageId: string;
  sessionId: string;
  index: number;
  type: PartType;
  text: string | null;
  revision: number;
  correctedAt: Date | null;
  tool: string | null;
  input: unknown;
  output: string | null;
  status: string | null;
  path: string | null;
  mime: string | null;
  externalId: string | null;
  title: string | null;
  metadata: unknown;
  startedAt: Date | null;
  endedAt: Date | null;
}

export interface HostRow {
  id: string;
  name: string;
  canCancel: boolean;
  canCompact: boolean;
  canGenerate: boolean;
  canPrompt: boolean;
  /** False when the host's runtime can start work without the gateway's admission. */
  exclusiveAdmission: boolean;
  /** Session mutations of its sessions are routed to it (CREATE/RENAME/REMOVE_SESSION commands). */
  canManageSessions: boolean;
  models: unknown;
  leaseMs: number;
  leaseExpiresAt: Date;
  registeredAt: Date;
  renewedAt: Date;
  tokenId: string | null;
}
