// The part of a hooks-driven host that is the same for every agent (Claude Code, Codex): its two registrations
// with the gateway, its state file, its loopback channel and the launcher's routes, the order of a session's
// work, the fence and the seal's stop of a session's processes, the jobs' ends, the gateway's commands, and the
// rewrite of a transcript from the session's corrections and retractions while no process of the session runs.
// An agent's host extends it with what is its own: which hooks it follows and how it decides them, its
// transcript format (what a turn holds, how an edit is written), its launcher's answer, its compaction and
// generation.
//
// Two registrations: sessions started by the agent's launcher (the host's hooks in force, fail closed, and a
// launch token the host issued) are served by a host that declares `exclusiveAdmission` (so their seal can
// answer SessionSealed); any other session whose hooks reach the host by one that does not (its seal answers
// SealUnsupportedError(ADMISSION_NOT_EXCLUSIVE): the agent can run it without the hooks).
import fs from 'node:fs';
import { AdmitWorkDocument, FinishJobDocument, SettleExecutionDocument, TranscriptEventsDocument } from '../../client/index.js';
import { WorktreeCapturer, type CaptureOptions } from '../../host/capture.js';
import { HostLease, type Command, type HostIdentity } from '../common/host-lease.js';
import { Gateway, GatewayError } from '../common/gateway.js';
import { allow, refuse, type Decision } from './admission.js';
import { rewriteFileAtomically } from './atomic-rewrite.js';
import { HostChannel } from './channel.js';
import { acknowledge, replyError, replyTo } from './host-commands.js';
import { HostState, type KitSessionState } from './host-state.js';
import { launchRunning, type LaunchState } from './launches.js';
import type { AgentNames } from './local-channel.js';
import { agentProcess, alive, killProcessTree, processFacts, type ProcessFacts } from './processes.js';
import { SessionQueues, Waker } from './queues.js';
import { boundaryInput, captureBoundary, inside, real } from './worktree.js';
import type { KitTurnState, TurnEnd, TurnSettlement } from './turn.js';

export type Kind = 'launched' | 'observed';

export type JobEnd = { status: 'COMPLETED' | 'ERROR' | 'CANCELLED' | 'LOST'; exitCode?: number | null };

/**
 * Why the running turn ended without its Stop hook: the agent exited (`exit`), stopped by the user's interrupt
 * (`signal`: SIGINT, SIGTERM, SIGHUP, SIGQUIT), exited with an error code (`failed`), killed by any other signal
 * (`crashed`: SIGKILL from outside or the kernel, SIGSEGV, SIGABRT…), a new prompt came first (`superseded`), or
 * the seal stopped it (`seal`).
 */
export type EndWhy = 'exit' | 'signal' | 'failed' | 'crashed' | 'superseded' | 'seal';

/** The signals a user stops an agent with (Ctrl-C, `kill`, a closed terminal): the others end it as a crash. */
const USER_SIGNALS = new Set(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']);

export interface BaseSessionState extends KitSessionState {
  kind: Kind;
  /** The agent's transcript (Claude Code's JSON lines, Codex's rollout). */
  transcript: string;
  /** A seal began: every later prompt and tool call of the session is refused. */
  fenced: boolean;
  /** The running turn's key. */
  current: string | null;
  /** The session's turns the host mirrored (by the agent's turn ID): settled once their execution settled. */
  turns: Record<string, KitTurnState>;
  jobs?: Record<string, { jobID: string; done: boolean }>;
  /** Corrections and retractions not written into the transcript yet (a process of the session runs). */
  pendingEdits?: unknown[];
  /** The last gateway session event applied (sessionEvents resumes after it). */
  eventsCursor?: string | null;
  eventsSeq?: number;
  /** A child session's parent (the agent session whose process runs it). */
  parent?: string;
  /** The transcript as the host's last start looked at it whole (a start finding it unchanged does not read it). */
  seen?: { size: number; mtimeMs: number };
}

export interface HooksHostOptions {
  gatewayUrl: string;
  hostToken: string;
  /** Plugin rights (createSession); defaults to hostToken (e.g. an admin token). */
  pluginToken?: string;
  /** The host's directory: state file, hook script, secret, port file. */
  dir: string;
  /** Loopback port for the hooks (default: any free one). */
  port?: number;
  leaseMs?: number;
  capture?: CaptureOptions;
  /** How long an admission (prompt, tool call) may wait for the gateway before it is refused. Default 20 s. */
  admissionTimeoutMs?: number;
  log?: (m: string) => void;
}

/** An agent run the host started for a PROMPT command: its exit, what the host refused in it, its output's end. */
export interface PromptRun { exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; refused: string[] }>; output(): string }

/**
 * A turn of the transcript, and how the agent's host imports it (`importMissed`). `ended`: the transcript shows its
 * end (a turn without one may still be running).
 */
export interface EarlierTurn {
  id: string;
  ended: boolean;
  import(why: string): Promise<void>;
  /**
   * The running turn the host admitted, whose end the transcript shows but whose end hook never reached the host
   * (it was down): settled from the transcript as at its end, its end boundary not captured (`why`).
   */
  finish?(why: string): Promise<void>;
}

