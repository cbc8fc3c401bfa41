// The state file of a hooks-driven host (`<dir>/state.jsonl`, the bridges' store, bridge/common/store.ts: a
// log of JSON lines, fsynced, compacted) and what it holds: the host IDs of its two registrations, per agent
// session its state (its gateway session, turns, jobs, fence, the pending rollout/transcript edits…), and the
// launches (launches.ts): the agent processes a launcher started, which sessions each ran, the PID the launcher
// reported. Survives host restarts; a launch whose process is gone is forgotten (nothing reads it any more).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { FileBridgeStore } from '../common/store.js';
import { launchRunning, mayTouch, runsSession, type LaunchState } from './launches.js';
import { processFacts } from './processes.js';
import type { Waker } from './queues.js';

/** What the kit needs of an agent session's state. */
export interface KitSessionState {
  sessionID: string | null; cwd: string; launch: string | null; rewrittenAt?: number;
  /** The settings the last launch that ran the session asked for (a PROMPT command's resume runs with them). */
  launchSettings?: Record<string, unknown> | null;
}

const OBSERVED_HOST = '@observed-host';

/** A row of the state file: an agent session's state, a launch (`launch:<token>`), or the observed registration's host ID. */
type Row = KitSessionState | LaunchState | { hostID: string };

export class HostState<S extends KitSessionState> {
  readonly store: FileBridgeStore<Row>;
  readonly sessions = new Map<string, S>();
  /** Gateway session -> the agent's session. */
  readonly byGateway = new Map<string, string>();
  readonly launches = new Map<string, LaunchState>();
  /** Why the host refused a launch's prompts and tool calls (the launcher prints them when the agent exits). */
  readonly refusals = new Map<string, string[]>();
  private readonly sessionWaiters = new Map<string, ((id: string) => void)[]>();

  constructor(dir: string, private readonly exits: Waker) {
    this.store = new FileBridgeStore<Row>(path.join(dir, 'state.jsonl'));
  }

  /** Reads the stored sessions and launches. */
  async load(): Promise<void> {
    for (const row of await this.store.sessions()) {
      if (row.ocSessionID === OBSERVED_HOST) continue;
      if (row.ocSessionID.startsWith('launch:')) { const l = row.state as unknown as LaunchState; this.launches.set(l.token, l); continue; }
      const st = row.state as unknown as S;
      this.sessions.set(row.ocSessionID, st);
      if (st.sessionID) this.byGateway.set(st.sessionID, row.ocSessionID);
    }
  }

  /** The stored host ID of a registration (`launched`: the store's own; `observed`: a row of its own). */
  async hostID(kind: 'launched' | 'observed'): Promise<string | null> {
    return kind === 'launched' ? this.store.hostID() : ((await this.store.sessions()).find((s) => s.ocSessionID === OBSERVED_HOST)?.state as { hostID?: string } | undefined)?.hostID ?? null;
  }

  async setHostID(kind: 'launched' | 'observed', id: string): Promise<void> {
    if (kind === 'launched') return this.store.setHostID(id);
    await this.store.saveSession({ ocSessionID: OBSERVED_HOST, sessionID: null, lastSeq: 0, state: { hostID: id } });
  }

  async persist(key: string, st: S): Promise<void> {
    this.sessions.set(key, st);
    if (st.sessionID) {
      this.byGateway.set(st.sessionID, key);
      const w = this.sessionWaiters.get(key);
      if (w) { this.sessionWaiters.delete(key); w.forEach((f) => f(st.sessionID!)); }
    }
    await this.store.saveSession({ ocSessionID: key, sessionID: st.sessionID, lastSeq: 0, state: st });
  }

  /** Resolves with the gateway session of agent session `key` once it exists. */
  waitSession(key: string): Promise<string> {
    const id = this.sessions.get(key)?.sessionID;
    if (id) return Promise.resolve(id);
    return new Promise((r) => this.sessionWaiters.set(key, [...(this.sessionWaiters.get(key) ?? []), r]));
  }

  // ---- launches ----

  /** `/launch`: a new launch token for a launcher starting an agent in `cwd`, with what its arguments name. */
  async issueLaunch(body: { cwd?: unknown; names?: unknown; anyInCwd?: unknown; commandID?: unknown; settings?: unknown }): Promise<LaunchState> {
    const settings = body.settings && typeof body.settings === 'object' && !Array.isArray(body.settings) && Object.keys(body.settings).length
      ? body.settings as Record<string, unknown> : null;
    const l: LaunchState = {
      token: randomBytes(16).toString('hex'), pid: null, exited: false, cwd: String(body.cwd ?? ''), createdAt: Date.now(),
      names: typeof body.names === 'string' ? body.names : null, anyInCwd: body.anyInCwd === true, sessions: [], admitted: [], stale: [],
      ...(typeof body.commandID === 'string' && body.commandID ? { commandID: body.commandID } : {}), ...(settings ? { settings } : {}),
    };
    await this.persistLaunch(l);
    return l;
  }

