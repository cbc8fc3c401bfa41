// The OpenCode bridge: registers as a host, mirrors an OpenCode server's durable history into the
// gateway (backfill from POST /sync/history, then the global event stream, resuming from a stored
// per-session sequence), and applies the gateway's corrections, retractions and seals to OpenCode.
import { OpencodeClient, OpencodeError, type OcLiveEvent, type OcMessageInfo, type OcPart, type OcSession, type OcSyncEvent } from './client.js';
import { Gateway, GatewayError } from './gateway.js';
import type { BridgeStore, StoredSession } from './store.js';
import { baseType, emptyState, JOB_TOOLS, jobEnd, toGatewayParts, type PendingCorrection, type PendingMessage, type SessionState, type StepState } from './mapping.js';
import fs from 'node:fs';
import path from 'node:path';
import { GraphqlSnapshotSink } from './snapshot-sink.js';
import { defaultOpencodeDataDir, findSnapshotGitdir, observeLeftOut, readSnapshotTree, type TreeManifest } from './snapshot.js';

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

const SEL_EXEC = '... on Execution { id status }';
const SEL_JOB = '... on Job { id status }';
const SEL_MSG = '... on Message { id parts { id } }';
const SEL_SESSION = '... on Session { id }';
/** Lets the bridge tell a lapsed lease (`InvalidRequestError` on field hostID) from other refusals. */
const SEL_FIELD = '... on InvalidRequestError { field }';

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
      capabilities: { cancel: true, compact: false, generate: false, exclusiveAdmission: !!this.opts.admission }, models: [],
    };
    let h;
    try {
      h = await this.gw.call('registerHost', 'RegisterHostInput', '... on Host { id }', input);
    } catch (e) {
      if (!(e instanceof GatewayError) || !previous) throw e;
      h = await this.gw.call('registerHost', 'RegisterHostInput', '... on Host { id }', { ...input, hostID: null });
    }
    if (previous && previous !== h.id) this.log(`the gateway forgot host ${previous}: registered again as ${h.id}`);
    this.hostID = h.id;
    await this.opts.store.setHostID(h.id);
    if (this.hostSub && this.hostSubFor !== h.id) this.watchHostCommands();
  }

  /** (Re)subscribes the host's commands (seal: interrupt/cancel) for the current hostID. */
  private watchHostCommands() {
    this.hostSub?.();
    this.hostSubFor = this.hostID;
    this.hostSub = this.gw.subscribe(
      'subscription($h: ID!) { hostCommands(hostID: $h) { id kind sessionID jobID executionID } }',
      () => (this.hostID ? { h: this.hostID } : null), 'host', (d) => this.onCommand(d.hostCommands));
  }

  private async renew() {
    // One renewal at a time: while the gateway is down a renewal keeps retrying (Gateway.request), and
    // the timer must not stack more of them behind it.
    if (this.stopped || !this.hostID || this.renewing) return;
    this.renewing = true;
    try {
      await this.gw.call('renewHostLease', 'RenewHostLeaseInput', '... on Host { id }', { hostID: this.hostID });
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
  private async hostCall(field: string, inputType: string, selection: string, input: Record<string, unknown>): Promise<any> {
    try {
      return await this.gw.call(field, inputType, `${selection} ${SEL_FIELD}`, input);
    } catch (e) {
      if (!hostRefused(e)) throw e;
      this.log(`${field}: ${e.message}; registering again`);
      await this.register();
      return await this.gw.call(field, inputType, selection, { ...input, hostID: this.hostID });
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
    for (const id of this.sessions.keys()) {
      this.busy.set(id, !idle(after, id));
      if (idle(before, id) && idle(after, id)) await this.onIdle(id);
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
      else if (type === 'message.part.updated') await this.onPart(l, d.part as OcPart);
      else if (type === 'message.removed') await this.onMessageRemoved(l, d.messageID as string);
      else if (type === 'message.part.removed') await this.onPartRemoved(l, d.messageID as string, d.partID as string);
      else if (type === 'session.deleted') await this.onSessionDeleted(l);
    }
    l.row.lastSeq = ev.seq;
    await this.persist(l);
    this.stats.applied++;
  }

  private async onSession(l: Live, info: OcSession) {
    if (!info) return;
    if (!l.row.sessionID) {
      const parentGw = info.parentID ? this.sessions.get(info.parentID)?.row.sessionID ?? null : null;
      const s = await this.gw.call('createSession', 'CreateSessionInput', SEL_SESSION, {
        parentID: parentGw, title: info.title ?? '', directory: info.directory,
        // Served by this bridge from the start: a seal before any step still learns that OpenCode
        // admits prompts behind the gateway (ADMISSION_NOT_EXCLUSIVE), instead of a SessionSealed.
        hostID: this.hostID,
        metadata: { opencode: { server: this.oc.base, sessionID: info.id, parentID: info.parentID ?? null } },
        // A crash after this call and before the state is saved replays the event: same session.
        idempotencyKey: `opencode:session:${info.id}`,
      }, 'plugin');
      l.row.sessionID = s.id;
      l.st.title = info.title;
      l.st.directory = info.directory;
      l.st.parentOc = info.parentID ?? null;
      this.byGateway.set(s.id, info.id);
      await this.persist(l);
      this.watchGatewaySession(l);
    } else if (info.title && info.title !== l.st.title) {
      l.st.title = info.title;
      await this.gw.call('updateSession', 'UpdateSessionInput', SEL_SESSION, { sessionID: l.row.sessionID, title: info.title }, 'plugin')
        .catch((e) => this.log(`updateSession: ${e.message}`));
    }
  }

  private async onSessionDeleted(l: Live) {
    await this.flushPendingUsers(l);
    for (const [mid, step] of Object.entries(l.st.steps)) if (!step.settled) await this.endStep(l, mid, 'INTERRUPTED', 'USER', null);
    l.st.removed = true;
    await this.gw.call('removeSession', 'RemoveSessionInput', '... on SessionRemoved { sessionID }', { sessionID: l.row.sessionID }, 'plugin')
      .catch((e) => this.log(`removeSession: ${e.message}`));
  }

  private async onMessage(l: Live, info: OcMessageInfo) {
    if (!info) return;
    const stored = await this.opts.store.messageByOc(info.id);
    if (info.role === 'user') {
      if (!stored) l.st.pending[info.id] ??= { role: 'user', parts: {}, order: [] };
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
    if (info.time?.completed && !s.settled) {
      // Completed without a step-finish: aborted (or failed) mid-step.
      if (info.error) {
        const aborted = info.error.name === 'MessageAbortedError';
        await this.endStep(l, info.id, aborted ? 'INTERRUPTED' : 'FAILED', aborted ? (l.st.sealing ? 'SEAL' : 'USER') : null, null,
          aborted ? null : `${info.error.name}: ${info.error.data?.message ?? ''}`.slice(0, 2000));
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
      await this.endStep(l, part.messageID, 'SUCCEEDED', null, part.snapshot ?? null);
    } else if (part.type === 'tool' && part.tool && JOB_TOOLS[part.tool]) {
      await this.onToolJob(l, part, step);
    }
  }

  private async onPartRemoved(l: Live, messageID: string, partID: string) {
    const pm = l.st.pending[messageID];
    if (!pm) {
      // A part removed from a message already mirrored: the gateway has no way to remove one part (only to
      // correct a TEXT part or retract the whole message), so its copy keeps the part.
      if (l.st.echoes?.[partID]) delete l.st.echoes[partID];
      if (await this.opts.store.messageByOc(messageID)) this.log(`OpenCode removed part ${partID} of mirrored message ${messageID}: kept on the gateway`);
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
    const data = await this.gw.request(`query($id: ID!) { message(id: $id) { id retraction { reason } parts { id ... on TextPart { text } } } }`,
      { id: c.messageID }, 'plugin');
    const m = data?.message;
    if (!m) return done(`message ${c.messageID} not found`);
    if (m.retraction) return done(`message ${c.messageID} is retracted`);
    const current = m.parts.find((p: { id: string }) => p.id === c.partID);
    if (!current) return done(`part ${c.partID} not found`);
    if (current.text === c.text) return done();
    this.ownCorrections.set(c.partID, (this.ownCorrections.get(c.partID) ?? 0) + 1);
    try {
      await this.gw.call('correctMessagePart', 'CorrectMessagePartInput', '... on MessagePartCorrected { part { id revision } }',
        { messageID: c.messageID, partID: c.partID, text: c.text }, 'plugin');
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
    await this.gw.call('retractMessage', 'RetractMessageInput', '... on MessageRetracted { message { id } }',
      { messageID: stored.messageID, reason: 'deleted in OpenCode' }, 'plugin')
      .catch((e) => this.log(`retractMessage: ${e.message}`));
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
        sessionID: l.row.sessionID, executionID,
        role: pm.role === 'user' ? 'USER' : 'ASSISTANT', origin: pm.role === 'user' ? 'PROMPT' : 'MODEL', parts,
        idempotencyKey: `opencode:message:${ocMessageID}`,
      };
      let m: any = null;
      try {
        m = await this.gw.call('appendMessage', 'AppendMessageInput', SEL_MSG, input);
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
    const startSnapshot = step.startTree ? await this.snapshot(l, step.startTree) : null;
    try {
      const e = await this.hostCall('beginExecution', 'BeginExecutionInput', SEL_EXEC,
        { sessionID, hostID: this.hostID, trigger: 'PROMPT', ...(startSnapshot ? { startSnapshot } : {}), idempotencyKey: `opencode:step:${ocMessageID}` });
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
        const j = await this.hostCall('startJob', 'StartJobInput', SEL_JOB, {
          sessionID: l.row.sessionID, executionID: step.executionID, hostID: this.hostID, kind: JOB_TOOLS[part.tool!],
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

  private async finishJob(l: Live, ocPartID: string, status: 'COMPLETED' | 'ERROR' | 'CANCELLED', exitCode: number | null) {
    const j = l.st.jobs[ocPartID];
    await this.gw.call('finishJob', 'FinishJobInput', SEL_JOB, { jobID: j.jobID, status, exitCode })
      .catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`finishJob ${j.jobID}: ${e.message}`); });
    j.finished = true;
    await this.persist(l);
  }

  private async endStep(l: Live, ocMessageID: string, status: 'SUCCEEDED' | 'FAILED' | 'INTERRUPTED', reason: 'USER' | 'SEAL' | 'SHUTDOWN' | null, endTree: string | null, error?: string | null) {
    const step = l.st.steps[ocMessageID];
    if (!step || step.settled) return;
    if (l.st.sealing && status === 'INTERRUPTED') {
      reason = 'SEAL';
      await this.waitIdle(l.row.ocSessionID, 10_000); // SessionSealed only once OpenCode reports the session idle
    }
    // Shell jobs of the step that never reported an end were killed with it.
    for (const [pid, j] of Object.entries(l.st.jobs)) {
      if (j.ocMessageID === ocMessageID && !j.finished) await this.finishJob(l, pid, status === 'SUCCEEDED' ? 'COMPLETED' : 'CANCELLED', null);
    }
    const pm = l.st.pending[ocMessageID];
    if (pm && !step.flushed) {
      step.flushed = true;
      await this.flushMessage(l, ocMessageID, pm, step.executionID);
    }
    if (step.executionID) {
      const endSnapshot = endTree ? await this.snapshot(l, endTree) : null;
      await this.gw.call('settleExecution', 'SettleExecutionInput', SEL_EXEC, {
        executionID: step.executionID, status, ...(reason ? { interruptReason: reason } : {}),
        ...(error ? { error } : {}), ...(endSnapshot ? { endSnapshot } : {}),
      }).catch((e) => {
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
      if (step.executionID || step.refused) await this.endStep(l, mid, 'INTERRUPTED', l.st.sealing ? 'SEAL' : 'SHUTDOWN', null);
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

  private async snapshot(l: Live, tree: string): Promise<string | null> {
    const sink = this.sink;
    if (!sink || !l.st.directory || !this.hostID) return null; // boundary reads START_NOT_CAPTURED / END_NOT_CAPTURED
    const t0 = Date.now();
    try {
      const gitdir = findSnapshotGitdir(this.opts.opencodeDataDir ?? defaultOpencodeDataDir(), l.st.directory);
      if (!gitdir) return null;
      const m = await readSnapshotTree(gitdir, tree);
      if (this.live) {
        // Followed live: the worktree is as OpenCode just captured it, so what its capture skipped
        // (ignored paths, untracked files over 2 MiB) is observed now and recorded by metadata or hash.
        const left = observeLeftOut(l.st.directory, m);
        m.files.push(...left.files);
        m.unscanned.push(...left.unscanned);
      } else {
        // A step read from history: what OpenCode left out then cannot be observed now (today's worktree
        // says nothing about it). The tree's files are what they are, but the changeset must not read
        // complete: the snapshot is marked partial.
        m.partial = 'OpenCode step read from its history: OpenCode does not capture ignored paths or untracked files over 2 MiB, and what it left out then cannot be observed any more';
      }
      const id = await sink.upload(l.row.sessionID!, this.hostID, m);
      if (process.env.BRIDGE_TRACE) this.log(`snapshot ${tree}: ${m.files.length} entries in ${Date.now() - t0}ms`);
      return id;
    } catch (e: any) {
      this.log(`snapshot ${tree}: ${e?.message ?? e}`);
      return null;
    }
  }

  // ---------------------------------------------------------------- gateway -> OpenCode

  private watchGatewaySession(l: Live) {
    const sessionID = l.row.sessionID;
    if (!sessionID || l.st.removed || this.subscribedSessions.has(sessionID)) return;
    this.subscribedSessions.add(sessionID);
    const q = `subscription($s: ID!, $a: String) { sessionEvents(sessionID: $s, after: $a) {
      cursor sequence type messageID partID message { id parts { id ... on TextPart { text } } } } }`;
    // Re-subscribed from the latest handled cursor whenever the gateway ends the stream; none once removed.
    this.unsubs.push(this.gw.subscribe(q, () => (l.st.removed ? null : { s: sessionID, a: l.st.eventsCursor ?? null }), 'plugin',
      (d) => this.onGatewayEvent(l, d.sessionEvents)));
  }

  private async onGatewayEvent(l: Live, ev: { cursor: string; sequence: number; type: string; messageID?: string; partID?: string; message?: any }) {
    if (!ev || (l.st.eventsSeq ?? 0) >= ev.sequence) return;
    // Sealed on the gateway (the seal's first commit): fence the OpenCode session at once, before any
    // command for its running work arrives (an idle session gets none).
    if (ev.type === 'session.sealing' || ev.type === 'session.sealed') this.fence(l);
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
    await this.gw.call('acknowledgeHostCommand', 'AcknowledgeHostCommandInput', '... on HostCommand { id }', { commandID: c.id })
      .catch((e) => this.log(`acknowledge ${c.id}: ${e.message}`));
  }

  /** A seal asks to interrupt an execution or cancel a job: OpenCode can only abort the whole session. */
  private async onCommand(c: { id: string; kind: string; sessionID: string; jobID?: string; executionID?: string }) {
    if (!c) return;
    if (c.kind === 'CLOSE_ADMISSIONS') return this.closeAdmissions(c);
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
    await this.gw.call('acknowledgeHostCommand', 'AcknowledgeHostCommandInput', '... on HostCommand { id }', { commandID: c.id })
      .catch((e) => this.log(`acknowledge ${c.id}: ${e.message}`));
  }
}