export type GatewayEvent = { cursor: string; sequence: number; type: string; messageID: string | null; partID: string | null; message: any };

export interface AgentSpec {
  names: AgentNames;
  /** Writes the hook script into the host's directory (made, or narrowed to, 0700 first); answers its path. */
  writeScript(dir: string): string;
  /** What each registration declares (exclusiveAdmission: `kind === 'launched'`). */
  capabilities(kind: Kind): { cancel: boolean; compact: boolean; generate: boolean; prompt?: boolean };
  models(): { providerID: string; modelID: string }[];
  /** Whether a process's command line is the agent's. */
  isAgent(argv: string[]): boolean;
  /** Where an agent process keeps its sessions, from its environment (Claude Code: `$CLAUDE_CONFIG_DIR` or `~/.claude`). */
  configDirOf(env: Map<string, string>): string | null;
  /** The hook events that admit a prompt and a tool call (refused when their handling fails). Default: UserPromptSubmit, PreToolUse. */
  admitting?: { prompt: string; tool: string };
}

export abstract class HooksHost<S extends BaseSessionState, E> {
  readonly gw: Gateway;
  protected readonly leases: Record<Kind, HostLease>;
  protected readonly exits = new Waker();
  /** The state file: sessions, launches, host IDs. */
  protected readonly state: HostState<S>;
  protected get sessions() { return this.state.sessions; }
  /** Agent session -> the PID its hooks ran under (observed sessions: the only handle to stop a turn). */
  protected readonly pids = new Map<string, number>();
  protected readonly queues: SessionQueues;
  protected readonly capturer: WorktreeCapturer;
  /** The loopback channel of the hook script and the launcher (authenticated by the host's secret). */
  protected readonly channel: HostChannel;
  protected readonly watched = new Map<string, () => void>();
  /** Sessions whose processes the host is killing (their exit is the host's doing). */
  protected readonly killing = new Set<string>();
  /** PROMPT commands being carried out (an agent run of the host's), and those whose execution began (linked). */
  private readonly prompting = new Set<string>();
  private readonly promptsBegun = new Set<string>();
  stopped = false;
  port = 0;
  readonly log: (m: string) => void;
  readonly scriptPath: string;
  readonly stats = { hooks: 0, refused: 0, unauthenticated: 0, unverified: 0 };
  protected get admitting() { return this.agent.admitting ?? { prompt: 'UserPromptSubmit', tool: 'PreToolUse' }; }

  constructor(readonly base: HooksHostOptions, protected readonly agent: AgentSpec) {
    this.log = base.log ?? (() => {});
    this.gw = new Gateway(base.gatewayUrl, base.hostToken, base.pluginToken ?? base.hostToken, this.log);
    this.scriptPath = agent.writeScript(base.dir);
    this.queues = new SessionQueues(this.log);
    this.state = new HostState(base.dir, this.exits);
    this.channel = new HostChannel(base.dir, agent.names, {
      hook: (event, input, launch, ppid) => this.hook(event, input, launch, ppid),
      routes: {
        '/launch': async (b) => { const l = await this.state.issueLaunch(b); return [200, { token: l.token, ...this.launchAnswer(l, b) }]; },
        '/launched': (b) => this.state.launchReported(b),
        '/exited': (b) => this.exitedRoute(b),
        '/health': async () => [200, { ok: true, hostIDs: this.hostIDs }],
      },
      failClosed: [this.admitting.prompt, this.admitting.tool],
    }, this.log, this.stats);
    this.capturer = new WorktreeCapturer({ watch: true, ...base.capture });
    const self = this;
    const ctx = { get gw() { return self.gw; }, get stopped() { return self.stopped; }, log: this.log, leaseMs: base.leaseMs ?? 30_000 };
    const identity = (kind: Kind): HostIdentity => ({
      name: () => `${agent.names.command} ${kind} ${base.dir}`,
      // Launched: the agent runs with the host's hooks in force (fail closed) and the seal can stop it, so
      // nothing of the session starts without the gateway's admission. Observed: it can run without them.
      capabilities: () => ({ ...agent.capabilities(kind), exclusiveAdmission: kind === 'launched', sessions: false }),
      models: async () => agent.models(),
      storedHostID: () => this.state.hostID(kind),
      storeHostID: (id) => this.state.setHostID(kind, id),
    });
    this.leases = {
      launched: new HostLease(ctx, identity('launched'), (c) => this.command(c)),
      observed: new HostLease(ctx, identity('observed'), (c) => this.command(c)),
    };
  }

  /**
   * The idempotency key of what the host mirrors: `<agent>:<kind>:<ids…>` (e.g. `codex:turn:<thread>:<turn ID>`,
   * `claude-code:job:<session>:<tool use ID>`), from the agent's own IDs. The same thing gets the same key after a
   * host restart, a hook delivered twice or an import of earlier history, so the gateway stores it once.
   */
  protected idempotencyKey(kind: string, ...ids: string[]): string {
    return [this.agent.names.command, kind, ...ids].join(':');
  }

