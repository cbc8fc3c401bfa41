// Performs the session mapper's intents against the gateway, in order, through the typed client, and
// records their answers in the session's working state (executions, jobs, the message map). Snapshots
// of step boundaries are read from OpenCode's snapshot git directory and uploaded with the hosts' one
// upload protocol (snapshot-sink.ts -> host/snapshot-upload.ts).
import {
  AppendMessageDocument, BeginExecutionDocument, CorrectMessagePartDocument, CreateSessionDocument, FinishJobDocument,
  RemoveSessionDocument, ReplyHostCommandDocument, RestoreJobDocument, RetractMessageDocument, SettleExecutionDocument, StartJobDocument,
  StoredMessageDocument, UpdateSessionDocument,
} from '../../client/index.js';
import type { BridgeContext, Live, SnapshotSink } from './context.js';
import { GatewayError } from './gateway.js';
import type { GatewayToOpencode } from './gateway-to-opencode.js';
import type { HostLease } from './host-lease.js';
import { stepModelCall, type PendingCorrection } from './mapping.js';
import type { Intent } from './session-mapper.js';
import { readStepSnapshot, SnapshotUnavailable } from './snapshot.js';

/**
 * A step boundary applied within this long of OpenCode's capture is observed in the worktree (snapshot.ts;
 * BridgeOptions.observeWindowMs, env BRIDGE_OBSERVE_WINDOW_MS); an older one is uploaded partial.
 */
const OBSERVE_WINDOW_MS = Number(process.env.BRIDGE_OBSERVE_WINDOW_MS ?? 30_000);

/** When the event being applied happened: live (the worktree is as OpenCode just captured it) or from history. */
export interface Moment { live: boolean; time: number | null }
export const FROM_HISTORY: Moment = { live: false, time: null };

export class GatewayMirror {
  constructor(private readonly ctx: BridgeContext, private readonly lease: HostLease, private readonly reverse: GatewayToOpencode,
    private readonly sink: SnapshotSink | null) {}

  /** Performs the intents in order on the working copy `w` (see BridgeContext.transact). */
  async perform(w: Live, intents: Intent[], at: Moment = FROM_HISTORY) {
    for (const i of intents) await this.one(w, i, at);
  }

