// The OpenCode bridge: registers as a host, mirrors an OpenCode server's durable history into the
// gateway (backfill from POST /sync/history, then the global event stream, resuming from a stored
// per-session sequence), and applies the gateway's corrections, retractions and seals to OpenCode.
import { OpencodeClient, OpencodeError, type OcLiveEvent, type OcMessageInfo, type OcPart, type OcSession, type OcSyncEvent } from './client.js';
import { Gateway, GatewayError, type Success } from './gateway.js';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import {
  AcknowledgeHostCommandDocument, AppendMessageDocument, BeginExecutionDocument, CorrectMessagePartDocument, CreateSessionDocument,
  FinishJobDocument, HostCommandStreamDocument, RegisterHostDocument, RemoveSessionDocument, RenewHostLeaseDocument,
  ReplyHostCommandDocument, RestoreJobDocument, RetractMessageDocument, SettleExecutionDocument, StartJobDocument, StoredMessageDocument, TranscriptEventsDocument, UpdateSessionDocument,
} from '../../client/index.js';
import type { BridgeStore, StoredSession } from './store.js';
import { baseType, emptyState, JOB_TOOLS, jobEnd, stepFacts, toGatewayParts, toUsage, type PendingCorrection, type PendingMessage, type SessionState, type StepState } from './mapping.js';
import fs from 'node:fs';
import path from 'node:path';
import { GraphqlSnapshotSink } from './snapshot-sink.js';
import { defaultOpencodeDataDir, readStepSnapshot, SnapshotUnavailable, type TreeManifest } from './snapshot.js';

export interface SnapshotSink {
  /** Uploads a manifest (and the contents the gateway lacks); answers the Snapshot id, or null if unsupported. */
  upload(sessionID: string, hostID: string, m: TreeManifest): Promise<string | null>;
}

export interface BridgeOptions {
  opencodeUrl: string;
  opencodePassword?: string;
  gatewayUrl: string;
  hostToken: string;
  /** Token with the plugin role (sessions, retractions, sessionEvents); defaults to hostToken (e.g. admin). */
  pluginToken?: string;
  store: BridgeStore;
  /** Where OpenCode keeps its data ($XDG_DATA_HOME of the OpenCode process). */
  opencodeDataDir?: string;
  leaseMs?: number;
  /** How often history is read besides the event stream (default 15 s). */
  pollMs?: number;
  snapshots?: SnapshotSink | null;
  /** A boundary applied within this long of OpenCode's capture is observed in the worktree (default 30 s). */
  observeWindowMs?: number;
  /**
   * Where the optional OpenCode plugin `plugin/gateway-fence.js` looks for sealed sessions (default:
   * $OPENCODE_GATEWAY_FENCE_DIR, else `<opencodeDataDir>/opencode/gateway-fence`). The bridge creates
   * `<fenceDir>/<OpenCode session ID>` when a session is sealed; with the plugin loaded, OpenCode then
   * refuses new prompts, tool calls and model calls of that session (see the plugin's header for the
   * paths it cannot cover, which is why the seal still answers ADMISSION_NOT_EXCLUSIVE).
   */
  fenceDir?: string;
  /**
   * Issue 12 (bridge/opencode/serve.ts): OpenCode is reachable only through the admission proxy, so the
   * bridge registers with capabilities.exclusiveAdmission (default false), and a seal's CLOSE_ADMISSIONS
   * command first calls `quiesce` (the proxy stops forwarding for the session and waits for what it
   * forwarded), then aborts the session and acknowledges once OpenCode reports it idle.
   */
  admission?: { quiesce(ocSessionID: string, abort: () => Promise<unknown>): Promise<boolean> };
  log?: (m: string) => void;
}

interface Live { st: SessionState; row: StoredSession }

/**
 * A step boundary applied within this long of OpenCode's capture is observed in the worktree (snapshot.ts;
 * BridgeOptions.observeWindowMs, env BRIDGE_OBSERVE_WINDOW_MS); an older one is uploaded partial.
 */
const OBSERVE_WINDOW_MS = Number(process.env.BRIDGE_OBSERVE_WINDOW_MS ?? 30_000);

/** The gateway refused new work because of the host itself: forgotten, or its lease lapsed (gateway was unreachable). */
function hostRefused(e: unknown): e is GatewayError {
  return e instanceof GatewayError && (e.tag === 'HostNotFoundError' || (e.tag === 'InvalidRequestError' && e.fields.field === 'hostID'));
}

export class OpencodeBridge {
  readonly oc: OpencodeClient;
  readonly gw: Gateway;
  hostID: string | null = null;
  private sessions = new Map<string, Live>();
  private byGateway = new Map<string, string>(); // gateway session id -> OpenCode session id
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private abort = new AbortController();
  private renewTimer: NodeJS.Timeout | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private pendingPoll = false;
  private unsubs: (() => void)[] = [];
  /** Gateway session id -> its sessionEvents subscription. */
  private sessionSubs = new Map<string, () => void>();
  private subscribedSessions = new Set<string>();
  private busy = new Map<string, boolean>();
  private waiters: (() => void)[] = [];
  private followLoop: Promise<void> | null = null;
  private renewing = false;
  private hostSub: (() => void) | null = null;
  private hostSubFor: string | null = null;
  /** Gateway part id -> corrections the bridge made whose `message.part_corrected` event it has not seen yet. */
  private ownCorrections = new Map<string, number>();
  private readonly log: (m: string) => void;
  /** Counters for tests and logs. */
  readonly stats = { applied: 0, skipped: 0, backfills: 0, connects: 0 };

  constructor(readonly opts: BridgeOptions) {
    this.log = opts.log ?? (() => {});
    this.oc = new OpencodeClient(opts.opencodeUrl, opts.opencodePassword ? { password: opts.opencodePassword } : undefined);
    this.gw = new Gateway(opts.gatewayUrl, opts.hostToken, opts.pluginToken ?? opts.hostToken, this.log);
    this.sink = opts.snapshots === undefined ? new GraphqlSnapshotSink(this.gw) : opts.snapshots;
  }
  private readonly sink: SnapshotSink | null;