  /**
   * Nothing missed: the turns of session `key`'s transcript the gateway does not hold are imported, each once, in
   * the transcript's order (before any later turn begins), as executions with their messages, jobs, model and
   * usage, and honest boundaries. A turn is missed when the agent ran it while its hooks did not reach the host:
   * before the host saw the session, while the host was down (the hooks fail open, or are absent), or while the
   * gateway was. No capture of the worktree exists for it (START_/END_NOT_CAPTURED, the detail saying it was
   * imported): its changeset is unknown, and the next turn's driftBefore is unknown too instead of counting its
   * edits as changes made outside any turn (Session.changes over the range still holds them, listing it among
   * its incomplete executions). With the live turns' idempotency keys, so a turn is never mirrored twice; a turn
   * whose import was cut short (the host stopped) is imported again, its parts stored once.
   * `live`: the turn a hook names now (its own admission mirrors it); without one, a last turn whose end the
   * transcript does not show may still be running and waits for a later look (a later prompt, the session's end,
   * the next start), unless `over` (the agent process is gone). At the host's start (`hostStarted`), a turn it
   * admitted that ended while it was down is settled from the transcript (`finish`), its end boundary not
   * captured. The agent's host reads its turns (`earlierHistory`).
   */
  protected async importMissed(key: string, live: string | null, over = false, hostStarted = false): Promise<void> {
    const st = this.sessions.get(key);
    if (!st?.sessionID || st.parent || st.fenced || !st.transcript) return;
    // A cheap look first (the prompt waits for this): a turn the host has not mirrored, nor found not to be one?
    let starts: string[] | null = null;
    if (this.turnStarts) {
      try { starts = this.turnStarts(fs.readFileSync(st.transcript, 'utf8')); } catch { return; }
      const skip = this.notTurns.get(key);
      if (!starts.some((id) => id !== live && !st.turns[id]?.settled && (id !== st.current || hostStarted) && !skip?.has(id))) return;
    }
    const why = `imported: the ${this.agent.names.label} host did not see this turn run (it was not running, or ${this.agent.names.label} ran without its hooks), so no capture of the worktree exists for it`;
    const history = this.earlierHistory(key);
    const last = history.turns.at(-1);
    const imported: string[] = [];
    for (const t of history.turns) {
      const now = this.sessions.get(key)!;
      if (t.id === live || now.turns[t.id]?.settled) continue;
      if (t.id === now.current) {
        // Admitted, then ended while the host was down (while it runs, the agent's end of the turn reaches it).
        if (hostStarted && t.ended && t.finish) {
          await t.finish(`the ${this.agent.names.label} host did not see this turn end (its end hook did not reach the host), so no capture of the worktree at its end exists`);
          this.log(`session ${key}: turn ${t.id} settled from the ${this.agent.names.transcript}: the host did not see it end`);
        }
        continue;
      }
      if (t === last && !t.ended && live === null && !over) continue;
      await t.import(why);
      imported.push(t.id);
    }
    if (imported.length) {
      this.log(`session ${key}: imported ${imported.length} turn(s) the host did not see run`);
      await history.after?.(imported);
    }
    // What the cheap look found that is no turn of the session (a compaction, a blocked prompt): not looked at again,
    // but for the last, which the agent may still be writing.
    const turns = new Set(history.turns.map((t) => t.id));
    for (const id of (starts ?? []).slice(0, -1)) if (!turns.has(id)) this.notTurns.set(key, (this.notTurns.get(key) ?? new Set()).add(id));
  }

  /** Per session, the turn IDs `turnStarts` finds that the agent's history does not hold as turns (in memory). */
  private readonly notTurns = new Map<string, Set<string>>();

  /**
   * The IDs of the turns a transcript's text holds, found cheaply (a text search, not a parse of every line; it may
   * find more than the turns: `earlierHistory` decides). Without it, every look at a session parses its transcript.
   */
  protected turnStarts?(text: string): string[];

  /**
   * At the host's start (`start`), when a session's gateway session was just created (`created`), and at each hook
   * of a mirrored session (`event`, naming turn `live` or none): the turns the host missed are imported
   * (`importMissed`) whenever the hook may follow one: a session's start or end, a prompt (the turns before it), a
   * hook of a turn the host did not admit. A hook of a turn the host admitted follows nothing missed (that turn's
   * admission looked) and costs nothing.
   */
  protected async catchUp(key: string, event: string, live: string | null): Promise<void> {
    const st = this.sessions.get(key);
    if (!st?.sessionID || st.parent) return;
    const ofTheTurn = !['start', 'created', 'SessionStart', 'SessionEnd'].includes(event);
    const admitted = live !== null ? !!st.turns[live] : ofTheTurn && st.current !== null;
    if (admitted) return;
    // At the start, a transcript unchanged since the last start looked at it holds nothing new: not read again.
    let mark: { size: number; mtimeMs: number } | null = null;
    if (event === 'start') {
      try { const f = fs.statSync(st.transcript); mark = { size: f.size, mtimeMs: f.mtimeMs }; } catch { return; }
      if (st.seen?.size === mark.size && st.seen.mtimeMs === mark.mtimeMs) return;
    }
    try {
      await this.importMissed(key, live, event === 'SessionEnd', event === 'start');
      const now = this.sessions.get(key);
      if (mark && now) await this.persist(key, { ...now, seen: mark });
    } catch (e: any) {
      this.log(`import of ${key}: ${e?.message ?? e}`);
    }
  }