  /** `/launched`: the launcher reports the agent's PID (with its start time: a PID names the process only while that matches). */
  async launchReported(body: { token?: unknown; pid?: unknown }): Promise<[number, unknown]> {
    const l = this.launches.get(String(body.token));
    if (!l) return [404, { error: 'unknown launch' }];
    const pid = Number(body.pid) || null;
    await this.persistLaunch({ ...l, pid, startTicks: pid ? processFacts(pid)?.startTicks ?? null : null });
    this.exits.wake();
    return [200, {}];
  }

  /** `/exited`: the launcher reports the agent's exit; answers the launch (null: unknown). */
  async launchExited(token: string): Promise<LaunchState | null> {
    const l = this.launches.get(token);
    if (!l) return null;
    await this.persistLaunch({ ...l, exited: true });
    this.exits.wake();
    return l;
  }

  async persistLaunch(l: LaunchState): Promise<void> {
    this.launches.set(l.token, l);
    await this.store.saveSession({ ocSessionID: `launch:${l.token}`, sessionID: null, lastSeq: 0, state: l });
  }

  async forgetLaunch(token: string): Promise<void> {
    this.launches.delete(token);
    this.refusals.delete(token);
    await this.store.forgetSession(`launch:${token}`);
  }

  /** Launches whose agent is gone (the launcher reported it, or it died with the host down) are not kept. */
  async forgetGoneLaunches(): Promise<void> {
    for (const l of [...this.launches.values()]) if (!launchRunning(l)) await this.forgetLaunch(l.token);
  }

  /** Records a refusal of one of a launch's prompts or tool calls (the last 20). */
  refused(token: string, what: string): void {
    if (!token || !this.launches.has(token)) return;
    this.refusals.set(token, [...(this.refusals.get(token) ?? []), what].slice(-20));
  }

  /** The launch as it is once its launcher reported the PID (it does so right after spawning the agent), or after `ms`. */
  async reportedLaunch(token: string, ms: number, step = 50): Promise<LaunchState | null> {
    let l = this.launches.get(token) ?? null;
    for (const deadline = Date.now() + ms; l && l.pid === null && !l.exited && Date.now() < deadline; l = this.launches.get(token) ?? l) await this.exits.wait(step);
    return l;
  }

  /** The live processes of launches that ran session `key` or were started to resume it (a starting one: once its PID is known). */
  async launchedProcesses(key: string): Promise<number[]> {
    const out: number[] = [];
    const last = this.sessions.get(key)?.launch; // the launch that ran it last (one stored by an older host records no sessions)
    for (const l0 of this.launches.values()) {
      if (!(runsSession(l0, key) || l0.token === last) || !launchRunning(l0)) continue;
      const l = await this.reportedLaunch(l0.token, 10_000, 200);
      if (l && l.pid !== null && launchRunning(l)) out.push(l.pid);
    }
    return out;
  }

  /** The process of a launch (waiting, bounded, for its PID), or null when it is gone. */
  async launchProcess(token: string): Promise<number | null> {
    const l = await this.reportedLaunch(token, 10_000, 200);
    return l && !l.exited && l.pid !== null && launchRunning(l) ? l.pid : null;
  }

  /** Whether a launched process may read or append to session `key`'s transcript now (in directory `cwd`). */
  launchMayTouch(key: string, cwd: string): boolean {
    for (const l of this.launches.values()) if (launchRunning(l) && mayTouch(l, key, cwd)) return true;
    return false;
  }

  /**
   * The launch ran a hook of session `key`: recorded (the seal stops it, a rewrite waits for it). Answers whether
   * its prompts are refused there: it started before the session's transcript was rewritten and named nothing, so
   * it may hold the old text (an interactive resume that switched to the session).
   */
  async bindLaunch(token: string, key: string): Promise<boolean> {
    let l = this.launches.get(token);
    if (!l) return false;
    const st = this.sessions.get(key);
    if (st && l.settings !== undefined && JSON.stringify(st.launchSettings ?? null) !== JSON.stringify(l.settings ?? null)) {
      await this.persist(key, { ...st, launchSettings: l.settings ?? null });
    }
    if (!l.sessions?.includes(key)) {
      const st = this.sessions.get(key);
      const stale = !!st?.rewrittenAt && st.rewrittenAt >= (l.createdAt ?? 0) && !mayTouch({ ...l, sessions: [] }, key, st.cwd);
      l = { ...l, sessions: [...(l.sessions ?? []), key], ...(stale ? { stale: [...(l.stale ?? []), key] } : {}) };
      await this.persistLaunch(l);
    }
    return !!l.stale?.includes(key);
  }

  /**
   * The PROMPT command whose turn a prompt of session `key` in this launch is: the launch's command, for its first
   * prompt in the session it was started to resume (taken once: a later prompt of the launch is its own).
   */
  async takePromptCommand(token: string, key: string): Promise<string | null> {
    const l = this.launches.get(token);
    if (!l?.commandID || l.commandTaken || l.names !== key) return null;
    await this.persistLaunch({ ...l, commandTaken: true });
    return l.commandID;
  }

  /** Records that the gateway admitted the launch's process in session `key` (admitWork). */
  async admitted(token: string, key: string): Promise<void> {
    const now = this.launches.get(token);
    if (now) await this.persistLaunch({ ...now, admitted: [...(now.admitted ?? []), key] });
  }

  close(): Promise<void> { return this.store.close(); }
}
