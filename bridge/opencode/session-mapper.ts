// The pure per-session mapper of the OpenCode bridge: one OpenCode event (or "the session went idle")
// and the session's state in, the gateway calls it calls for out. No I/O: `mirror.ts` performs the
// intents in order (and records their answers in the state), `intake.ts` feeds the events. The state
// passed in is a working copy the mapper updates; the caller keeps it only once every intent succeeded.
import type { OcMessageInfo, OcPart, OcSession, OcSyncEvent } from './client.js';
import type { StoredMessage } from './store.js';
import {
  baseType, JOB_TOOLS, jobEnd, stepFacts, toGatewayParts, toUsage,
  type GatewayPart, type PendingCorrection, type PendingMessage, type SessionState, type StepUsage,
} from './mapping.js';

/** One OpenCode session as the mapper sees it: its gateway mirror (null before createSession) and its state. */
export interface SessionView { ocSessionID: string; sessionID: string | null; st: SessionState }

/** What the mapper needs to know besides the state: the mirror of the message the event names (see `messageNamed`). */
export interface EventFacts { mirrored: StoredMessage | null }

export type StepStatus = 'SUCCEEDED' | 'FAILED' | 'INTERRUPTED';
export type InterruptReason = 'USER' | 'SEAL' | 'SHUTDOWN';
export type JobStatus = 'COMPLETED' | 'ERROR' | 'CANCELLED' | 'LOST';

/** An intended gateway call (or an effect around one), performed in order by `mirror.ts`. */
export type Intent =
  /** Mirror the session (createSession, host-owned metadata.opencode, idempotency key of the OpenCode ID). */
  | { kind: 'createSession'; info: OcSession; metadata: Record<string, unknown> }
  | { kind: 'renameSession'; title: string }
  | { kind: 'removeSession' }
  /**
   * beginExecution of an OpenCode step (assistant message `step`), with its start tree's snapshot; `commandID`:
   * the first step answering a PROMPT command's message (the gateway links the execution to the command).
   */
  | { kind: 'beginExecution'; step: string; startTree: string | null; commandID?: string }
  /** A PROMPT command's turn ended without any step (OpenCode failed before the model answered): replied with an error. */
  | { kind: 'promptFailed'; commandID: string; error: string }
  | { kind: 'startJob'; step: string; executionID: string; part: string; jobKind: 'SHELL' | 'SUBAGENT'; title: string; command: string }
  /** finishJob of the job started for OpenCode part `part` (if there is one by then). */
  | { kind: 'finishJob'; part: string; status: JobStatus; exitCode: number | null }
  | { kind: 'appendMessage'; message: string; role: 'USER' | 'ASSISTANT'; executionID: string | null; parts: GatewayPart[]; ocPartIDs: string[]; ocSessionID: string }
  /** Before a seal's interrupted step settles: OpenCode must report the session idle (SessionSealed means stopped). */
  | { kind: 'awaitIdle' }
  | {
    kind: 'settleExecution'; step: string; executionID: string; status: StepStatus; reason: InterruptReason | null; endTree: string | null;
    error: string | null; errorName: string | null; usage: StepUsage | null; finish: string | null;
    model: { providerID: string; modelID: string } | null; agent: string | null; mode: string | null;
    createdAt: number | null; completedAt: number | null;
  }
  /** An edit made in OpenCode of a mirrored TEXT part: correctMessagePart unless the gateway reads that text already. */
  | { kind: 'correctPart'; correction: PendingCorrection }
  | { kind: 'retractMessage'; messageID: string; reason: string }
  /** A part removed in OpenCode from a mirrored message: retract the message once none of its mirrored parts is left there. */
  | { kind: 'retractIfEmptied'; mirrored: StoredMessage; partID: string }
  /** Corrections and retractions the gateway refused while a step ran: try them again. */
  | { kind: 'retryPending' };

/** The OpenCode message whose gateway mirror `mapEvent` needs to know (EventFacts.mirrored). */
export function messageNamed(ev: OcSyncEvent): string | null {
  const type = baseType(ev.type);
  const d = ev.data ?? {};
  if (type === 'message.updated') return d.info?.id ?? null;
  if (type === 'message.part.updated') return d.part?.messageID ?? null;
  if (type === 'message.removed' || type === 'message.part.removed') return d.messageID ?? null;
  return null;
}