  // ---- what each agent's host says ----

  /** The turns the session's transcript holds, in order, each with its import; `after` runs once those `imported` are in. */
  protected abstract earlierHistory(key: string): { turns: EarlierTurn[]; after?: (imported: string[]) => Promise<void> };

  /** A hook's decision (the agent's events and checks). */
  protected abstract decideHook(event: string, input: Record<string, unknown>, launchToken: string, ppid: number): Promise<Decision>;
  /** What the launcher gets for a new launch besides its token (e.g. a settings file, the script's path). */
  protected abstract launchAnswer(l: LaunchState, body: any): Record<string, unknown>;
  /**
   * The agent's reading of turn `turnKey` as it ended (its end-of-turn hook, or `why` it ended without one): the
   * turn's messages and jobs mirrored, and what its settlement says (status, usage, model calls), asked for once
   * the end snapshot is captured. The kit does the rest (bridge/hooks-host/turn.ts): the snapshot, the settlement,
   * the state. A host that does not implement it overrides endRunning and settles its turns itself.
   */
  protected turnOutcome(_key: string, _turnKey: string, _end: TurnEnd): Promise<() => TurnSettlement> {
    throw new Error(`the ${this.agent.names.label} host reads no turn`);
  }
  /** The transcript edit a gateway event asks for (a correction, a retraction of a mirrored message), or null. */
  protected abstract eventEdit(st: S, ev: GatewayEvent): E | null;
  /** The transcript's new text with the edits applied, and how many found their line. */
  protected abstract rewrite(st: S, text: string, edits: E[]): { text: string; applied: number };
  protected abstract generate(c: Command): Promise<Record<string, unknown>>;
  protected abstract compact(c: Command): Promise<Record<string, unknown>>;
  /**
   * A PROMPT command's run: the agent resumes session `key` through its launcher (so its hooks, their admission
   * and the seal's proof hold as for any launch) with `text` as its prompt, the launch carrying `commandID`
   * (`HostState.takePromptCommand`: its prompt's execution begins with it). Resolves once the agent started.
   */
  protected abstract launchPrompt(key: string, st: S, text: string, commandID: string): Promise<PromptRun>;

  get hostIDs() { return { launched: this.leases.launched.hostID, observed: this.leases.observed.hostID }; }

  async start(): Promise<void> {
    await this.state.load();
    await this.leases.launched.start();
    await this.leases.observed.start();
    this.port = await this.channel.start(this.base.port ?? 0);
    // Turns left running by a host that stopped: their agent may be gone meanwhile.
    for (const [key, st] of this.sessions) {
      if (st.current && st.kind === 'launched' && st.launch) {
        const l = this.state.launches.get(st.launch);
        if (l && !launchRunning(l)) void this.enqueue(key, () => this.endRunning(key, 'exit'));
      }
    }
    // Launches whose agent is gone (the launcher reported it, or it died with the host down) are not kept.
    await this.state.forgetGoneLaunches();
    for (const key of this.sessions.keys()) {
      this.watch(key);
      if (this.sessions.get(key)!.pendingEdits?.length) void this.enqueue(key, () => this.applyEdits(key));
      // What the agent ran in the session while the host was down: imported before any later hook's work.
      void this.enqueue(key, () => this.catchUp(key, 'start', null));
    }
    this.log(`${this.agent.names.command} host listening on 127.0.0.1:${this.port} (hosts ${this.hostIDs.launched} launched, ${this.hostIDs.observed} observed)`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const l of Object.values(this.leases)) l.stop();
    for (const u of this.watched.values()) u();
    await this.channel.stop();
    // Queued work waiting for an unreachable gateway gives up (at its next retry) instead of holding the stop.
    this.gw.stopped = true;
    await this.queues.settled();
    for (const l of Object.values(this.leases)) await l.settle();
    await this.capturer.close();
    await this.gw.close();
    await this.state.close();
  }

  /** How many corrections and retractions of session `key` wait to be written into its transcript. */
  pendingEditsOf(key: string): number { return this.sessions.get(key)?.pendingEdits?.length ?? 0; }
  /** The gateway session of an agent session (null until its first hook reached the host). */
  gatewaySessionOf(key: string): string | null { return this.sessions.get(key)?.sessionID ?? null; }
  /** Resolves when every queued task of every session has run (tests: after the agent exited). */
  settled(): Promise<void> { return this.queues.settled(); }
  /** Resolves with the gateway session of agent session `key` once its first hook created it. */
  waitSession(key: string): Promise<string> { return this.state.waitSession(key); }