  private async one(w: Live, i: Intent, at: Moment) {
    const { ctx } = this;
    const gw = ctx.gw;
    switch (i.kind) {
      case 'createSession': {
        const info = i.info;
        const parentGw = info.parentID ? ctx.sessions.get(info.parentID)?.row.sessionID ?? null : null;
        const s = await gw.call(CreateSessionDocument, { input: {
          parentID: parentGw, title: info.title ?? '', directory: info.directory,
          // Served by this bridge from the start: a seal before any step still asks this host.
          hostID: this.lease.hostID,
          // Host-owned: shown in Session.metadata, never changed or dropped by a plugin's updateSession.
          hostMetadata: { opencode: { server: ctx.oc.base, sessionID: info.id, parentID: info.parentID ?? null } },
          ...(Object.keys(i.metadata).length ? { metadata: i.metadata } : {}),
          // A crash after this call and before the state is saved replays the event: same session.
          idempotencyKey: `opencode:session:${info.id}`,
        } }, 'plugin');
        w.row.sessionID = s.id;
        return;
      }
      case 'renameSession':
        await gw.call(UpdateSessionDocument, { input: { sessionID: w.row.sessionID!, title: i.title } }, 'plugin')
          .catch((e) => ctx.log(`updateSession: ${e.message}`));
        return;
      case 'removeSession':
        await gw.call(RemoveSessionDocument, { input: { sessionID: w.row.sessionID! } }, 'plugin')
          .catch((e) => ctx.log(`removeSession: ${e.message}`));
        return;
      case 'beginExecution': {
        const step = w.st.steps[i.step];
        const start = i.startTree ? await this.snapshot(w, i.startTree, at) : null;
        const input = {
          sessionID: w.row.sessionID!, trigger: 'PROMPT' as const, ...(start?.id ? { startSnapshot: start.id } : start?.error ? { startCaptureError: start.error } : {}),
          idempotencyKey: `opencode:step:${i.step}`, externalID: i.step, model: step.model ?? null, agent: step.agent ?? null, mode: step.mode ?? null,
        };
        try {
          let e;
          try {
            e = await this.lease.call(BeginExecutionDocument, { ...input, ...(i.commandID ? { commandID: i.commandID } : {}) });
          } catch (err) {
            // The step of a PROMPT command the gateway no longer takes as the command's (it timed out, or was
            // answered already): the command is told why; a step OpenCode runs anyway is still mirrored.
            if (!i.commandID || !(err instanceof GatewayError) || err.tag === 'SessionSealedError' || err.tag === 'SessionBusyError') throw err;
            await this.replyPrompt(i.commandID, `the gateway did not link the step: ${err.message}`);
            e = await this.lease.call(BeginExecutionDocument, input);
          }
          step.executionID = e.id;
        } catch (err) {
          if (!(err instanceof GatewayError)) throw err;
          step.refused = true;
          ctx.log(`beginExecution refused (${err.tag}) for OpenCode step ${i.step}`);
          if (i.commandID) await this.replyPrompt(i.commandID, `the turn was refused: ${err.message}`);
          if (err.tag === 'SessionSealedError') await ctx.oc.abort(w.row.ocSessionID).catch(() => {});
        }
        return;
      }
      case 'promptFailed':
        await this.replyPrompt(i.commandID, i.error);
        return;
      case 'startJob':
        try {
          const j = await this.lease.call(StartJobDocument, {
            sessionID: w.row.sessionID!, executionID: i.executionID, kind: i.jobKind, title: i.title, command: i.command, background: false,
            idempotencyKey: `opencode:part:${i.part}`,
          });
          w.st.jobs[i.part] = { jobID: j.id, finished: false, ocMessageID: i.step };
        } catch (e) {
          if (!(e instanceof GatewayError)) throw e;
          ctx.log(`startJob refused (${e.tag}) for ${i.part}`);
          if (e.tag === 'SessionSealedError') await ctx.oc.abort(w.row.ocSessionID).catch(() => {});
        }
        return;
      case 'finishJob': {
        const j = w.st.jobs[i.part];
        if (!j || j.finished) return; // never started (refused)
        await gw.call(FinishJobDocument, { input: { jobID: j.jobID, status: i.status, exitCode: i.exitCode } })
          .catch((e) => { if (!(e instanceof GatewayError)) throw e; ctx.log(`finishJob ${j.jobID}: ${e.message}`); });
        if (i.status === 'LOST') j.lost = true;
        else j.finished = true;
        return;
      }
      case 'appendMessage':
        return this.append(w, i);
      case 'awaitIdle':
        await ctx.waitIdle(w.row.ocSessionID, 10_000); // SessionSealed only once OpenCode reports the session idle
        return;
      case 'settleExecution': {
        const end = i.endTree ? await this.snapshot(w, i.endTree, at) : null;
        await gw.call(SettleExecutionDocument, { input: {
          executionID: i.executionID, status: i.status, ...(i.reason ? { interruptReason: i.reason } : {}),
          ...(i.error ? { error: i.error } : {}), ...(end?.id ? { endSnapshot: end.id } : end?.error ? { endCaptureError: end.error } : {}),
          ...(i.errorName ? { errorName: i.errorName } : {}), ...(i.usage ? { usage: i.usage } : {}), ...(i.finish ? { finishReason: i.finish } : {}),
          ...(i.model ? { model: i.model } : {}), agent: i.agent, mode: i.mode,
          // The step's one model request, with OpenCode's own times of its message.
          modelCalls: [stepModelCall(i)],
        } }).catch((e) => {
          if (!(e instanceof GatewayError)) throw e;
          // Typically ABANDONED: the gateway was unreachable for longer than the lease and its sweep gave the
          // execution up. That is final on the gateway; the step's messages and jobs are still reported.
          ctx.log(`settleExecution ${i.executionID} (${i.status} in OpenCode): ${e.message}`);
        });
        for (const [pid, j] of Object.entries(w.st.jobs)) if (j.finished && j.ocMessageID === i.step) delete w.st.jobs[pid];
        return;
      }
      case 'correctPart':
        await this.correct(w, i.correction);
        return;
      case 'retractMessage':
        await this.retract(w, i.messageID, i.reason);
        return;
      case 'retractIfEmptied': {
        const now = (await ctx.oc.messages(w.row.ocSessionID)).find((m) => m.info.id === i.mirrored.ocMessageID);
        const left = Object.values(i.mirrored.parts).filter((id) => now?.parts.some((p) => p.id === id));
        if (left.length > 0) {
          ctx.log(`OpenCode removed part ${i.partID} of mirrored message ${i.mirrored.ocMessageID}: kept on the gateway (${left.length} mirrored parts left)`);
          return;
        }
        await this.retract(w, i.mirrored.messageID, 'all its parts were removed in OpenCode');
        return;
      }
      case 'retryPending':
        await this.retryPending(w);
        return;
    }
  }

