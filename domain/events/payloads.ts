import {
  array, bool, id, int, json, nullable, num, object, oneOf, optional, record, str, type Infer,
} from './shape.js';

/**
 * The payload of every journal event at its current version, as shapes (domain/events/shape.ts): the
 * TypeScript type and the runtime check come from the same declaration. A payload carries everything
 * its projector needs (domain/events/projectors.ts); the event's own `at` (the journal row's
 * created_at, the database clock at the append) is the timestamp of every row it stamps.
 */

const EXECUTION_STATUS = ['RUNNING', 'SUCCEEDED', 'FAILED', 'INTERRUPTED', 'ABANDONED'] as const;
const INTERRUPT_REASON = ['USER', 'SHUTDOWN', 'SUPERSEDED', 'SEAL'] as const;
const TRIGGER = ['PROMPT', 'SYNTHETIC', 'COMMAND', 'RESUME'] as const;
const JOB_KIND = ['SHELL', 'SUBAGENT', 'OTHER'] as const;
const JOB_END = ['COMPLETED', 'ERROR', 'CANCELLED'] as const;
const ROLE = ['USER', 'ASSISTANT', 'SYSTEM'] as const;
const ORIGIN = ['PROMPT', 'SYNTHETIC', 'MODEL', 'HOST'] as const;
const PART_TYPE = ['TEXT', 'REASONING', 'TOOL', 'FILE'] as const;

const text = nullable(str);
const count = nullable(int);

export const SessionCreated = object({
  parentID: nullable(id('session')),
  title: str,
  directory: str,
  metadata: record,
  hostID: optional(id('host')),
  hostMetadata: optional(record),
});

export const SessionUpdated = object({ title: text, metadata: nullable(record) });

export const SessionRemoved = object({ rootSessionID: id('session') });

/** v2: the time is the event's own (v1 carried a millisecond copy of it in `at`). */
export const SessionSealing = object({});

export const SessionSealed = object({ unproven: nullable(oneOf('ADMISSION_NOT_EXCLUSIVE')) });

export const SessionAdmissionsClosed = object({ hostID: id('host'), commandID: id('command'), closed: int });

export const SessionCompacted = object({
  commandID: id('command'),
  hostID: id('host'),
  /** The summary message (also under messageID, so sessionEvents subscribers read it from the event). */
  messageID: id('message'),
  summaryMessageID: id('message'),
  throughPosition: int,
  compactedMessages: int,
  compactedMessageIDs: array(id('message')),
});

/** v2 adds the capture error and the step facts (v1 is read with them absent). */
export const ExecutionStarted = object({
  executionID: id('execution'),
  sequence: int,
  hostID: id('host'),
  trigger: oneOf(...TRIGGER),
  startSnapshotID: nullable(id('snapshot')),
  startCaptureError: text,
  externalID: text,
  providerID: text,
  modelID: text,
  agent: text,
  mode: text,
});

/**
 * A step's usage in the one meaning every host reports (v3 of execution.settled; docs/CONTRACT.md section 1a):
 * inputTokens counts every input token, cached ones included (cache reads and cache writes are also given
 * apart); cacheWriteTokens is every cache write, of which cacheWrite5mTokens and cacheWrite1hTokens are the
 * writes of each lifetime where the agent says (null where it does not).
 */
export const StepUsage = object({
  inputTokens: count,
  outputTokens: count,
  reasoningTokens: count,
  cacheReadTokens: count,
  cacheWriteTokens: count,
  cacheWrite5mTokens: count,
  cacheWrite1hTokens: count,
  cost: nullable(num),
});

/**
 * One request the agent made to a model within the execution (v3's optional `modelCalls`), in order: its model,
 * usage in the one meaning of StepUsage (cost included, where the agent reported it per call), finish reason, the
 * agent's own ID of the response, and its start and end (ISO 8601) as the agent recorded them (`timesFrom`
 * AGENT) or as the host observed them (HOST); a time neither knows is null.
 */
export const ModelCall = object({
  externalID: text,
  providerID: text,
  modelID: text,
  startedAt: text,
  endedAt: text,
  timesFrom: oneOf('AGENT', 'HOST'),
  finishReason: text,
  usage: StepUsage,
});

/**
 * v2 adds the step facts recorded at settlement (v1 is read with them absent). providerID, modelID,
 * agent and mode replace the start's values only when given (null: keep). v3: usage in the one meaning
 * (StepUsage), with the cache writes by lifetime.
 */