  protected enqueue<T>(key: string, fn: () => Promise<T>): Promise<T> { return this.queues.enqueue(key, fn); }
  protected persist(key: string, st: S) { return this.state.persist(key, st); }
  protected async update(key: string, f: (st: S) => Partial<S>) {
    const st = this.sessions.get(key)!;
    await this.persist(key, { ...st, ...f(st) });
  }
  protected waitExit(ms: number) { return this.exits.wait(ms); }

  // ---- the turn (the agent reads it: turnOutcome; the kit ends and settles it) ----

  /** The agent's end of turn (its Stop hook) for `turnKey` (null: the running turn): mirrored and settled, once. */
  protected async endOfTurn(key: string, turnKey: string | null, stop: Record<string, unknown>) {
    const k = turnKey ?? this.sessions.get(key)?.current ?? null;
    if (k && this.sessions.get(key)?.turns[k]?.settled === false) await this.closeTurn(key, k, { stop });
  }

  /** The running turn of session `key` ended without the agent's end of turn: settled with what the transcript holds. */
  protected async endRunning(key: string, why: EndWhy) {
    const k = this.sessions.get(key)?.current ?? null;
    if (k && this.sessions.get(key)?.turns[k]?.settled === false) await this.closeTurn(key, k, { why });
  }

  private async closeTurn(key: string, turnKey: string, end: TurnEnd) {
    const settlement = await this.turnOutcome(key, turnKey, end);
    const boundary = await this.snapshot(this.sessions.get(key)!);
    await this.settleTurn(key, turnKey, { ...settlement(), ...boundaryInput('end', boundary) });
  }

  /**
   * Settles turn `turnKey`'s execution and marks the turn settled. A settle the gateway refuses (settled already:
   * a replay; ABANDONED by the lease sweep) is logged: the turn is settled either way.
   */
  protected async settleTurn(key: string, turnKey: string, input: TurnSettlement) {
    const ts = this.sessions.get(key)?.turns[turnKey];
    if (!ts) return;
    if (process.env.BRIDGE_TRACE) this.log(`settle ${turnKey}: ${JSON.stringify(input).slice(0, 300)}`);
    await this.gw.call(SettleExecutionDocument, { input: { executionID: ts.executionID, ...input } }).catch((e) => {
      if (!(e instanceof GatewayError)) throw e;
      this.log(`settle ${ts.executionID}: ${e.message}`);
    });
    await this.update(key, (now) => ({ current: now.current === turnKey ? null : now.current, turns: { ...now.turns, [turnKey]: { ...now.turns[turnKey], settled: true } } } as Partial<S>));
  }

  /** A boundary capture of the session's worktree (the reference host's capture). */
  protected snapshot(st: S) {
    return captureBoundary(this.capturer, this.gw, st.sessionID!, st.cwd, this.leases[st.kind].hostID, this.log);
  }

  /** The child sessions of `key` (run by its process: fenced and stopped with it). */
  protected childrenOf(key: string): string[] {
    return [...this.sessions.entries()].filter(([, st]) => st.parent === key).map(([k]) => k);
  }

  // ---- hooks and the launcher ----

  /** One hook: the decision the agent gets. */
  async hook(event: string, input: Record<string, unknown>, launchToken: string, ppid: number): Promise<Decision> {
    this.stats.hooks++;
    const d = await this.decideHook(event, input, launchToken, ppid);
    if (process.env.BRIDGE_TRACE) this.log(`hook ${event} ${String(input.session_id ?? '')}: ${d.exit === 2 ? `refused: ${d.reason}` : 'allowed'}`);
    if (d.exit === 2) {
      this.stats.refused++;
      if (d.reason !== 'late') this.state.refused(launchToken, `${event === this.admitting.tool ? 'a tool call' : event === this.admitting.prompt ? 'the prompt' : event}: ${d.reason}`);
    }
    return d;
  }

  /**
   * The agent process a hook ran under (its parent, or an ancestor with a shell in between), checked before
   * anything the hook names is read, captured or created: a process of this host's user, the launch's own process
   * for a launched session, whose working directory holds the `cwd` the hook names. Answers it with its facts
   * (the agent checks the transcripts the hook names against `facts.configDir`), or why the hook is not taken.
   */
  protected async hookProcess(input: Record<string, unknown>, launch: LaunchState | null, ppid: number): Promise<{ pid: number; facts: ProcessFacts } | string> {
    const label = this.agent.names.label;
    const pid = ppid > 1 ? agentProcess(ppid, this.agent.isAgent) : null;
    if (pid === null) return `the hook's parent process (${ppid || 'none given'}) is not a ${label} process`;
    const facts = processFacts(pid, this.agent.configDirOf);
    if (!facts) return `${label} process ${pid} cannot be read`;
    if (typeof process.getuid === 'function' && facts.uid !== process.getuid()) return `${label} process ${pid} belongs to another user (uid ${facts.uid})`;
    if (launch) {
      // The launcher reports the agent's PID right after spawning it, well before the agent runs a hook.
      const l = (await this.state.reportedLaunch(launch.token, 5_000)) ?? launch;
      if (l.pid !== pid) return `the hook ran under process ${pid}, not the ${label} this launch started (${l.pid ?? 'none reported'})`;
    }
    if (typeof input.cwd === 'string' && !(inside(real(input.cwd), facts.cwd) || (launch && launch.cwd && inside(real(input.cwd), real(launch.cwd))))) {
      return `the hook names directory ${input.cwd.slice(0, 500)}, not ${label}'s own (${facts.cwd})`;
    }
    return { pid, facts };
  }