/** One durable OpenCode event of the session (already in seq order; the caller advances the cursor). */
export function mapEvent(s: SessionView, ev: OcSyncEvent, facts: EventFacts): Intent[] {
  const type = baseType(ev.type);
  const d = ev.data ?? {};
  if (type === 'session.created' || type === 'session.updated') return mapSessionInfo(s, d.info as OcSession);
  if (!s.sessionID || s.st.removed) return [];
  const out: Intent[] = [];
  if (type === 'message.updated') onMessage(s, d.info as OcMessageInfo, facts, out);
  else if (type === 'message.part.updated') onPart(s, d.part as OcPart, facts, out);
  else if (type === 'message.removed') onMessageRemoved(s, d.messageID as string, facts, out);
  else if (type === 'message.part.removed') onPartRemoved(s, d.messageID as string, d.partID as string, facts, out);
  else if (type === 'session.deleted') {
    flushPendingUsers(s, out);
    for (const mid of Object.keys(s.st.steps)) endStep(s, mid, 'INTERRUPTED', 'USER', null, out);
    s.st.removed = true;
    out.push({ kind: 'removeSession' });
  }
  return out;
}

/** The session's own record (created, updated; or read from OpenCode for a CREATE_SESSION command). */
export function mapSessionInfo(s: SessionView, info: OcSession | undefined, metadata: Record<string, unknown> = {}): Intent[] {
  if (!info || s.st.removed || s.st.hidden) return [];
  if (!s.sessionID) {
    s.st.title = info.title;
    s.st.directory = info.directory;
    s.st.parentOc = info.parentID ?? null;
    return [{ kind: 'createSession', info, metadata }];
  }
  if (info.title && info.title !== s.st.title) {
    // A rename in OpenCode (the echo of a gateway rename matches the stored title and changes nothing).
    s.st.title = info.title;
    return [{ kind: 'renameSession', title: info.title }];
  }
  return [];
}

/** OpenCode reports the session idle: flush prompts that got no answer, and settle steps that will never finish. */
export function mapIdle(s: SessionView): Intent[] {
  if (!s.sessionID || s.st.removed) return [];
  const out: Intent[] = [];
  flushPendingUsers(s, out);
  // A PROMPT command's message that no step answered: OpenCode ended the turn before the model (an error).
  for (const [mid, commandID] of Object.entries(s.st.promptOf ?? {})) {
    out.push({ kind: 'promptFailed', commandID, error: `OpenCode ended the prompt's turn (message ${mid}) without any step of the model` });
    delete s.st.promptOf![mid];
  }
  for (const [mid, step] of Object.entries(s.st.steps)) {
    if (step.settled) { delete s.st.steps[mid]; continue; }
    // Sealing: the bridge's abort stopped it (and killed its tools); else OpenCode stopped (restart, crash).
    if (step.executionID || step.refused) {
      endStep(s, mid, 'INTERRUPTED', s.st.sealing ? 'SEAL' : 'SHUTDOWN', null, out, { abortedByOpencode: !!s.st.sealing });
    } else if (s.st.pending[mid]) flush(s, mid, s.st.pending[mid], null, out); // failed before its step began
    delete s.st.steps[mid];
  }
  out.push({ kind: 'retryPending' });
  return out;
}

function onMessage(s: SessionView, info: OcMessageInfo | undefined, facts: EventFacts, out: Intent[]) {
  if (!info) return;
  const st = s.st;
  if (info.role === 'user') {
    if (!facts.mirrored) st.pending[info.id] ??= { role: 'user', parts: {}, order: [] };
    return;
  }
  if (info.summary || st.compactionMessages?.includes(info.id) || (st.compacting && !st.steps[info.id])) {
    // The summary of a compaction the bridge ran for compactSession: the gateway records it itself.
    if (!st.compactionMessages?.includes(info.id)) st.compactionMessages = [...(st.compactionMessages ?? []), info.id].slice(-100);
    delete st.pending[info.id];
    delete st.steps[info.id];
    return;
  }
  // An assistant message: its user prompt is complete by now.
  flushPendingUsers(s, out);
  if (!st.steps[info.id]) {
    if (facts.mirrored) return;
    st.steps[info.id] = { executionID: null };
    st.pending[info.id] = { role: 'assistant', parentID: info.parentID, parts: {}, order: [] };
  }
  const step = st.steps[info.id];
  if (!step.settled) {
    Object.assign(step, stepFacts(info));
    // Ended without a step-finish (aborted, failed): what the message recorded so far.
    if (info.time?.completed) { step.usage ??= toUsage(info); step.finish ??= info.finish ?? null; }
  }
  if (info.time?.completed && !step.settled) {
    // Completed without a step-finish: aborted (or failed) mid-step.
    if (info.error) {
      const aborted = info.error.name === 'MessageAbortedError';
      endStep(s, info.id, aborted ? 'INTERRUPTED' : 'FAILED', aborted ? (st.sealing ? 'SEAL' : 'USER') : null, null, out, {
        error: aborted ? null : `${info.error.name}: ${info.error.data?.message ?? ''}`.slice(0, 2000), errorName: info.error.name, abortedByOpencode: aborted,
      });
    } else if (step.endTree === undefined && step.executionID) {
      endStep(s, info.id, 'SUCCEEDED', null, null, out);
    }
  }
}