  // ---------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    for (const row of await this.opts.store.sessions()) {
      this.sessions.set(row.ocSessionID, { st: { ...emptyState(), ...row.state }, row });
      if (row.sessionID) this.byGateway.set(row.sessionID, row.ocSessionID);
    }
    await this.register();
    const every = Math.max(300, Math.floor((this.opts.leaseMs ?? 30_000) / 3));
    this.renewTimer = setInterval(() => void this.renew(), every);
    this.renewTimer.unref();
    // Safety net besides the event stream: read new history now and then (only events after the cursors).
    this.pollTimer = setInterval(() => {
      if (this.pendingPoll || this.stopped) return;
      this.pendingPoll = true;
      void this.enqueue(async function poll(this: OpencodeBridge) {
        try {
          await this.applyAll(await this.oc.history(this.cursors()));
          for (const l of this.sessions.values()) await this.retryCorrections(l);
        } catch (e: any) {
          if (!(e instanceof GatewayError)) this.log(`history poll: ${e?.message ?? e}`); // OpenCode down: the stream's reconnect will backfill
          else throw e;
        } finally { this.pendingPoll = false; }
      }.bind(this)).catch(() => {});
    }, this.opts.pollMs ?? 15_000);
    this.pollTimer.unref();
    this.watchHostCommands();
    for (const l of this.sessions.values()) this.watchGatewaySession(l);
    let firstConnect!: () => void;
    const connected = new Promise<void>((r) => (firstConnect = r));
    this.followLoop = this.follow(firstConnect);
    await connected;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.renewTimer) clearInterval(this.renewTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const u of this.unsubs) u();
    for (const u of this.sessionSubs.values()) u();
    this.hostSub?.();
    // A gateway call retrying while the gateway is down gives up now (so a stop never waits for it).
    this.gw.stopped = true;
    await this.followLoop?.catch(() => {});
    await this.queue.catch(() => {});
    await this.gw.close();
  }

  /** Resolves when everything OpenCode has recorded so far has been applied (tests). */
  async settled(): Promise<void> {
    await this.enqueue(async () => {
      const events = await this.oc.history(this.cursors());
      await this.applyAll(events);
    });
  }

  private async register() {
    const previous = this.hostID ?? (await this.opts.store.hostID());
    const input = {
      hostID: previous, name: `opencode ${this.oc.base}`, leaseMs: this.opts.leaseMs ?? 30_000,
      // Without the admission proxy OpenCode also admits prompts from its other clients: not exclusive.
      // compact: OpenCode's summarize; generate: a hidden session; sessions: create/rename/remove there.
      capabilities: { cancel: true, compact: true, generate: true, exclusiveAdmission: !!this.opts.admission, sessions: true },
      models: await this.opencodeModels(),
    };
    let h;
    try {
      h = await this.gw.call(RegisterHostDocument, { input });
    } catch (e) {
      if (!(e instanceof GatewayError) || !previous) throw e;
      h = await this.gw.call(RegisterHostDocument, { input: { ...input, hostID: null } });
    }
    if (previous && previous !== h.id) this.log(`the gateway forgot host ${previous}: registered again as ${h.id}`);
    this.hostID = h.id;
    await this.opts.store.setHostID(h.id);
    if (this.hostSub && this.hostSubFor !== h.id) this.watchHostCommands();
  }

  /** The models OpenCode's configured providers list (what `generate` may ask for; anything else is ModelNotFoundError). */
  private async opencodeModels(): Promise<{ providerID: string; modelID: string }[]> {
    // OpenCode unreachable (not started yet, restarting): the last list; registered again once it answers.
    const p = await this.oc.providers().catch((e) => { this.log(`OpenCode providers: ${e.message}`); return null; });
    if (p) this.models = (p.providers ?? []).flatMap((x) => Object.keys(x.models ?? {}).map((m) => ({ providerID: x.id, modelID: m }))).slice(0, 2_000);
    this.registeredModels = JSON.stringify(this.models);
    return this.models;
  }
  private models: { providerID: string; modelID: string }[] = [];
  private registeredModels = '[]';

  /** (Re)subscribes the host's commands (seal: interrupt/cancel) for the current hostID. */
  private watchHostCommands() {
    this.hostSub?.();
    this.hostSubFor = this.hostID;
    this.hostSub = this.gw.subscribe(HostCommandStreamDocument,
      () => (this.hostID ? { hostID: this.hostID } : null), 'host', (d) => this.onCommand(d.hostCommands));
  }

  private async renew() {
    // One renewal at a time: while the gateway is down a renewal keeps retrying (Gateway.request), and
    // the timer must not stack more of them behind it.
    if (this.stopped || !this.hostID || this.renewing) return;
    this.renewing = true;
    try {
      await this.gw.call(RenewHostLeaseDocument, { input: { hostID: this.hostID } });
    } catch (e) {
      if (e instanceof GatewayError) await this.register().catch(() => {});
    } finally {
      this.renewing = false;
    }
  }

  /**
   * A host mutation that admits new work (beginExecution, startJob). Refused because the gateway forgot the
   * host or its lease lapsed (the gateway was down or unreachable for longer than the lease): register
   * again (same hostID when the gateway still knows it) and try once more.
   */
  private async hostCall<TData, TInput extends { hostID: string }>(doc: TypedDocumentNode<TData, { input: TInput }>, input: TInput): Promise<Success<TData>> {
    try {
      return await this.gw.call(doc, { input });
    } catch (e) {
      if (!hostRefused(e)) throw e;
      this.log(`${e.message}; registering again`);
      await this.register();
      return await this.gw.call(doc, { input: { ...input, hostID: this.hostID! } });
    }
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.queue.then(async () => {
      // Watchdog: a task that takes this long is worth a log line (it blocks every later event).
      const t = setTimeout(() => this.log(`a bridge task has been running for 20s (${fn.name || 'anonymous'})`), 20_000);
      t.unref();
      try { return await fn(); } finally { clearTimeout(t); }
    });
    this.queue = p.catch((e) => this.log(`bridge: ${e?.stack ?? e}`));
    // Callers that do not await (`void this.enqueue(…)`) must not leave an unhandled rejection (e.g.
    // "bridge stopped" from a gateway call retrying when SIGTERM arrives): the error is logged above.
    p.catch(() => {});
    return p;
  }

  private cursors(): Record<string, number> {
    const c: Record<string, number> = {};
    for (const [id, l] of this.sessions) c[id] = l.row.lastSeq;
    return c;
  }

  /** Follows OpenCode's event stream forever, reconnecting (and backfilling) after every drop. */
  private async follow(firstConnect: () => void): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      try {
        await this.oc.follow((e) => this.onLive(e, firstConnect), this.abort.signal);
        attempt = 0;
      } catch (e: any) {
        if (this.stopped) return;
        if (attempt++ % 20 === 0) this.log(`OpenCode event stream: ${e?.message ?? e}; reconnecting`);
      }
      if (this.stopped) return;
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** Math.min(attempt, 5), 2_000)));
    }
  }

  private onLive(e: OcLiveEvent, firstConnect: () => void): Promise<void> | void {
    if (e.kind === 'connected') {
      this.stats.connects++;
      this.log(`connected to OpenCode's event stream (${this.stats.connects})`);
      // Subscribed first, then backfilled: events that arrive meanwhile are applied in seq order after it.
      // A backfill that fails (OpenCode slow to answer its first requests, e.g. while loading plugins) is
      // tried again for as long as this connection is the current one: start() waits for a success.
      const connection = this.stats.connects;
      return void this.enqueue(async () => {
        for (let attempt = 0; !this.stopped && connection === this.stats.connects; attempt++) {
          try {
            await this.backfill();
            firstConnect();
            // OpenCode's providers may have changed (or were unknown at start): declare its models again.
            const p = await this.oc.providers().catch(() => null);
            const now = p ? JSON.stringify((p.providers ?? []).flatMap((x) => Object.keys(x.models ?? {}).map((m) => ({ providerID: x.id, modelID: m }))).slice(0, 2_000)) : null;
            if (now && now !== this.registeredModels) await this.register().catch((e) => this.log(`register: ${e?.message ?? e}`));
            return;
          } catch (err: any) {
            this.log(`backfill: ${err?.message ?? err}; trying again`);
            await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 5_000)));
          }
        }
      }).catch((err) => this.log(`backfill: ${err?.message ?? err}`));
    }
    if (e.kind === 'status') {
      this.busy.set(e.sessionID, e.status.type !== 'idle');
      this.waiters.splice(0).forEach((w) => w());
      if (e.status.type === 'idle') void this.enqueue(() => this.onIdle(e.sessionID));
      return;
    }
    void this.enqueue(() => this.onSync(e.event));
  }

  private async backfill() {
    this.stats.backfills++;
    const before = await this.oc.status();
    const events = await this.oc.history(this.cursors());
    this.log(`backfill: ${events.length} events`);
    await this.applyAll(events);
    // Steps left open by an OpenCode that stopped (restart, crash): OpenCode is idle, they never finish.
    // Idle both before and after reading the history: nothing started in between.
    const after = await this.oc.status();
    const idle = (s: Record<string, { type: string }>, id: string) => !s[id] || s[id].type === 'idle';
    for (const [id, l] of this.sessions) {
      this.busy.set(id, !idle(after, id));
      if (idle(before, id) && idle(after, id)) await this.onIdle(id);
      else if (!idle(after, id)) await this.restoreJobs(l);
    }
  }

  private async applyAll(events: OcSyncEvent[]) {
    // Parents first: sessions in order of their first event's creation, events in seq order per session.
    const bySession = new Map<string, OcSyncEvent[]>();
    for (const ev of events) {
      const list = bySession.get(ev.sessionID) ?? [];
      list.push(ev);
      bySession.set(ev.sessionID, list);
    }
    const order = [...bySession.keys()].sort((a, b) => (a < b ? -1 : 1)); // OpenCode ids sort by creation time
    const created = new Set<string>();
    const run = async (sid: string) => {
      if (created.has(sid)) return;
      created.add(sid);
      const list = bySession.get(sid)!.sort((x, y) => x.seq - y.seq);
      const first = list[0];
      const parent = first?.type.startsWith('session.created') ? first.data?.info?.parentID : undefined;
      if (parent && bySession.has(parent)) await run(parent);
      for (const ev of list) await this.applyOne(ev);
    };
    for (const sid of order) await run(sid);
  }

  private async onSync(ev: OcSyncEvent) {
    const l = this.sessions.get(ev.sessionID);
    const last = l ? l.row.lastSeq : -1;
    if (ev.seq <= last) { this.stats.skipped++; return; }
    if (ev.seq === last + 1) {
      this.live = true;
      try { return await this.applyOne(ev); } finally { this.live = false; }
    }
    // A gap (missed events): read the session's history from the stored cursor.
    const events = await this.oc.history({ [ev.sessionID]: last });
    await this.applyAll(events.filter((x) => x.sessionID === ev.sessionID));
  }

  // ---------------------------------------------------------------- applying one OpenCode event

  /** The event being applied arrived live (the worktree is as OpenCode just captured it), not from history. */
  private live = false;
  /** The time of the part event being applied (OpenCode emits a step's tree after capturing it). */
  private eventTime: number | null = null;

  private liveSession(ocSessionID: string): Live {
    let l = this.sessions.get(ocSessionID);
    if (!l) {
      l = { st: emptyState(), row: { ocSessionID, sessionID: null, lastSeq: -1, state: emptyState() } };
      l.row.state = l.st;
      this.sessions.set(ocSessionID, l);
    }
    return l;
  }

  private async persist(l: Live) {
    l.row.state = l.st;
    await this.opts.store.saveSession(l.row);
  }

  private async applyOne(ev: OcSyncEvent) {
    const l = this.liveSession(ev.sessionID);
    if (ev.seq <= l.row.lastSeq) { this.stats.skipped++; return; }
    if (ev.seq !== l.row.lastSeq + 1) throw new Error(`history gap in ${ev.sessionID}: ${l.row.lastSeq} -> ${ev.seq}`);
    const type = baseType(ev.type);
    const d = ev.data ?? {};
    if (process.env.BRIDGE_TRACE) this.log(`apply ${ev.sessionID}#${ev.seq} ${type} ${d.part?.type ?? d.info?.role ?? ''}`);
    if (type === 'session.created' || type === 'session.updated') await this.onSession(l, d.info as OcSession);
    else if (!l.row.sessionID && !l.st.removed) {
      // History that starts without a session.created we know (should not happen): fetch the session.
      const info = await this.oc.getSession(ev.sessionID).catch(() => null);
      if (info) await this.onSession(l, info);
    }
    if (l.row.sessionID && !l.st.removed) {
      if (type === 'message.updated') await this.onMessage(l, d.info as OcMessageInfo);
      else if (type === 'message.part.updated') {
        this.eventTime = typeof d.time === 'number' ? d.time : null; // after OpenCode's capture of a step-start/finish tree
        await this.onPart(l, d.part as OcPart);
      }
      else if (type === 'message.removed') await this.onMessageRemoved(l, d.messageID as string);
      else if (type === 'message.part.removed') await this.onPartRemoved(l, d.messageID as string, d.partID as string);
      else if (type === 'session.deleted') await this.onSessionDeleted(l);
    }
    l.row.lastSeq = ev.seq;
    await this.persist(l);
    this.stats.applied++;
  }

  private async onSession(l: Live, info: OcSession, metadata: Record<string, unknown> = {}) {
    if (!info || l.st.removed || l.st.hidden) return;
    if (!l.row.sessionID) {
      const parentGw = info.parentID ? this.sessions.get(info.parentID)?.row.sessionID ?? null : null;
      const s = await this.gw.call(CreateSessionDocument, { input: {
        parentID: parentGw, title: info.title ?? '', directory: info.directory,
        // Served by this bridge from the start: a seal before any step still learns that OpenCode
        // admits prompts behind the gateway (ADMISSION_NOT_EXCLUSIVE), instead of a SessionSealed.
        hostID: this.hostID,
        // Host-owned: shown in Session.metadata, never changed or dropped by a plugin's updateSession.
        hostMetadata: { opencode: { server: this.oc.base, sessionID: info.id, parentID: info.parentID ?? null } },
        ...(Object.keys(metadata).length ? { metadata } : {}),
        // A crash after this call and before the state is saved replays the event: same session.
        idempotencyKey: `opencode:session:${info.id}`,
      } }, 'plugin');
      l.row.sessionID = s.id;
      l.st.title = info.title;
      l.st.directory = info.directory;
      l.st.parentOc = info.parentID ?? null;
      this.byGateway.set(s.id, info.id);
      await this.persist(l);
      this.watchGatewaySession(l);
    } else if (info.title && info.title !== l.st.title) {
      l.st.title = info.title;
      await this.gw.call(UpdateSessionDocument, { input: { sessionID: l.row.sessionID, title: info.title } }, 'plugin')
        .catch((e) => this.log(`updateSession: ${e.message}`));
    }
  }

  private async onSessionDeleted(l: Live) {
    await this.flushPendingUsers(l);
    for (const [mid, step] of Object.entries(l.st.steps)) if (!step.settled) await this.endStep(l, mid, 'INTERRUPTED', 'USER', null);
    l.st.removed = true;
    await this.gw.call(RemoveSessionDocument, { input: { sessionID: l.row.sessionID! } }, 'plugin')
      .catch((e) => this.log(`removeSession: ${e.message}`));
  }

  private async onMessage(l: Live, info: OcMessageInfo) {
    if (!info) return;
    const stored = await this.opts.store.messageByOc(info.id);
    if (info.role === 'user') {
      if (!stored) l.st.pending[info.id] ??= { role: 'user', parts: {}, order: [] };
      return;
    }
    if (info.summary || l.st.compactionMessages?.includes(info.id) || (l.st.compacting && !l.st.steps[info.id])) {
      // The summary of a compaction the bridge ran for compactSession: the gateway records it itself.
      if (!l.st.compactionMessages?.includes(info.id)) l.st.compactionMessages = [...(l.st.compactionMessages ?? []), info.id].slice(-100);
      delete l.st.pending[info.id];
      delete l.st.steps[info.id];
      return;
    }
    // An assistant message: its user prompt is complete by now.
    await this.flushPendingUsers(l);
    const step = l.st.steps[info.id];
    if (!step) {
      if (stored) return;
      l.st.steps[info.id] = { executionID: null };
      l.st.pending[info.id] = { role: 'assistant', parentID: info.parentID, parts: {}, order: [] };
    }
    const s = l.st.steps[info.id];
    if (!s.settled) {
      Object.assign(s, stepFacts(info));
      // Ended without a step-finish (aborted, failed): what the message recorded so far.
      if (info.time?.completed) { s.usage ??= toUsage(info); s.finish ??= info.finish ?? null; }
    }
    if (info.time?.completed && !s.settled) {
      // Completed without a step-finish: aborted (or failed) mid-step.
      if (info.error) {
        const aborted = info.error.name === 'MessageAbortedError';
        await this.endStep(l, info.id, aborted ? 'INTERRUPTED' : 'FAILED', aborted ? (l.st.sealing ? 'SEAL' : 'USER') : null, null,
          aborted ? null : `${info.error.name}: ${info.error.data?.message ?? ''}`.slice(0, 2000), info.error.name, { abortedByOpencode: aborted });
      } else if (s.endTree === undefined && s.executionID) {
        await this.endStep(l, info.id, 'SUCCEEDED', null, null);
      }
    }
  }

  private async onPart(l: Live, part: OcPart) {
    if (!part) return;
    const pm = l.st.pending[part.messageID];
    if (!pm) return this.onMirroredPart(l, part); // already mirrored (an edit, the echo of a correction, a late `patch` part) or unknown
    if (!pm.parts[part.id]) pm.order.push(part.id);
    pm.parts[part.id] = part;
    if (pm.role === 'user') return;
    const step = l.st.steps[part.messageID];
    if (part.type === 'step-start') {
      if (step.executionID || step.refused || step.settled) return;
      step.startTree = part.snapshot;
      await this.beginStep(l, part.messageID, step);
    } else if (part.type === 'step-finish') {
      step.endTree = part.snapshot ?? undefined;
      step.usage = toUsage(part);
      step.finish = part.reason ?? null;
      await this.endStep(l, part.messageID, 'SUCCEEDED', null, part.snapshot ?? null);
    } else if (part.type === 'tool' && part.tool && JOB_TOOLS[part.tool]) {
      await this.onToolJob(l, part, step);
    }
  }

  private async onPartRemoved(l: Live, messageID: string, partID: string) {
    const pm = l.st.pending[messageID];
    if (!pm) {
      // A part removed from a message already mirrored. The gateway removes no single part (it corrects a
      // TEXT part or retracts a whole message), so: once no part the gateway holds is left in OpenCode, the
      // message is retracted; before that its copy keeps the part (logged).
      if (l.st.echoes?.[partID]) delete l.st.echoes[partID];
      const stored = await this.opts.store.messageByOc(messageID);
      if (!stored || stored.messageID.startsWith('refused:') || !Object.values(stored.parts).includes(partID)) return;
      const now = (await this.oc.messages(l.row.ocSessionID)).find((m) => m.info.id === messageID);
      const left = Object.values(stored.parts).filter((id) => now?.parts.some((p) => p.id === id));
      if (left.length > 0) {
        this.log(`OpenCode removed part ${partID} of mirrored message ${messageID}: kept on the gateway (${left.length} mirrored parts left)`);
        return;
      }
      await this.retractMirrored(l, stored.messageID, 'all its parts were removed in OpenCode');
      return;
    }
    delete pm.parts[partID];
    pm.order = pm.order.filter((x) => x !== partID);
  }

  /**
   * A part event of a message already mirrored (no pending entry). A TEXT part whose text differs from the
   * gateway's becomes a `correctMessagePart` (an edit made in OpenCode by another client); the echo of a
   * gateway correction the bridge PATCHed into OpenCode, or a part re-emitted unchanged, changes nothing.
   */
  private async onMirroredPart(l: Live, part: OcPart) {
    if (part.type !== 'text') return; // a late `patch` part, a tool part: nothing the gateway can correct
    const text = part.text ?? '';
    const echoes = l.st.echoes?.[part.id];
    const i = echoes ? echoes.indexOf(text) : -1;
    if (echoes && i >= 0) {
      // Our own PATCH coming back (persisted by applyOne with the cursor).
      echoes.splice(0, i + 1);
      if (echoes.length === 0) delete l.st.echoes![part.id];
      return;
    }
    const stored = await this.opts.store.messageByOc(part.messageID);
    if (!stored || stored.messageID.startsWith('refused:')) return;
    const partID = Object.keys(stored.parts).find((k) => stored.parts[k] === part.id);
    if (!partID) {
      this.log(`OpenCode part ${part.id} of mirrored message ${part.messageID} has no gateway part (empty or added later): not mirrored`);
      return;
    }
    await this.correctGateway(l, { messageID: stored.messageID, partID, ocPartID: part.id, text });
  }

  /**
   * Mirrors an OpenCode edit as a gateway correction, unless the gateway's part already reads that text.
   * SessionBusyError (an execution runs: no correction may race a turn) keeps it pending in the session state,
   * retried when a step settles, the session goes idle, or at the next history poll. A retracted or unknown
   * message, or a text the gateway refuses (e.g. empty), drops it with a log line. Answers false while busy.
   */
  private async correctGateway(l: Live, c: PendingCorrection): Promise<boolean> {
    const done = async (why?: string) => {
      if (why) this.log(`OpenCode edit of part ${c.ocPartID} not mirrored: ${why}`);
      if (l.st.corrections?.[c.partID]) {
        delete l.st.corrections[c.partID];
        await this.persist(l);
      }
      return true;
    };
    if (!c.text) return done('empty text (a gateway TEXT part is never empty)');
    const data = await this.gw.request(StoredMessageDocument, { id: c.messageID }, 'plugin');
    const m = data?.message;
    if (!m) return done(`message ${c.messageID} not found`);
    if (m.retraction) return done(`message ${c.messageID} is retracted`);
    const current = m.parts.find((p) => p.id === c.partID);
    if (!current) return done(`part ${c.partID} not found`);
    if (current.__typename !== 'TextPart' || current.text === c.text) return done();
    this.ownCorrections.set(c.partID, (this.ownCorrections.get(c.partID) ?? 0) + 1);
    try {
      await this.gw.call(CorrectMessagePartDocument, { input: { messageID: c.messageID, partID: c.partID, text: c.text } }, 'plugin');
    } catch (e) {
      this.ownCorrections.set(c.partID, (this.ownCorrections.get(c.partID) ?? 1) - 1);
      if (!(e instanceof GatewayError)) throw e;
      if (e.tag !== 'SessionBusyError') return done(e.message);
      this.log(`OpenCode edit of part ${c.ocPartID}: session busy, correction kept pending`);
      (l.st.corrections ??= {})[c.partID] = c;
      await this.persist(l);
      return false;
    }
    return done();
  }

  private async retryCorrections(l: Live) {
    if (!l.row.sessionID || l.st.removed) return;
    for (const c of Object.values(l.st.corrections ?? {})) if (!(await this.correctGateway(l, c))) return; // still busy
    for (const [m, reason] of Object.entries(l.st.retractions ?? {})) if (!(await this.retractMirrored(l, m, reason))) return;
  }

  private async onMessageRemoved(l: Live, ocMessageID: string) {
    const pm = l.st.pending[ocMessageID];
    if (pm) {
      const step = l.st.steps[ocMessageID];
      if (step && !step.settled) await this.endStep(l, ocMessageID, 'INTERRUPTED', 'USER', null);
      delete l.st.pending[ocMessageID];
      return;
    }
    if (l.st.deletedByGateway?.includes(ocMessageID)) return;
    const stored = await this.opts.store.messageByOc(ocMessageID);
    if (!stored) return;
    // Deleted in OpenCode by someone else: the gateway's copy is retracted (kept, as a placeholder).
    await this.retractMirrored(l, stored.messageID, 'deleted in OpenCode');
  }

  /**
   * Retracts a mirrored message on the gateway. SessionBusyError (a step runs) keeps it pending in the session
   * state, retried with the pending corrections (after the step, when idle, at each history poll). Answers false while busy.
   */
  private async retractMirrored(l: Live, messageID: string, reason: string): Promise<boolean> {
    try {
      await this.gw.call(RetractMessageDocument, { input: { messageID, reason } }, 'plugin');
    } catch (e) {
      if (!(e instanceof GatewayError)) throw e;
      if (e.tag === 'SessionBusyError') {
        (l.st.retractions ??= {})[messageID] = reason;
        await this.persist(l);
        return false;
      }
      this.log(`retractMessage ${messageID}: ${e.message}`); // already retracted, removed: nothing to do
    }
    if (l.st.retractions?.[messageID]) {
      delete l.st.retractions[messageID];
      await this.persist(l);
    }
    return true;
  }

  private async flushPendingUsers(l: Live) {
    for (const [id, pm] of Object.entries(l.st.pending)) {
      if (pm.role !== 'user') continue;
      await this.flushMessage(l, id, pm, null);
    }
  }

  private async flushMessage(l: Live, ocMessageID: string, pm: PendingMessage, executionID: string | null) {
    const { parts, ocPartIDs } = toGatewayParts(pm);
    if (parts.length > 0) {
      const input = {
        sessionID: l.row.sessionID!, executionID,
        role: pm.role === 'user' ? 'USER' as const : 'ASSISTANT' as const, origin: pm.role === 'user' ? 'PROMPT' as const : 'MODEL' as const, parts,
        idempotencyKey: `opencode:message:${ocMessageID}`, externalID: ocMessageID,
      };
      let m: any = null;
      try {
        m = await this.gw.call(AppendMessageDocument, { input });
      } catch (e) {
        if (e instanceof GatewayError && e.tag === 'SessionSealedError') {
          // A prompt OpenCode admitted behind the gateway's back after a seal: stop it there.
          this.fence(l);
          this.log(`prompt ${ocMessageID} in sealed session ${l.row.sessionID}: aborting it in OpenCode`);
          await this.oc.abort(pm.parts[ocPartIDs[0]]?.sessionID ?? '').catch(() => {});
          await this.opts.store.saveMessage({ messageID: `refused:${ocMessageID}`, sessionID: l.row.sessionID!, ocSessionID: '', ocMessageID, parts: {} });
        } else if (e instanceof GatewayError) {
          this.log(`appendMessage ${ocMessageID}: ${e.message}`);
        } else throw e;
      }
      if (m) {
        const map: Record<string, string> = {};
        m.parts.forEach((p: { id: string }, i: number) => { map[p.id] = ocPartIDs[i]; });
        await this.opts.store.saveMessage({ messageID: m.id, sessionID: l.row.sessionID!, ocSessionID: this.ocOf(l), ocMessageID, parts: map });
      }
    }
    delete l.st.pending[ocMessageID];
    await this.persist(l);
  }

  private ocOf(l: Live) { return l.row.ocSessionID; }

  /** Marks the OpenCode session sealed for the gateway-fence plugin (idempotent; best effort, logged). */
  private fence(l: Live) {
    const dir = this.opts.fenceDir ?? process.env.OPENCODE_GATEWAY_FENCE_DIR ??
      path.join(this.opts.opencodeDataDir ?? defaultOpencodeDataDir(), 'opencode', 'gateway-fence');
    const file = path.join(dir, l.row.ocSessionID);
    try {
      if (fs.existsSync(file)) return;
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(file, JSON.stringify({ gatewaySessionID: l.row.sessionID, sealedAt: new Date().toISOString() }) + '\n');
    } catch (e: any) {
      this.log(`fence ${file}: ${e?.message ?? e}`);
    }
  }

  private async beginStep(l: Live, ocMessageID: string, step: StepState) {
    const sessionID = l.row.sessionID!;
    // A RUNNING execution left behind (its end was lost): settle it first.
    for (const [mid, other] of Object.entries(l.st.steps)) {
      if (mid !== ocMessageID && other.executionID && !other.settled) await this.endStep(l, mid, 'INTERRUPTED', 'USER', null);
    }
    const start = step.startTree ? await this.snapshot(l, step.startTree) : null;
    try {
      const e = await this.hostCall(BeginExecutionDocument,
        { sessionID, hostID: this.hostID!, trigger: 'PROMPT', ...(start?.id ? { startSnapshot: start.id } : start?.error ? { startCaptureError: start.error } : {}),
          idempotencyKey: `opencode:step:${ocMessageID}`,
          externalID: ocMessageID, model: step.model ?? null, agent: step.agent ?? null, mode: step.mode ?? null });
      step.executionID = e.id;
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      step.refused = true;
      this.log(`beginExecution refused (${err.tag}) for OpenCode step ${ocMessageID}`);
      if (err.tag === 'SessionSealedError') await this.oc.abort(l.row.ocSessionID).catch(() => {});
    }
    await this.persist(l);
  }

  private async onToolJob(l: Live, part: OcPart, step: StepState) {
    const known = l.st.jobs[part.id];
    const status = part.state?.status;
    if (!known && (status === 'running' || status === 'completed' || status === 'error') && step.executionID && !step.settled) {
      const input = part.state?.input ?? {};
      const command = String(input.command ?? input.prompt ?? input.description ?? part.tool);
      try {
        const j = await this.hostCall(StartJobDocument, {
          sessionID: l.row.sessionID!, executionID: step.executionID, hostID: this.hostID!, kind: JOB_TOOLS[part.tool!],
          title: String(input.description ?? part.state?.title ?? command).slice(0, 200), command: command.slice(0, 10_000), background: false,
          idempotencyKey: `opencode:part:${part.id}`,
        });
        l.st.jobs[part.id] = { jobID: j.id, finished: false, ocMessageID: part.messageID };
        await this.persist(l);
      } catch (e) {
        if (!(e instanceof GatewayError)) throw e;
        this.log(`startJob refused (${e.tag}) for ${part.id}`);
        if (e.tag === 'SessionSealedError') await this.oc.abort(l.row.ocSessionID).catch(() => {});
        return;
      }
    }
    const j = l.st.jobs[part.id];
    let end = jobEnd(part);
    // While sealing the bridge has aborted the session: a tool that then ends in an error without an
    // exit code of its own (e.g. a task tool whose subagent was stopped) was ended by the seal's abort.
    if (end && l.st.sealing && end.status === 'ERROR' && end.exitCode === null) end = { status: 'CANCELLED', exitCode: null };
    if (j && !j.finished && end) await this.finishJob(l, part.id, end.status, end.exitCode);
  }

  /**
   * OpenCode still runs the session after the bridge was away: its running jobs are still running, whatever
   * the gateway's lease sweep concluded meanwhile (LOST). Taken back (`restored: true`); RUNNING ones stay.
   */
  private async restoreJobs(l: Live) {
    if (!l.row.sessionID || l.st.removed || !this.hostID) return;
    for (const j of Object.values(l.st.jobs)) {
      if (j.finished || j.lost) continue;
      await this.gw.call(RestoreJobDocument, { input: { jobID: j.jobID, hostID: this.hostID } })
        .catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`restoreJob ${j.jobID}: ${e.message}`); });
    }
  }

  private async finishJob(l: Live, ocPartID: string, status: 'COMPLETED' | 'ERROR' | 'CANCELLED' | 'LOST', exitCode: number | null) {
    const j = l.st.jobs[ocPartID];
    await this.gw.call(FinishJobDocument, { input: { jobID: j.jobID, status, exitCode } })
      .catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`finishJob ${j.jobID}: ${e.message}`); });
    if (status === 'LOST') j.lost = true;
    else j.finished = true;
    await this.persist(l);
  }

  private async endStep(l: Live, ocMessageID: string, status: 'SUCCEEDED' | 'FAILED' | 'INTERRUPTED', reason: 'USER' | 'SEAL' | 'SHUTDOWN' | null, endTree: string | null, error?: string | null, errorName?: string | null, opts: { abortedByOpencode?: boolean } = {}) {
    const step = l.st.steps[ocMessageID];
    if (!step || step.settled) return;
    if (l.st.sealing && status === 'INTERRUPTED') {
      reason = 'SEAL';
      await this.waitIdle(l.row.ocSessionID, 10_000); // SessionSealed only once OpenCode reports the session idle
    }
    // Jobs of the step whose end OpenCode never reported. Aborted by OpenCode (MessageAbortedError, or the
    // abort the bridge sent for a seal: OpenCode's abort kills the tool's process tree, verified): CANCELLED.
    // Otherwise nobody saw them end: OpenCode stopped (crash, restart: SHUTDOWN) and a shell runs in its own
    // process group, so it may well still run. Those are LOST, never a claimed end; OpenCode reporting their
    // end later (a late part update) still finishes them.
    const aborted = opts.abortedByOpencode === true;
    for (const [pid, j] of Object.entries(l.st.jobs)) {
      if (j.ocMessageID === ocMessageID && !j.finished && !j.lost) await this.finishJob(l, pid, aborted ? 'CANCELLED' : 'LOST', null);
    }
    const pm = l.st.pending[ocMessageID];
    if (pm && !step.flushed) {
      step.flushed = true;
      await this.flushMessage(l, ocMessageID, pm, step.executionID);
    }
    if (step.executionID) {
      const end = endTree ? await this.snapshot(l, endTree) : null;
      await this.gw.call(SettleExecutionDocument, { input: {
        executionID: step.executionID, status, ...(reason ? { interruptReason: reason } : {}),
        ...(error ? { error } : {}), ...(end?.id ? { endSnapshot: end.id } : end?.error ? { endCaptureError: end.error } : {}),
        ...(errorName ? { errorName } : {}), ...(step.usage ? { usage: step.usage } : {}), ...(step.finish ? { finishReason: step.finish } : {}),
        ...(step.model ? { model: step.model } : {}), agent: step.agent ?? null, mode: step.mode ?? null,
      } }).catch((e) => {
        if (!(e instanceof GatewayError)) throw e;
        // Typically ABANDONED: the gateway was unreachable for longer than the lease and its sweep gave the
        // execution up. That is final on the gateway; the step's messages and jobs are still reported.
        this.log(`settleExecution ${step.executionID} (${status} in OpenCode): ${e.message}`);
      });
    }
    step.settled = true;
    // Keep the state small: a settled step needs no more than its mark.
    delete step.startTree;
    for (const [pid, j] of Object.entries(l.st.jobs)) if (j.finished && j.ocMessageID === ocMessageID) delete l.st.jobs[pid];
    await this.persist(l);
    // Between two steps: OpenCode edits the gateway refused while this one ran can land now.
    await this.retryCorrections(l);
  }

  /** OpenCode reports the session idle: flush prompts that got no answer, and settle steps that will never finish. */
  private async onIdle(ocSessionID: string) {
    const l = this.sessions.get(ocSessionID);
    if (!l || !l.row.sessionID || l.st.removed) return;
    await this.flushPendingUsers(l);
    for (const [mid, step] of Object.entries(l.st.steps)) {
      if (step.settled) { delete l.st.steps[mid]; continue; }
      // Sealing: the bridge's abort stopped it (and killed its tools); else OpenCode stopped (restart, crash).
      if (step.executionID || step.refused) {
        await this.endStep(l, mid, 'INTERRUPTED', l.st.sealing ? 'SEAL' : 'SHUTDOWN', null, null, null, { abortedByOpencode: !!l.st.sealing });
      }
      else if (l.st.pending[mid]) await this.flushMessage(l, mid, l.st.pending[mid], null); // failed before its step began
      delete l.st.steps[mid];
    }
    await this.persist(l);
    await this.retryCorrections(l);
  }

  private async waitIdle(ocSessionID: string, timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const status = await this.oc.status().catch(() => null);
      if (status && (!status[ocSessionID] || status[ocSessionID].type === 'idle')) return true;
      await new Promise<void>((r) => { this.waiters.push(r); setTimeout(r, 200); });
    }
    return false;
  }

  // ---------------------------------------------------------------- snapshots

  /** A boundary's snapshot ID, or why it could not be captured (sent as the boundary's capture error). */
  private async snapshot(l: Live, tree: string): Promise<{ id: string | null; error?: string } | null> {
    const sink = this.sink;
    if (!sink || !l.st.directory || !this.hostID) return null; // boundary reads START_NOT_CAPTURED / END_NOT_CAPTURED
    const t0 = Date.now();
    try {
      // Captured moments ago (followed live, or read from history right after: a poll, a gap): what OpenCode's
      // capture skipped (ignored paths, untracked files over 2 MiB, submodule files) is observed now, and
      // whatever changed since the capture reads as unknown. Older: that cannot be known any more, and the
      // snapshot is uploaded partial (see snapshot.ts).
      const recent = this.eventTime !== null && Date.now() - this.eventTime < (this.opts.observeWindowMs ?? OBSERVE_WINDOW_MS);
      const m = await readStepSnapshot({ dataDir: this.opts.opencodeDataDir ?? defaultOpencodeDataDir(), directory: l.st.directory, tree,
        live: this.live || recent, capturedBefore: this.eventTime });
      const id = await sink.upload(l.row.sessionID!, this.hostID, m);
      if (process.env.BRIDGE_TRACE) this.log(`snapshot ${tree}: ${m.files.length} entries in ${Date.now() - t0}ms`);
      return { id };
    } catch (e: any) {
      const why = e instanceof SnapshotUnavailable ? e.detail : `snapshot ${tree} of ${l.st.directory} could not be uploaded: ${e?.message ?? e}`;
      this.log(`snapshot ${tree}: ${why}`);
      return { id: null, error: why.slice(0, 2_000) };
    }
  }

  // ---------------------------------------------------------------- gateway -> OpenCode

  private watchGatewaySession(l: Live) {
    const sessionID = l.row.sessionID;
    if (!sessionID || l.st.removed || this.subscribedSessions.has(sessionID)) return;
    this.subscribedSessions.add(sessionID);
    // Re-subscribed from the latest handled cursor whenever the gateway ends the stream; none once removed.
    this.sessionSubs.set(sessionID, this.gw.subscribe(TranscriptEventsDocument,
      () => (l.st.removed ? null : { sessionID, after: l.st.eventsCursor ?? null }), 'plugin',
      (d) => this.onGatewayEvent(l, d.sessionEvents),
      // Gone from the gateway (removed while the bridge was away): stop following it, for good.
      () => this.enqueue(async () => { this.log(`gateway session ${sessionID} is gone: no longer followed`); l.st.removed = true; await this.persist(l); })));
  }

  private async onGatewayEvent(l: Live, ev: { cursor: string; sequence: number; type: string; messageID: string | null; partID: string | null; message: any }) {
    if (!ev || (l.st.eventsSeq ?? 0) >= ev.sequence) return;
    // Sealed on the gateway (the seal's first commit): fence the OpenCode session at once, before any
    // command for its running work arrives (an idle session gets none).
    if (ev.type === 'session.sealing' || ev.type === 'session.sealed') this.fence(l);
    if (ev.type === 'session.removed') {
      // Removed on the gateway (its REMOVE_SESSION command removes it in OpenCode): nothing more to follow.
      await this.enqueue(async () => { l.st.removed = true; await this.persist(l); });
      this.sessionSubs.get(l.row.sessionID!)?.();
      return;
    }
    if (ev.type === 'message.part_corrected' || ev.type === 'message.retracted') {
      const stored = ev.messageID ? await this.opts.store.message(ev.messageID) : null;
      if (stored) {
        if (ev.type === 'message.retracted') {
          l.st.deletedByGateway = [...(l.st.deletedByGateway ?? []), stored.ocMessageID].slice(-1000);
          await this.ocRetry('OpenCode delete', () => this.oc.deleteMessage(stored.ocSessionID, stored.ocMessageID)).catch((e) => {
            if (this.stopped) throw e; // not handled: replayed from the stored cursor on the next start
            if (!(e instanceof OpencodeError && e.status === 404)) this.log(`OpenCode delete ${stored.ocMessageID}: ${e.message}`);
          });
        } else if (ev.partID && stored.parts[ev.partID]) {
          const own = this.ownCorrections.get(ev.partID) ?? 0;
          if (own > 0) {
            // The bridge's own correction (an OpenCode edit mirrored): OpenCode has that text already.
            if (own === 1) this.ownCorrections.delete(ev.partID);
            else this.ownCorrections.set(ev.partID, own - 1);
          } else {
            const text = ev.message?.parts?.find((p: any) => p.id === ev.partID)?.text;
            const ocPartID = stored.parts[ev.partID];
            if (typeof text === 'string') {
              await this.ocRetry('OpenCode correction', () => this.correctInOpencode(l, stored.ocSessionID, stored.ocMessageID, ocPartID, text))
                .catch((e) => { if (this.stopped) throw e; this.log(`OpenCode correction of ${ocPartID}: ${e.message}`); });
            }
          }
        }
      }
    }
    await this.enqueue(async () => {
      l.st.eventsSeq = Math.max(l.st.eventsSeq ?? 0, ev.sequence);
      l.st.eventsCursor = ev.cursor;
      await this.persist(l);
    });
  }

  /**
   * An OpenCode call made for a gateway event: retried while OpenCode is unreachable (restarting) or answers
   * 5xx, so the event is not marked handled (its cursor stored) before OpenCode got it.
   */
  private async ocRetry<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (e: any) {
        if (this.stopped || (e instanceof OpencodeError && e.status < 500)) throw e;
        if (attempt % 20 === 0) this.log(`${what}: ${e?.message ?? e}; retrying`);
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** attempt, 2_000)));
      }
    }
  }

  private async correctInOpencode(l: Live, ocSessionID: string, ocMessageID: string, ocPartID: string, text: string) {
    const msg = (await this.oc.messages(ocSessionID)).find((m) => m.info.id === ocMessageID);
    const part = msg?.parts.find((p) => p.id === ocPartID);
    if (!part || part.type !== 'text' || part.text === text) return;
    // Expect the echo (OpenCode's `message.part.updated` with this text) before it can arrive: it must not
    // come back to the gateway as an OpenCode edit. Persisted with the next state write.
    const echoes = (l.st.echoes ??= {});
    echoes[ocPartID] = [...(echoes[ocPartID] ?? []), text].slice(-5);
    try {
      await this.oc.updatePart({ ...part, text });
    } catch (e) {
      const i = echoes[ocPartID]?.lastIndexOf(text) ?? -1;
      if (i >= 0) echoes[ocPartID].splice(i, 1);
      throw e;
    }
  }

  /** The gateway session mirroring an OpenCode session, if the bridge has mirrored it (the proxy's admission). */
  gatewaySessionOf(ocSessionID: string): string | null {
    return this.sessions.get(ocSessionID)?.row.sessionID ?? null;
  }

  /**
   * CLOSE_ADMISSIONS (issue 12): the proxy stops forwarding for the session and waits for what it
   * forwarded; then abort until OpenCode reports the session idle, apply what the abort recorded, and
   * only then acknowledge: the acknowledgement tells the gateway that nothing admitted can still run.
   */
  private async closeAdmissions(c: { id: string; sessionID: string }) {
    const ocSessionID = this.byGateway.get(c.sessionID);
    if (ocSessionID) {
      const l = this.sessions.get(ocSessionID)!;
      this.fence(l);
      await this.enqueue(async () => { l.st.sealing = true; await this.persist(l); });
      const abort = () => this.oc.abort(ocSessionID).catch((e) => this.log(`abort ${ocSessionID}: ${e.message}`));
      while (!(await this.opts.admission!.quiesce(ocSessionID, abort))) {
        if (this.stopped) return;
        this.log(`seal of ${ocSessionID}: a forwarded request is still running; aborting again`);
      }
      for (;;) {
        await abort();
        if (await this.waitIdle(ocSessionID, 30_000)) break;
        if (this.stopped) return;
      }
      await this.settled().catch(() => {});
      await this.enqueue(() => this.onIdle(ocSessionID));
    }
    await this.gw.call(AcknowledgeHostCommandDocument, { input: { commandID: c.id } })
      .catch((e) => this.log(`acknowledge ${c.id}: ${e.message}`));
  }

  /**
   * A command of the gateway. Seal: interrupt an execution or cancel a job (OpenCode can only abort the whole
   * session). Plugin requests: compaction, generation, and the session mutations (create, rename, remove).
   */
  private async onCommand(c: Command) {
    if (!c) return;
    try {
      switch (c.kind) {
        case 'CLOSE_ADMISSIONS': return await this.closeAdmissions(c);
        case 'CREATE_SESSION': return await this.reply(c, () => this.createInOpencode(c));
        case 'COMPACT_SESSION': return await this.reply(c, () => this.compactInOpencode(c));
        case 'GENERATE': return await this.reply(c, () => this.generateInOpencode(c));
        case 'RENAME_SESSION': await this.renameInOpencode(c); break;
        case 'REMOVE_SESSION': await this.removeInOpencode(c); break;
        default: await this.abortForSeal(c);
      }
    } catch (e: any) {
      if (this.stopped) return; // not acknowledged: delivered again on the next start
      this.log(`command ${c.kind} ${c.id}: ${e?.message ?? e}`);
    }
    await this.gw.call(AcknowledgeHostCommandDocument, { input: { commandID: c.id } })
      .catch((e) => this.log(`acknowledge ${c.id}: ${e.message}`));
  }

  /** Runs a request and sends its result (or its error) with replyHostCommand. */
  private async reply(c: Command, fn: () => Promise<Record<string, unknown>>) {
    let result: Record<string, unknown> | null = null;
    let error: string | null = null;
    try {
      result = await fn();
    } catch (e: any) {
      if (this.stopped) return;
      error = String(e?.message ?? e).slice(0, 2_000) || 'failed';
      this.log(`${c.kind} ${c.id}: ${error}`);
    }
    await this.gw.call(ReplyHostCommandDocument, { input: { commandID: c.id, ...(error !== null ? { error } : { result }) } })
      .catch((e) => this.log(`reply ${c.id}: ${e.message}`));
  }

  private liveOf(sessionID: string): Live {
    const oc = this.byGateway.get(sessionID);
    const l = oc ? this.sessions.get(oc) : undefined;
    if (!l || l.st.removed) throw new Error(`session ${sessionID} is not an OpenCode session this bridge follows`);
    return l;
  }

  /** CREATE_SESSION: the child is created in OpenCode, then mirrored at once (its later session.created changes nothing). */
  private async createInOpencode(c: Command) {
    const p = c.payload as { parentID: string; title?: string; metadata?: Record<string, unknown> };
    const parent = this.liveOf(p.parentID);
    return this.enqueue(async () => {
      let ocID = parent.st.created?.[c.id];
      if (!ocID) {
        const info = await this.oc.createSession({ parentID: parent.row.ocSessionID, ...(p.title ? { title: p.title } : {}) });
        ocID = info.id;
        (parent.st.created ??= {})[c.id] = ocID;
        await this.persist(parent);
      }
      const l = this.liveSession(ocID);
      if (!l.row.sessionID) await this.onSession(l, await this.oc.getSession(ocID), p.metadata ?? {});
      if (!l.row.sessionID) throw new Error(`OpenCode session ${ocID} could not be mirrored`);
      return { sessionID: l.row.sessionID };
    });
  }

  /** RENAME_SESSION: OpenCode's title follows; its session.updated echo then matches the stored title. */
  private async renameInOpencode(c: Command) {
    const title = String((c.payload as { title?: string })?.title ?? '');
    const l = this.liveOf(c.sessionID);
    await this.enqueue(async () => { l.st.title = title; await this.persist(l); });
    const now = await this.ocRetry('OpenCode session', () => this.oc.getSession(l.row.ocSessionID));
    if (now.title !== title) await this.ocRetry('OpenCode rename', () => this.oc.updateSession(l.row.ocSessionID, { title }));
  }

  /** REMOVE_SESSION: removed on the gateway already; removed in OpenCode, and no longer followed. */
  private async removeInOpencode(c: Command) {
    const ocID = this.byGateway.get(c.sessionID);
    const l = ocID ? this.sessions.get(ocID) : undefined;
    if (!l) return; // not one of ours (or already forgotten)
    await this.enqueue(async () => { l.st.removed = true; l.st.pending = {}; await this.persist(l); });
    this.sessionSubs.get(c.sessionID)?.();
    this.sessionSubs.delete(c.sessionID);
    await this.ocRetry('OpenCode delete session', () => this.oc.deleteSession(l.row.ocSessionID)).catch((e) => {
      if (!(e instanceof OpencodeError && e.status === 404)) throw e;
    });
  }

  /** The model a request runs with when it names none: the session's last step's, else OpenCode's default. */
  private async defaultModel(l: Live): Promise<{ providerID: string; modelID: string }> {
    const last = Object.values(l.st.steps).reverse().find((s) => s.model)?.model;
    if (last) return last;
    const cfg = await this.oc.config();
    const m = (cfg.model ?? '').split('/');
    if (m.length >= 2) return { providerID: m[0], modelID: m.slice(1).join('/') };
    throw new Error('OpenCode has no default model');
  }

  /**
   * COMPACT_SESSION: OpenCode's own summarize. The summary message it writes is not mirrored as a step (the
   * gateway records the reply's summary as its compaction); its text is the reply.
   */
  private async compactInOpencode(c: Command) {
    const l = this.liveOf(c.sessionID);
    const ocID = l.row.ocSessionID;
    const model = await this.defaultModel(l);
    const before = new Set((await this.oc.messages(ocID)).map((m) => m.info.id));
    await this.enqueue(async () => { l.st.compacting = true; await this.persist(l); });
    try {
      await this.oc.summarize(ocID, model);
      const msgs = await this.oc.messages(ocID);
      const summary = msgs.filter((m) => !before.has(m.info.id) && m.info.role === 'assistant' && m.info.summary).at(-1)
        ?? msgs.filter((m) => !before.has(m.info.id) && m.info.role === 'assistant').at(-1);
      if (!summary) throw new Error('OpenCode wrote no summary');
      if (summary.info.error) throw new Error(`OpenCode's summary failed: ${summary.info.error.name}`);
      const text = summary.parts.filter((p) => p.type === 'text' && p.text).map((p) => p.text).join('\n').trim();
      if (!text) throw new Error('OpenCode\'s summary is empty');
      await this.enqueue(async () => {
        l.st.compactionMessages = [...(l.st.compactionMessages ?? []), ...msgs.filter((m) => !before.has(m.info.id)).map((m) => m.info.id)].slice(-100);
        await this.persist(l);
      });
      return { summary: text };
    } finally {
      await this.enqueue(async () => { l.st.compacting = false; await this.persist(l); });
    }
  }

  /**
   * GENERATE: a hidden completion. A temporary OpenCode session (never mirrored) gets the gateway's context
   * and the prompt, with the requested model and every tool off; it is deleted afterwards. The session
   * itself is untouched.
   */
  private async generateInOpencode(c: Command) {
    const p = c.payload as { prompt: string; model: { providerID: string; modelID: string }; context: { role: string; text: string }[] };
    const l = this.liveOf(c.sessionID);
    const tmp = await this.enqueue(async () => {
      const info = await this.oc.createSession({ title: `gateway generate ${c.id} (hidden)` });
      const h = this.liveSession(info.id);
      h.st.hidden = true;
      h.st.removed = true;
      h.st.directory = l.st.directory;
      await this.persist(h);
      return info.id;
    });
    try {
      const tools = Object.fromEntries((await this.oc.toolIDs().catch(() => [] as string[])).map((t) => [t, false]));
      const context = p.context.map((m) => `${m.role}: ${m.text}`).join('\n\n');
      const text = context ? `Conversation so far:\n\n${context}\n\n---\n\n${p.prompt}` : p.prompt;
      const r = await this.oc.prompt(tmp, { parts: [{ type: 'text', text }], model: p.model, tools });
      if (r.info.error) throw new Error(`${r.info.error.name}: ${r.info.error.data?.message ?? ''}`);
      if (r.info.providerID !== p.model.providerID || r.info.modelID !== p.model.modelID) {
        throw new Error(`OpenCode answered with ${r.info.providerID}/${r.info.modelID}, not the model asked for`);
      }
      return {
        text: r.parts.filter((x) => x.type === 'text' && x.text).map((x) => x.text).join('\n'),
        inputTokens: Math.round(r.info.tokens?.input ?? 0), outputTokens: Math.round(r.info.tokens?.output ?? 0),
        providerID: r.info.providerID, modelID: r.info.modelID,
      };
    } finally {
      await this.oc.deleteSession(tmp).catch((e) => this.log(`delete hidden session ${tmp}: ${e.message}`));
    }
  }

  private async abortForSeal(c: Command) {
    const ocSessionID = this.byGateway.get(c.sessionID);
    if (ocSessionID) {
      const l = this.sessions.get(ocSessionID)!;
      this.fence(l); // before the abort: no new step may start once the running one ends
      await this.enqueue(async () => { l.st.sealing = true; await this.persist(l); });
      await this.oc.abort(ocSessionID).catch((e) => this.log(`abort ${ocSessionID}: ${e.message}`));
      await this.waitIdle(ocSessionID, 30_000);
      // Let the abort's events (tool ended, message aborted) be applied, then settle whatever is left.
      await this.settled().catch(() => {});
      await this.enqueue(() => this.onIdle(ocSessionID));
    }
  }
}

type Command = { id: string; kind: string; sessionID: string; jobID: string | null; executionID: string | null; payload?: unknown };