  private async exitedRoute(body: any): Promise<[number, unknown]> {
    const l = await this.state.launchExited(String(body.token));
    if (!l) return [404, { error: 'unknown launch' }];
    for (const [key, st] of this.sessions) {
      if (st.launch !== l.token) continue;
      // Not awaited: the launcher (and so its user) does not wait for the host to finish the session's turn. A
      // child session's work is queued behind its parent's (whose hooks carry the child's, in order).
      void this.enqueue(st.parent ?? key, async () => {
        const now = this.sessions.get(key)!;
        const killed = this.killing.has(key) || now.fenced;
        await this.endRunning(key, killed ? (now.fenced ? 'seal' : 'signal')
          : body.signal ? (USER_SIGNALS.has(String(body.signal)) ? 'signal' : 'crashed') : Number(body.code) ? 'failed' : 'exit');
        // Shells still running when the agent went: killed with it by the host, else nobody saw their end.
        await this.finishAllJobs(key, killed ? { status: 'CANCELLED', exitCode: null } : { status: 'LOST', exitCode: null });
      });
    }
    for (const [key, st] of this.sessions) if (st.pendingEdits?.length) void this.enqueue(key, () => this.applyEdits(key));
    // What the host refused in this launch: the launcher prints it (the agent may exit 0 after a refused prompt).
    const refused = this.state.refusals.get(l.token) ?? [];
    // Its agent is gone: the launch is no longer needed (a session it ran keeps its token, which then names no
    // process: nothing to stop, nothing that holds a rewrite back).
    await this.state.forgetLaunch(l.token);
    return [200, { refused }];
  }

  /**
   * A launched agent process runs in session `key`: recorded by the gateway as an admission of the session
   * (admitWork), so a seal asks this host to close the session's admissions (CLOSE_ADMISSIONS) and waits while
   * it stops the process, even one idle between turns, whose work the seal knows nothing of. Refused after the
   * seal began: the session is fenced (its prompts refused).
   */
  protected async admitProcess(key: string, token: string) {
    const l = this.state.launches.get(token);
    const st = this.sessions.get(key);
    if (!l || !st?.sessionID || st.kind !== 'launched' || st.parent || l.admitted?.includes(key)) return;
    try {
      await this.leases.launched.call(AdmitWorkDocument, { sessionID: st.sessionID, route: `${this.agent.names.command} process ${l.pid ?? '?'}` } as any);
    } catch (e) {
      if (e instanceof GatewayError && e.tag === 'SessionSealedError') { await this.fence(key); return; }
      throw e;
    }
    await this.state.admitted(token, key);
  }

  /** The session and its children refuse every later prompt and tool call. */
  /**
   * A prompt or tool call the gateway did not admit (`e`: why): after the seal (SessionSealedError) the session is
   * fenced and it is refused; otherwise a fronted (launched) session fails closed and an observed one is let through.
   */
  protected async notAdmitted(key: string, what: 'prompt' | 'tool call', e: unknown, strict: boolean): Promise<Decision> {
    if (e instanceof GatewayError && e.tag === 'SessionSealedError') {
      await this.fence(key);
      return refuse(`session ${this.sessions.get(key)?.sessionID} is sealed by the gateway: ${what} refused`);
    }
    const why = e instanceof GatewayError ? `${e.tag}: ${String(e.fields.message ?? '')}` : String((e as Error)?.message ?? e);
    this.log(`${what} of ${key}: ${why}`);
    return strict ? refuse(`the gateway did not admit this ${what} (${why})`) : allow;
  }

  protected async fence(key: string) {
    for (const k of [key, ...this.childrenOf(key)]) {
      const st = this.sessions.get(k);
      if (st && !st.fenced) await this.persist(k, { ...st, fenced: true });
    }
  }

  // ---- jobs ----

  /** Finishes a job once (the answer recorded; a repeat after a crash is refused harmlessly by the gateway). */
  protected async finishJob(key: string, jobKey: string, end: JobEnd) {
    const j = this.sessions.get(key)?.jobs?.[jobKey];
    if (!j || j.done) return;
    await this.gw.call(FinishJobDocument, { input: { jobID: j.jobID, status: end.status, exitCode: end.exitCode ?? null } }).catch((e) => {
      if (!(e instanceof GatewayError)) throw e;
      this.log(`finish job ${j.jobID}: ${e.message}`);
    });
    const now = this.sessions.get(key)!;
    await this.persist(key, { ...now, jobs: { ...now.jobs, [jobKey]: { ...j, done: true } } });
  }

  /** Every unfinished job of the session ends so (the agent is gone: killed by the seal, or exited). */
  protected async finishAllJobs(key: string, end: JobEnd) {
    for (const [id, j] of Object.entries(this.sessions.get(key)?.jobs ?? {})) if (!j.done) await this.finishJob(key, id, end);
  }