  /** A PROMPT command whose turn could not start: replied with the error (the gateway answers its sender). */
  private async replyPrompt(commandID: string, error: string) {
    await this.ctx.gw.call(ReplyHostCommandDocument, { input: { commandID, error: error.slice(0, 2_000) } })
      .catch((e) => { if (!(e instanceof GatewayError)) throw e; this.ctx.log(`reply ${commandID}: ${e.message}`); });
  }

  private async append(w: Live, i: Extract<Intent, { kind: 'appendMessage' }>) {
    const { ctx } = this;
    const input = {
      sessionID: w.row.sessionID!, executionID: i.executionID, role: i.role, origin: i.role === 'USER' ? 'PROMPT' as const : 'MODEL' as const,
      parts: i.parts as any, idempotencyKey: `opencode:message:${i.message}`, externalID: i.message,
    };
    let m: { id: string; parts: { id: string }[] } | null = null;
    try {
      m = await ctx.gw.call(AppendMessageDocument, { input }) as any;
    } catch (e) {
      if (e instanceof GatewayError && e.tag === 'SessionSealedError') {
        // A prompt OpenCode admitted behind the gateway's back after a seal: stop it there.
        ctx.fence(w);
        ctx.log(`prompt ${i.message} in sealed session ${w.row.sessionID}: aborting it in OpenCode`);
        await ctx.oc.abort(i.ocSessionID).catch(() => {});
        await ctx.store.saveMessage({ messageID: `refused:${i.message}`, sessionID: w.row.sessionID!, ocSessionID: '', ocMessageID: i.message, parts: {} });
      } else if (e instanceof GatewayError) {
        ctx.log(`appendMessage ${i.message}: ${e.message}`);
      } else throw e;
    }
    if (m) {
      const map: Record<string, string> = {};
      m.parts.forEach((p, n) => { map[p.id] = i.ocPartIDs[n]; });
      await ctx.store.saveMessage({ messageID: m.id, sessionID: w.row.sessionID!, ocSessionID: w.row.ocSessionID, ocMessageID: i.message, parts: map });
    }
  }

  /**
   * Mirrors an OpenCode edit as a gateway correction, unless the gateway's part already reads that text.
   * SessionBusyError (an execution runs: no correction may race a turn) keeps it pending in the session state,
   * retried when a step settles, the session goes idle, or at the next history poll. A retracted or unknown
   * message, or a text the gateway refuses (e.g. empty), drops it with a log line. Answers false while busy.
   */
  private async correct(w: Live, c: PendingCorrection): Promise<boolean> {
    const { ctx } = this;
    const done = (why?: string) => {
      if (why) ctx.log(`OpenCode edit of part ${c.ocPartID} not mirrored: ${why}`);
      if (w.st.corrections?.[c.partID]) delete w.st.corrections[c.partID];
      return true;
    };
    if (!c.text) return done('empty text (a gateway TEXT part is never empty)');
    const data = await ctx.gw.request(StoredMessageDocument, { id: c.messageID }, 'plugin');
    const m = data?.message;
    if (!m) return done(`message ${c.messageID} not found`);
    if (m.retraction) return done(`message ${c.messageID} is retracted`);
    const current = m.parts.find((p) => p.id === c.partID);
    if (!current) return done(`part ${c.partID} not found`);
    if (current.__typename !== 'TextPart' || current.text === c.text) return done();
    this.reverse.expectOwnCorrection(c.partID);
    try {
      await ctx.gw.call(CorrectMessagePartDocument, { input: { messageID: c.messageID, partID: c.partID, text: c.text } }, 'plugin');
    } catch (e) {
      this.reverse.ownCorrectionFailed(c.partID);
      if (!(e instanceof GatewayError)) throw e;
      if (e.tag !== 'SessionBusyError') return done(e.message);
      ctx.log(`OpenCode edit of part ${c.ocPartID}: session busy, correction kept pending`);
      (w.st.corrections ??= {})[c.partID] = c;
      return false;
    }
    return done();
  }