function onPart(s: SessionView, part: OcPart | undefined, facts: EventFacts, out: Intent[]) {
  if (!part) return;
  const st = s.st;
  const pm = st.pending[part.messageID];
  // Already mirrored (an edit, the echo of a correction, a late `patch` part) or unknown.
  if (!pm) return onMirroredPart(s, part, facts, out);
  if (!pm.parts[part.id]) pm.order.push(part.id);
  pm.parts[part.id] = part;
  if (pm.role === 'user') return;
  const step = st.steps[part.messageID];
  if (!step) return;
  if (part.type === 'step-start') {
    if (step.executionID || step.refused || step.settled) return;
    step.startTree = part.snapshot;
    // A RUNNING execution left behind (its end was lost): settle it first.
    for (const [mid, other] of Object.entries(st.steps)) {
      if (mid !== part.messageID && other.executionID && !other.settled) endStep(s, mid, 'INTERRUPTED', 'USER', null, out);
    }
    // The first step answering a PROMPT command's message: its execution is the command's.
    const commandID = pm.parentID ? st.promptOf?.[pm.parentID] : undefined;
    if (commandID) delete st.promptOf![pm.parentID!];
    out.push({ kind: 'beginExecution', step: part.messageID, startTree: part.snapshot ?? null, ...(commandID ? { commandID } : {}) });
  } else if (part.type === 'step-finish') {
    step.endTree = part.snapshot ?? undefined;
    step.usage = toUsage(part);
    step.finish = part.reason ?? null;
    endStep(s, part.messageID, 'SUCCEEDED', null, part.snapshot ?? null, out);
  } else if (part.type === 'tool' && part.tool && JOB_TOOLS[part.tool]) {
    const status = part.state?.status;
    const known = st.jobs[part.id];
    if (!known && (status === 'running' || status === 'completed' || status === 'error') && step.executionID && !step.settled) {
      const input = part.state?.input ?? {};
      const command = String(input.command ?? input.prompt ?? input.description ?? part.tool);
      out.push({
        kind: 'startJob', step: part.messageID, executionID: step.executionID, part: part.id, jobKind: JOB_TOOLS[part.tool],
        title: String(input.description ?? part.state?.title ?? command).slice(0, 200), command: command.slice(0, 10_000),
      });
    }
    let end = jobEnd(part);
    // While sealing the bridge has aborted the session: a tool that then ends in an error without an
    // exit code of its own (e.g. a task tool whose subagent was stopped) was ended by the seal's abort.
    if (end && st.sealing && end.status === 'ERROR' && end.exitCode === null) end = { status: 'CANCELLED', exitCode: null };
    // A job started now or before (known), not finished yet; a LOST one still gets its real end.
    if (end && (known ? !known.finished : step.executionID && !step.settled)) {
      out.push({ kind: 'finishJob', part: part.id, status: end.status, exitCode: end.exitCode });
    }
  }
}

/**
 * A part event of a message already mirrored (no pending entry). A TEXT part whose text differs from the
 * gateway's becomes a correction (an edit made in OpenCode by another client); the echo of a gateway
 * correction the bridge PATCHed into OpenCode, or a part re-emitted unchanged, changes nothing.
 */
function onMirroredPart(s: SessionView, part: OcPart, facts: EventFacts, out: Intent[]) {
  if (part.type !== 'text') return; // a late `patch` part, a tool part: nothing the gateway can correct
  const text = part.text ?? '';
  const echoes = s.st.echoes?.[part.id];
  const i = echoes ? echoes.indexOf(text) : -1;
  if (echoes && i >= 0) {
    // Our own PATCH coming back.
    echoes.splice(0, i + 1);
    if (echoes.length === 0) delete s.st.echoes![part.id];
    return;
  }
  const stored = facts.mirrored;
  if (!stored || stored.messageID.startsWith('refused:')) return;
  const partID = Object.keys(stored.parts).find((k) => stored.parts[k] === part.id);
  // No gateway part (empty at flush, or added to the OpenCode message after it was mirrored): not mirrored.
  if (!partID) return;
  out.push({ kind: 'correctPart', correction: { messageID: stored.messageID, partID, ocPartID: part.id, text } });
}

function onPartRemoved(s: SessionView, messageID: string, partID: string, facts: EventFacts, out: Intent[]) {
  const pm = s.st.pending[messageID];
  if (pm) {
    delete pm.parts[partID];
    pm.order = pm.order.filter((x) => x !== partID);
    return;
  }
  // A part removed from a message already mirrored. The gateway removes no single part (it corrects a
  // TEXT part or retracts a whole message), so: once no part the gateway holds is left in OpenCode, the
  // message is retracted; before that its copy keeps the part.
  if (s.st.echoes?.[partID]) delete s.st.echoes[partID];
  const stored = facts.mirrored;
  if (!stored || stored.messageID.startsWith('refused:') || !Object.values(stored.parts).includes(partID)) return;
  out.push({ kind: 'retractIfEmptied', mirrored: stored, partID });
}