  // ---- the gateway's commands ----

  private async command(c: Command) {
    if (!c) return;
    // Not awaited: the agent's turn runs for as long as it runs, and the commands after it (a seal) must not wait.
    if (c.kind === 'PROMPT') { void this.carryOutPrompt(c); return; }
    if (c.kind === 'COMPACT_SESSION' || c.kind === 'GENERATE') {
      return replyTo(this.gw, c, () => (c.kind === 'GENERATE' ? this.generate(c) : this.compact(c)), () => this.stopped, this.log);
    }
    try {
      const key = this.state.byGateway.get(c.sessionID);
      if (key && (c.kind === 'INTERRUPT_EXECUTION' || c.kind === 'CLOSE_ADMISSIONS' || c.kind === 'CANCEL_JOB')) {
        // Only a seal cancels jobs (domain/seal.ts), and it closes admissions: the session is fenced, then its
        // processes stopped, whether or not a turn runs (a background shell outlives its turn).
        const seal = c.reason === 'SEAL' || c.kind === 'CLOSE_ADMISSIONS' || c.kind === 'CANCEL_JOB';
        if (seal) await this.fence(key);
        await this.stopSession(key, seal ? 'seal' : 'signal');
      }
    } catch (e: any) {
      if (this.stopped) return; // not acknowledged: delivered again on the next start
      this.log(`command ${c.kind} ${c.id}: ${e?.message ?? e}`);
    }
    await acknowledge(this.gw, c, this.log);
  }

  /** The agent's hook admitted the prompt of a PROMPT command's run (its execution began with the command's ID). */
  protected promptBegan(commandID: string) { this.promptsBegun.add(commandID); }

  /**
   * PROMPT (review comments sent to the agent): the payload's text becomes the session's next prompt, run by the
   * agent resumed through its launcher (`launchPrompt`), so it is admitted at UserPromptSubmit like any prompt;
   * the execution its hook begins carries the command's ID, which links it to the command and answers the
   * gateway (no reply here on success). A run that cannot start (the session unknown, sealed, its agent already
   * running, the launch failing) or whose prompt the host refused (sealed or busy in between, the gateway
   * refusing the link) is replied with an error; the gateway then answers its sender from the session's state.
   */
  private async carryOutPrompt(c: NonNullable<Command>) {
    if (this.prompting.has(c.id)) return; // delivered again while its run goes on
    this.prompting.add(c.id);
    const label = this.agent.names.label;
    let error: string | null = null;
    try {
      const text = String((c.payload as { text?: unknown } | null)?.text ?? '');
      const key = this.state.byGateway.get(c.sessionID);
      const st = key ? this.sessions.get(key) : undefined;
      if (!text.trim()) throw new Error('the PROMPT command carries no text');
      if (!key || !st) throw new Error(`session ${c.sessionID} is not a ${label} session of this host`);
      if (st.parent) throw new Error(`a subagent's session cannot be prompted (only a ${label} session can be resumed)`);
      if (st.fenced) throw new Error(`session ${c.sessionID} is sealed: ${label} is not resumed`);
      if (st.current || this.agentRunning(key)) throw new Error(`${label} is running this session: it is resumed only while no ${label} process of it runs`);
      const run = await this.launchPrompt(key, st, text, c.id);
      const x = await run.exited;
      if (!this.promptsBegun.has(c.id)) {
        const why = x.refused.length ? `its prompt was refused: ${x.refused.join('; ')}`
          : `${label} exited (${x.signal ?? `code ${x.code}`}) before its prompt was admitted${run.output() ? `: ${run.output().slice(-500)}` : ''}`;
        throw new Error(why);
      }
    } catch (e: any) {
      if (this.stopped) return;
      error = String(e?.message ?? e).slice(0, 2_000) || 'failed';
      this.log(`PROMPT ${c.id}: ${error}`);
    } finally {
      this.prompting.delete(c.id);
      this.promptsBegun.delete(c.id);
    }
    if (error !== null) await replyError(this.gw, c, error, this.log);
  }

  /**
   * Stops the session's agent processes and waits until they are gone (killProcessTree: each with every process
   * it started); then the running turn settles INTERRUPTED and the unfinished jobs CANCELLED (LOST when no
   * process was there to stop: nobody saw their end). A seal of a launched session stops every process that ran
   * it or was started to resume it, busy or idle: background shells that outlived their turn, an agent waiting
   * for its next prompt. Otherwise (an interrupt, an observed session, a child session, which runs in its
   * parent's process) only the process running a turn or a shell is stopped. A hook being decided meanwhile is
   * refused (fenced), so nothing new starts while they stop.
   */
  protected async stopSession(key: string, why: 'seal' | 'signal') {
    const st = this.sessions.get(key);
    if (!st) return;
    const busy = !!st.current || Object.values(st.jobs ?? {}).some((j) => !j.done);
    const pids = why === 'seal' && st.kind === 'launched' && !st.parent ? await this.state.launchedProcesses(key)
      : busy ? [await this.processOf(st, key)].filter((p): p is number => p !== null) : [];
    if (pids.length) {
      this.killing.add(key);
      await Promise.all(pids.map((pid) => killProcessTree(pid, (ms) => this.waitExit(ms))));
    }
    const strays = await this.stopStrays(key, why);
    await this.enqueue(st.parent ?? key, async () => {
      for (const k of [key, ...this.childrenOf(key)]) {
        await this.endRunning(k, why);
        await this.finishAllJobs(k, pids.length || strays ? { status: 'CANCELLED', exitCode: null } : { status: 'LOST', exitCode: null });
      }
    });
  }

