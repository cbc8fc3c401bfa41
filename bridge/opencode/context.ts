// What the parts of the OpenCode bridge share: the options, the two connections, the followed sessions
// with their state, the one serial queue every state change runs in, and OpenCode's busy/idle view.
import fs from 'node:fs';
import path from 'node:path';
import type { OpencodeClient } from './client.js';
import { OpencodeError } from './client.js';
import type { Gateway } from './gateway.js';
import { emptyState, type SessionState } from './mapping.js';
import { defaultOpencodeDataDir, type TreeManifest } from './snapshot.js';
import type { BridgeStore, StoredSession } from './store.js';

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
  /** The bridge's own state (cursors, step bookkeeping, message map): never the gateway's database. */
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
   * paths it cannot cover, which is why the seal still answers ADMISSION_NOT_EXCLUSIVE without the proxy).
   * Whoever can write into it can lift or forge a fence: the bridge creates it mode 0700 and refuses to
   * start with one another user owns or can read or write (bridge/common/private-files.ts).
   */
  fenceDir?: string;
  /**
   * Behind the front (bridge/opencode/serve.ts): OpenCode is reachable only through the admission proxy, so the
   * bridge registers with capabilities.exclusiveAdmission (default false), and a seal's CLOSE_ADMISSIONS
   * command first calls `quiesce` (the proxy stops forwarding for the session and waits for what it
   * forwarded), then aborts the session and acknowledges once OpenCode reports it idle.
   */
  admission?: { quiesce(ocSessionID: string, abort: () => Promise<unknown>): Promise<boolean> };
  log?: (m: string) => void;
}

/** A followed OpenCode session: its stored row (cursor, gateway mirror) and its state. */
export interface Live { st: SessionState; row: StoredSession }

export class BridgeContext {
  /** OpenCode session id -> the session. */
  readonly sessions = new Map<string, Live>();
  /** Gateway session id -> OpenCode session id. */
  readonly byGateway = new Map<string, string>();
  stopped = false;
  readonly log: (m: string) => void;
  private queue: Promise<unknown> = Promise.resolve();
  /** OpenCode session id -> busy, as OpenCode's status events last said. */
  readonly busy = new Map<string, boolean>();
  private waiters: (() => void)[] = [];

  constructor(readonly opts: BridgeOptions, readonly oc: OpencodeClient, readonly gw: Gateway) {
    this.log = opts.log ?? (() => {});
  }

  get store(): BridgeStore { return this.opts.store; }
  get dataDir(): string { return this.opts.opencodeDataDir ?? defaultOpencodeDataDir(); }
  /** Where seals fence sessions for the gateway-fence plugin (BridgeOptions.fenceDir). */
  get fenceDir(): string { return this.opts.fenceDir ?? process.env.OPENCODE_GATEWAY_FENCE_DIR ?? path.join(this.dataDir, 'opencode', 'gateway-fence'); }

  async load() {
    for (const row of await this.store.sessions()) {
      const l: Live = { st: { ...emptyState(), ...row.state }, row };
      l.row.state = l.st;
      this.sessions.set(row.ocSessionID, l);
      if (row.sessionID) this.byGateway.set(row.sessionID, row.ocSessionID);
    }
  }

  /** Runs `fn` after everything queued before it: the one order in which the bridge's state changes. */
  enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.queue.then(async () => {
      // Watchdog: a task that takes this long is worth a log line (it blocks every later event).
      const t = setTimeout(() => this.log(`a bridge task has been running for 20s (${fn.name || 'anonymous'})`), 20_000);
      t.unref();
      try { return await fn(); } finally { clearTimeout(t); }
    });
    this.queue = p.catch((e) => this.log(`bridge: ${e?.stack ?? e}`));
    // Callers that do not await (`void enqueue(…)`) must not leave an unhandled rejection (e.g. "bridge
    // stopped" from a gateway call retrying when SIGTERM arrives): the error is logged above.
    p.catch(() => {});
    return p;
  }

  async drained() { await this.queue.catch(() => {}); }

  liveSession(ocSessionID: string): Live {
    let l = this.sessions.get(ocSessionID);
    if (!l) {
      l = { st: emptyState(), row: { ocSessionID, sessionID: null, lastSeq: -1, state: emptyState() } };
      l.row.state = l.st;
      this.sessions.set(ocSessionID, l);
    }
    return l;
  }

  /** The followed session mirrored as gateway session `sessionID` (commands name gateway sessions). */
  liveOf(sessionID: string): Live {
    const oc = this.byGateway.get(sessionID);
    const l = oc ? this.sessions.get(oc) : undefined;
    if (!l || l.st.removed) throw new Error(`session ${sessionID} is not an OpenCode session this bridge follows`);
    return l;
  }

  async persist(l: Live) {
    l.row.state = l.st;
    await this.store.saveSession(l.row);
  }

  /**
   * One state change of a session, all or nothing: `fn` works on a copy (the mapper's bookkeeping, the
   * answers of the gateway calls it makes), which replaces the session's state and is stored only when
   * `fn` succeeded. A failure leaves the state as it was: the event is applied again later, and the
   * gateway calls it repeats are idempotent (keys) or refused harmlessly (settle, finish).
   */
  async transact<T>(l: Live, fn: (w: Live) => Promise<T>): Promise<T> {
    const w: Live = { st: structuredClone(l.st), row: { ...l.row } };
    w.row.state = w.st;
    const r = await fn(w);
    l.st = w.st;
    l.row = w.row;
    if (l.row.sessionID) this.byGateway.set(l.row.sessionID, l.row.ocSessionID);
    await this.persist(l);
    return r;
  }

  /** OpenCode's status for a session changed (busy/idle): wakes `waitIdle`. */
  statusChanged(ocSessionID: string, busy: boolean) {
    this.busy.set(ocSessionID, busy);
    this.waiters.splice(0).forEach((w) => w());
  }

  async waitIdle(ocSessionID: string, timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const status = await this.oc.status().catch(() => null);
      if (status && (!status[ocSessionID] || status[ocSessionID].type === 'idle')) return true;
      await new Promise<void>((r) => { this.waiters.push(r); setTimeout(r, 200); });
    }
    return false;
  }

  /**
   * An OpenCode call made for the gateway (an event, a command): retried while OpenCode is unreachable
   * (restarting) or answers 5xx, so the event is not marked handled (its cursor stored) before OpenCode got it.
   */
  async ocRetry<T>(what: string, fn: () => Promise<T>): Promise<T> {
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

  /**
   * Marks the OpenCode session sealed for the gateway-fence plugin (idempotent; best effort, logged). The
   * folder was checked private when the bridge started; the file is created, never opened through a link.
   */
  fence(l: Live) {
    const file = path.join(this.fenceDir, l.row.ocSessionID);
    try {
      fs.writeFileSync(file, JSON.stringify({ gatewaySessionID: l.row.sessionID, sealedAt: new Date().toISOString() }) + '\n', { flag: 'wx', mode: 0o600 });
    } catch (e: any) {
      if (e?.code !== 'EEXIST') this.log(`fence ${file}: ${e?.message ?? e}`);
      // Fenced already; anything but a file in its place (the plugin follows a link) is left alone, and said.
      else if (!fs.lstatSync(file).isFile()) this.log(`fence ${file}: something other than a file is in its place; not written`);
    }
  }
}