function onMessageRemoved(s: SessionView, ocMessageID: string, facts: EventFacts, out: Intent[]) {
  const pm = s.st.pending[ocMessageID];
  if (pm) {
    const step = s.st.steps[ocMessageID];
    if (step && !step.settled) endStep(s, ocMessageID, 'INTERRUPTED', 'USER', null, out);
    delete s.st.pending[ocMessageID];
    return;
  }
  if (s.st.deletedByGateway?.includes(ocMessageID)) return; // the bridge deleted it for a gateway retraction
  const stored = facts.mirrored;
  if (!stored || stored.messageID.startsWith('refused:')) return;
  // Deleted in OpenCode by someone else: the gateway's copy is retracted (kept, as a placeholder).
  out.push({ kind: 'retractMessage', messageID: stored.messageID, reason: 'deleted in OpenCode' });
}

function flushPendingUsers(s: SessionView, out: Intent[]) {
  for (const [id, pm] of Object.entries(s.st.pending)) if (pm.role === 'user') flush(s, id, pm, null, out);
}

function flush(s: SessionView, ocMessageID: string, pm: PendingMessage, executionID: string | null, out: Intent[]) {
  const { parts, ocPartIDs } = toGatewayParts(pm);
  if (pm.role === 'user' && s.st.prompting) {
    // The user message of a PROMPT command the bridge gave OpenCode (the same text): its first step is the command's.
    const text = parts.filter((p) => p.type === 'TEXT').map((p) => p.text ?? '').join('').trim();
    const commandID = Object.keys(s.st.prompting).find((c) => s.st.prompting![c].text.trim() === text);
    if (commandID) {
      delete s.st.prompting[commandID];
      (s.st.promptOf ??= {})[ocMessageID] = commandID;
    }
  }
  if (parts.length > 0) {
    out.push({ kind: 'appendMessage', message: ocMessageID, role: pm.role === 'user' ? 'USER' : 'ASSISTANT', executionID, parts, ocPartIDs, ocSessionID: s.ocSessionID });
  }
  delete s.st.pending[ocMessageID];
}

/**
 * The end of a step. Jobs of the step whose end OpenCode never reported: aborted by OpenCode
 * (MessageAbortedError, or the abort the bridge sent for a seal: OpenCode's abort kills the tool's process
 * tree) they are CANCELLED; otherwise nobody saw them end (OpenCode stopped, and a shell runs in its own
 * process group, so it may well still run): LOST, never a claimed end. A later part update with their
 * real end still finishes them.
 */
function endStep(s: SessionView, ocMessageID: string, status: StepStatus, reason: InterruptReason | null, endTree: string | null, out: Intent[],
  o: { error?: string | null; errorName?: string | null; abortedByOpencode?: boolean } = {}) {
  const st = s.st;
  const step = st.steps[ocMessageID];
  if (!step || step.settled) return;
  if (st.sealing && status === 'INTERRUPTED') {
    reason = 'SEAL';
    out.push({ kind: 'awaitIdle' });
  }
  const aborted = o.abortedByOpencode === true;
  for (const [pid, j] of Object.entries(st.jobs)) {
    if (j.ocMessageID === ocMessageID && !j.finished && !j.lost) out.push({ kind: 'finishJob', part: pid, status: aborted ? 'CANCELLED' : 'LOST', exitCode: null });
  }
  const pm = st.pending[ocMessageID];
  // The model call's end as OpenCode recorded it: its message's completion, else (the step-finish comes first)
  // the end of the step's last part.
  const partEnds = Object.values(pm?.parts ?? {}).flatMap((p) => [p.time?.end, p.state?.time?.end]).filter((t): t is number => typeof t === 'number' && t > 0);
  step.completedAt ??= partEnds.length ? Math.max(...partEnds) : null;
  if (pm && !step.flushed) {
    step.flushed = true;
    flush(s, ocMessageID, pm, step.executionID, out);
  }
  if (step.executionID) {
    out.push({
      kind: 'settleExecution', step: ocMessageID, executionID: step.executionID, status, reason, endTree,
      error: o.error ?? null, errorName: o.errorName ?? null, usage: step.usage ?? null, finish: step.finish ?? null,
      model: step.model ?? null, agent: step.agent ?? null, mode: step.mode ?? null,
      createdAt: step.createdAt ?? null, completedAt: step.completedAt ?? null,
    });
  }
  step.settled = true;
  // Keep the state small: a settled step needs no more than its mark (its finished jobs go once recorded).
  delete step.startTree;
  // Between two steps: OpenCode edits the gateway refused while this one ran can land now.
  out.push({ kind: 'retryPending' });
}