  /** Retracts a mirrored message; SessionBusyError (a step runs) keeps it pending like a correction. Answers false while busy. */
  private async retract(w: Live, messageID: string, reason: string): Promise<boolean> {
    try {
      await this.ctx.gw.call(RetractMessageDocument, { input: { messageID, reason } }, 'plugin');
    } catch (e) {
      if (!(e instanceof GatewayError)) throw e;
      if (e.tag === 'SessionBusyError') {
        (w.st.retractions ??= {})[messageID] = reason;
        return false;
      }
      this.ctx.log(`retractMessage ${messageID}: ${e.message}`); // already retracted, removed: nothing to do
    }
    if (w.st.retractions?.[messageID]) delete w.st.retractions[messageID];
    return true;
  }

  async retryPending(w: Live) {
    if (!w.row.sessionID || w.st.removed) return;
    for (const c of Object.values(w.st.corrections ?? {})) if (!(await this.correct(w, c))) return; // still busy
    for (const [m, reason] of Object.entries(w.st.retractions ?? {})) if (!(await this.retract(w, m, reason))) return;
  }

  /**
   * OpenCode still runs the session after the bridge was away: its running jobs are still running, whatever
   * the gateway's lease sweep concluded meanwhile (LOST). Taken back (`restored: true`); RUNNING ones stay.
   */
  async restoreJobs(l: Live) {
    const hostID = this.lease.hostID;
    if (!l.row.sessionID || l.st.removed || !hostID) return;
    for (const j of Object.values(l.st.jobs)) {
      if (j.finished || j.lost) continue;
      await this.ctx.gw.call(RestoreJobDocument, { input: { jobID: j.jobID, hostID } })
        .catch((e) => { if (!(e instanceof GatewayError)) throw e; this.ctx.log(`restoreJob ${j.jobID}: ${e.message}`); });
    }
  }

  /** A boundary's snapshot ID, or why it could not be captured (sent as the boundary's capture error). */
  private async snapshot(w: Live, tree: string, at: Moment): Promise<{ id: string | null; error?: string } | null> {
    const { ctx } = this;
    const hostID = this.lease.hostID;
    if (!this.sink || !w.st.directory || !hostID) return null; // boundary reads START_NOT_CAPTURED / END_NOT_CAPTURED
    const t0 = Date.now();
    try {
      // Captured moments ago (followed live, or read from history right after: a poll, a gap): what OpenCode's
      // capture skipped (ignored paths, untracked files over 2 MiB, submodule files) is observed now, and
      // whatever changed since the capture reads as unknown. Older: that cannot be known any more, and the
      // snapshot is uploaded partial (see snapshot.ts).
      const recent = at.time !== null && Date.now() - at.time < (ctx.opts.observeWindowMs ?? OBSERVE_WINDOW_MS);
      const m = await readStepSnapshot({ dataDir: ctx.dataDir, directory: w.st.directory, tree, live: at.live || recent, capturedBefore: at.time });
      const id = await this.sink.upload(w.row.sessionID!, hostID, m);
      if (process.env.BRIDGE_TRACE) ctx.log(`snapshot ${tree}: ${m.files.length} entries in ${Date.now() - t0}ms`);
      return { id };
    } catch (e: any) {
      const why = e instanceof SnapshotUnavailable ? e.detail : `snapshot ${tree} of ${w.st.directory} could not be uploaded: ${e?.message ?? e}`;
      ctx.log(`snapshot ${tree}: ${why}`);
      return { id: null, error: why.slice(0, 2_000) };
    }
  }
}