  /**
   * Processes of the session outside its agent's tree that the stop must end too (an agent whose shells outlive it
   * in process groups of their own, reparented to init): killed, answering whether there were any. Default: none.
   */
  protected async stopStrays(_key: string, _why: 'seal' | 'signal'): Promise<boolean> { return false; }

  protected async processOf(st: S, key: string): Promise<number | null> {
    if (st.kind === 'launched' && st.launch) return this.state.launchProcess(st.launch);
    const p = this.pids.get(key);
    return p && alive(p) ? p : null;
  }

  /** An observed session's agent is exiting (SessionEnd): its pending edits once the process is gone (bounded wait). */
  protected async afterExit(key: string) {
    const p = this.pids.get(key);
    const deadline = Date.now() + 60_000;
    while (p !== undefined && alive(p) && Date.now() < deadline && !this.stopped) await this.waitExit(200);
    await this.enqueue(key, () => this.applyEdits(key));
  }

  // ---- gateway -> transcript: corrections, retractions, the seal's first commit ----

  /** Follows the gateway session's events (from the stored cursor): corrections and retractions reach the transcript. */
  protected watch(key: string) {
    const st = this.sessions.get(key);
    if (!st?.sessionID || this.watched.has(key)) return;
    const sessionID = st.sessionID;
    this.watched.set(key, this.gw.subscribe(TranscriptEventsDocument,
      () => ({ sessionID, after: this.sessions.get(key)?.eventsCursor ?? null }), 'plugin',
      (d) => this.enqueue(key, () => this.onEvent(key, d.sessionEvents as GatewayEvent))));
  }

  private async onEvent(key: string, ev: GatewayEvent) {
    const st = this.sessions.get(key);
    if (!st || !ev || (st.eventsSeq ?? 0) >= ev.sequence) return;
    if (process.env.BRIDGE_TRACE) this.log(`event ${ev.sequence} ${ev.type} ${ev.messageID ?? ''}`);
    // The seal's first commit: fenced at once (a hook decided after this refuses), before any command arrives.
    if (ev.type === 'session.sealing' || ev.type === 'session.sealed') await this.fence(key);
    const now = this.sessions.get(key)!;
    const edit = ev.type === 'message.part_corrected' || ev.type === 'message.retracted' ? this.eventEdit(now, ev) : null;
    await this.persist(key, { ...now, ...(edit ? { pendingEdits: [...(now.pendingEdits ?? []), edit] } : {}),
      eventsSeq: Math.max(now.eventsSeq ?? 0, ev.sequence), eventsCursor: ev.cursor });
    if (this.sessions.get(key)!.pendingEdits?.length) await this.applyEdits(key);
  }

  /**
   * Whether an agent process may be reading or appending to the session's transcript now: a launch that ran the
   * session, or was started to resume it (launches.ts `mayTouch`), or the process an observed session's hooks
   * ran under. A child's transcript is written by its parent session's process.
   */
  protected agentRunning(key: string): boolean {
    const st = this.sessions.get(key);
    if (!st) return false;
    const root = st.parent ?? key;
    const cwd = this.sessions.get(root)?.cwd ?? st.cwd;
    if (this.state.launchMayTouch(root, cwd)) return true;
    const p = this.pids.get(root);
    return p !== undefined && alive(p);
  }

  /**
   * Writes the pending corrections and retractions into the transcript once no agent process of the session runs
   * (else at its exit: the launcher's report, or SessionEnd of an observed session). A process that stays open
   * keeps the old text in its memory; the next resume reads the new one.
   */
  protected async applyEdits(key: string) {
    const st = this.sessions.get(key);
    if (!st?.pendingEdits?.length || !st.transcript) return;
    if (this.agentRunning(key)) { this.log(`session ${key}: ${st.pendingEdits.length} transcript edit(s) wait for ${this.agent.names.label} to exit`); return; }
    const edits = st.pendingEdits as E[];
    try {
      const n = rewriteFileAtomically(st.transcript, (text) => this.rewrite(st, text, edits));
      if (n < edits.length) this.log(`session ${key}: ${edits.length - n} edit(s) found no message in ${st.transcript}`);
    } catch (e: any) {
      this.log(`session ${key}: transcript rewrite failed: ${e?.message ?? e}`);
      if (e?.code !== 'ENOENT') return; // kept pending: tried again at the next occasion
    }
    await this.persist(key, { ...this.sessions.get(key)!, pendingEdits: [], rewrittenAt: Date.now() });
  }
}