export const ExecutionSettled = object({
  executionID: id('execution'),
  status: oneOf('SUCCEEDED', 'FAILED', 'INTERRUPTED'),
  interruptReason: nullable(oneOf(...INTERRUPT_REASON)),
  error: text,
  endSnapshotID: nullable(id('snapshot')),
  endCaptureError: text,
  providerID: text,
  modelID: text,
  agent: text,
  mode: text,
  finishReason: text,
  errorName: text,
  usage: StepUsage,
  /** v3, when the host gave them (absent: none recorded). */
  modelCalls: optional(array(ModelCall)),
});

/**
 * The cost the agent reported for a settled execution after it settled (Claude Code writes its cost when its
 * process exits: bridge/claude-code/cost.ts), once per execution; in US dollars.
 */
export const ExecutionCostReported = object({ executionID: id('execution'), hostID: id('host'), cost: num });

export const ExecutionAbandoned = object({ executionID: id('execution'), hostID: id('host') });

export const ExecutionInterrupting = object({
  executionID: id('execution'), hostID: id('host'), commandID: id('command'), reason: oneOf('SEAL'),
});

export const Part = object({
  id: id('part'),
  index: int,
  type: oneOf(...PART_TYPE),
  text,
  tool: text,
  input: json,
  output: text,
  status: text,
  path: text,
  mime: text,
  externalId: optional(text),
  title: optional(text),
  metadata: optional(json),
  /** ISO 8601 text. */
  startedAt: optional(text),
  endedAt: optional(text),
});

export const MessageAppended = object({
  messageID: id('message'),
  executionID: nullable(id('execution')),
  role: oneOf(...ROLE),
  origin: oneOf(...ORIGIN),
  parts: array(Part),
  externalID: optional(str),
});

export const MessagePartCorrected = object({
  messageID: id('message'), partID: id('part'), text: str, revision: int, messageRevision: int,
});

export const MessageRetracted = object({ messageID: id('message'), reason: text, revision: int });

export const JobStarted = object({
  jobID: id('job'),
  executionID: nullable(id('execution')),
  hostID: id('host'),
  kind: oneOf(...JOB_KIND),
  title: str,
  command: text,
  background: bool,
});

export const JobBackgrounded = object({ jobID: id('job') });

export const JobCancelling = object({ jobID: id('job'), hostID: id('host'), commandID: id('command'), reason: oneOf('SEAL') });

export const JobFinished = object({ jobID: id('job'), status: oneOf(...JOB_END), exitCode: nullable(int) });

/** reportedBy: absent when the lease sweep found it lost, 'host' when the host said so. */
export const JobLost = object({ jobID: id('job'), hostID: id('host'), reportedBy: optional(oneOf('host')) });

export const JobRestored = object({ jobID: id('job'), hostID: id('host') });

/** Retention pruned this execution's changeset (patches and file list gone; the execution stays). */
export const ChangesetPruned = object({ executionID: id('execution') });

// Review comments (domain/review-comments.ts).
const ACTOR_ROLE = ['admin', 'host', 'plugin', 'reader'] as const;

/** A comment and its anchor; `quote` is the anchored lines as the changeset's stored patch showed them then. */
export const ReviewCommentAdded = object({
  commentID: id('comment'),
  authorTokenID: text,
  authorRole: oneOf(...ACTOR_ROLE),
  body: str,
  changesetKind: oneOf('EXECUTION', 'RANGE', 'DRIFT'),
  executionID: id('execution'),
  fromExecutionID: nullable(id('execution')),
  path: text,
  side: nullable(oneOf('OLD', 'NEW')),
  line: count,
  startLine: count,
  quote: text,
});

export const ReviewCommentResolved = object({ commentID: id('comment') });

export const ReviewCommentReopened = object({ commentID: id('comment') });

/** sendReviewComments issued the PROMPT command `commandID` carrying these comments, in this order. */
export const ReviewCommentsSent = object({ commandID: id('command'), commentIDs: array(id('comment')) });

/** The host began `executionID` for the PROMPT command `commandID` (same transaction as its execution.started). */
export const ReviewCommentsAnswered = object({ commandID: id('command'), executionID: id('execution'), commentIDs: array(id('comment')) });

export type PartPayload = Infer<typeof Part>;
export type ExecutionStatusValue = (typeof EXECUTION_STATUS)[number];
