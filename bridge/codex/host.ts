// OpenAI's Codex CLI as a host of the gateway, on the hooks-driven host kit (bridge/hooks-host/). What the host
// sees of Codex are its hooks (the kit's hook script, forwarded over the kit's authenticated loopback channel)
// and its rollout (rollout.ts). The host
//
// - mirrors each Codex thread as a gateway session (hostMetadata.codex.threadID), created at its first hook;
//   rollout turns the host did not see run (before it saw the thread, while it was down, or run without its
//   hooks) are imported once, in order, with honest boundaries, at its start and at the next hook (the kit's catch-up);
// - admits each turn at UserPromptSubmit (the hook names the turn ID: the execution's externalID): captures the
//   worktree (the reference host's capture), `beginExecution` with that start snapshot, the prompt appended; a
//   refusal (SessionSealedError) blocks the prompt (exit 2: Codex makes no model request);
// - admits every tool call of a fronted session at PreToolUse (admitWork; an exec_command is a SHELL job, whose
//   startJob is the admission), failing closed; PostToolUse ends a shell that exited, keeps one still running;
// - at Stop reads the turn from the rollout (prompt, reasoning summaries, assistant text, each tool call with its
//   output and exit code; one message per model response), model and usage, captures the worktree again and
//   settles the execution;
// - obeys the seal: the session is fenced (every later prompt and tool call refused), every Codex process of the
//   session is killed with every process it started (unified exec's background terminals included, so
//   `write_stdin`, which no hook gates, has nothing left to reach), the turn settles INTERRUPTED(SEAL), the jobs
//   CANCELLED; only then is the command acknowledged;
// - writes corrections and retractions into the rollout, atomically, while no Codex process of the session runs.
//
// Two registrations (the kit's, bridge/hooks-host/hooks-host.ts): threads started by `gateway codex` are served
// by a host that declares `exclusiveAdmission`; any other thread whose hooks reach the host (hooks installed in
// `$CODEX_HOME` by the user) by one that does not (its seal answers SealUnsupportedError(ADMISSION_NOT_EXCLUSIVE)).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AdmitWorkDocument, AppendMessageDocument, BackgroundJobDocument, BeginExecutionDocument, CreateSessionDocument,
  SettleExecutionDocument, StartJobDocument,
} from '../../client/index.js';
import type { Command } from '../common/host-lease.js';
import { allow, decideWithin, refuse, within, type Decision, type Ticket } from '../hooks-host/admission.js';
import { HooksHost, type EarlierTurn, type BaseSessionState, type EndWhy, type GatewayEvent, type HooksHostOptions, type JobEnd, type PromptRun } from '../hooks-host/hooks-host.js';
import type { LaunchState } from '../hooks-host/launches.js';
import { boundaryInput, inside, real, worktreeRoot } from '../hooks-host/worktree.js';
import { interruptReasonOf, jobEndWhenTurnEnds, readTurnUntil, settlementOfCalls, type KitTurnState, type TurnEnd, type TurnSettlement } from '../hooks-host/turn.js';
import { GatewayError } from '../common/gateway.js';
import { compactThread, generateText, type GeneratePayload } from './commands.js';
import { CODEX_NAMES, findCodexBinary, launchCodex, writeHookScript } from './launch.js';
import { modelCallsOf, parseRollout, promptTurnIds, rewriteRollout, shellResult, turnIds, turnOf, type CodexTurn, type ShellCall, type Locator, type RolloutEdit } from './rollout.js';

export interface CodexHostOptions extends HooksHostOptions {
  /** The models the host offers for generation (any other is ModelNotFoundError). Default: none (no generation). */
  models?: string[];
  /** The environment of the `codex` runs the host makes itself (generation). Default: its own. */
  codexEnv?: NodeJS.ProcessEnv;
  codexBin?: string;
  /** Arguments of `codex exec resume` runs that carry out PROMPT commands, before the thread (e.g. the sandbox and approval policy). */
  promptArgs?: string[];
}

interface TurnState extends KitTurnState { turnId: string }
interface JobState { jobID: string; turnId: string; background: boolean; done: boolean }

/** What the host keeps per Codex thread (the state file; survives host restarts). `transcript` is its rollout. */
export interface CodexSessionState extends BaseSessionState {
  turns: Record<string, TurnState>;
  jobs?: Record<string, JobState>;
  /** Gateway message -> where each of its parts lives in the rollout. */
  messages?: Record<string, Locator[]>;
}

export interface CodexHookInput {
  session_id?: string;
  turn_id?: string;
  transcript_path?: string;
  cwd?: string;
  hook_event_name?: string;
  prompt?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  tool_use_id?: string;
  tool_response?: unknown;
  last_assistant_message?: string | null;
  model?: string;
  [k: string]: unknown;
}


/** Where a Codex process keeps its sessions: `$CODEX_HOME`, else `$HOME/.codex`, of its own environment. */
const codexHome = (env: Map<string, string>) => env.get('CODEX_HOME') || (env.get('HOME') ? `${env.get('HOME')}/.codex` : null);
const isCodex = (argv: string[]) => path.basename(argv[0] ?? '') === 'codex';

/** How a shell the rollout shows ended is a job's end: its exit code, or CANCELLED when Codex stopped it. */
const shellEnd = (sh: ShellCall): JobEnd => (sh.killed ? { status: 'CANCELLED', exitCode: null }
  : { status: sh.exitCode === 0 ? 'COMPLETED' : 'ERROR', exitCode: sh.exitCode });

export class CodexHost extends HooksHost<CodexSessionState, RolloutEdit> {
  private readonly warmed = new Set<string>();

  constructor(readonly opts: CodexHostOptions) {
    super(opts, {
      names: CODEX_NAMES, writeScript: writeHookScript, isAgent: isCodex, configDirOf: codexHome,
      // compact: the app-server's thread/compact/start; generate: a hidden `codex exec --ephemeral -m`; prompt:
      // `codex exec resume <thread> <text>` through the launcher (launchPrompt).
      capabilities: () => ({ cancel: true, compact: true, generate: (opts.models ?? []).length > 0, prompt: true }),
      models: () => (opts.models ?? []).map((modelID) => ({ providerID: 'openai', modelID })),
    });
  }

  protected launchAnswer() { return { script: this.scriptPath }; }

  // ---- hooks ----

  protected async decideHook(event: string, input: CodexHookInput, launchToken: string, ppid: number): Promise<Decision> {
    const id = typeof input.session_id === 'string' ? input.session_id : '';
    const admitting = event === 'UserPromptSubmit' || event === 'PreToolUse';
    if (!id) return admitting && launchToken ? refuse('the hook input names no session_id') : allow;
    const launch = launchToken ? this.state.launches.get(launchToken) ?? null : null;
    if (launchToken && !launch && admitting) return refuse('unknown launch token: start Codex with `gateway codex`');
    const pid = await this.verifyHook(id, input, launch, ppid);
    if (typeof pid === 'string') {
      this.stats.unverified++;
      this.log(`${event} of thread ${id.slice(0, 100)} not taken: ${pid}`);
      return admitting && launchToken ? refuse(`the gateway's Codex host did not take this hook: ${pid}`) : allow;
    }
    const agentId = typeof input.agent_id === 'string' && input.agent_id ? input.agent_id : null;
    const ticket: Ticket = { answered: false };
    const decided = this.enqueue(id, async (): Promise<Decision> => {
      let st = this.sessions.get(id);
      if (st?.kind === 'launched' && !launch && admitting) {
        return refuse(`thread ${id} is fronted by the gateway: resume it with \`gateway codex exec resume ${id} …\``);
      }
      if (!launch) this.pids.set(id, pid);
      if (!st) {
        // A subagent's hook before its parent's (a thread the host never saw start): nothing to attach it to.
        if (agentId) return admitting && launch ? refuse(`thread ${id} is not known to the host: its subagent's work is not admitted`) : allow;
        if (event !== 'SessionStart' && event !== 'UserPromptSubmit') return allow;
        st = { kind: launch ? 'launched' : 'observed', sessionID: null, cwd: String(input.cwd ?? ''), transcript: String(input.transcript_path ?? ''),
          launch: launch?.token ?? null, fenced: false, turns: {}, current: null };
        await this.persist(id, st);
      }
      // A subagent's hooks (they name its agent_id, and its own rollout) are its own session's, a child of this one.
      if (agentId) {
        if (launch) await this.state.bindLaunch(launch.token, id);
        if (admitting && st.fenced) return refuse(`session ${st.sessionID} is sealed by the gateway: nothing more runs in it`);
        return this.subagentHook(id, agentId, event, input, ticket);
      }
      if ((typeof input.transcript_path === 'string' && input.transcript_path !== st.transcript) || (st.kind === 'launched' && launch && launch.token !== st.launch)) {
        st = { ...st, transcript: typeof input.transcript_path === 'string' ? input.transcript_path : st.transcript, ...(st.kind === 'launched' && launch ? { launch: launch.token } : {}) };
        await this.persist(id, st);
      }
      if (launch && await this.state.bindLaunch(launch.token, id) && admitting) {
        return refuse(`this Codex process started before the gateway rewrote thread ${id}'s rollout (a correction or a retraction) and may still hold the old text: exit it and run \`gateway codex exec resume ${id} …\``);
      }
      if (admitting && st.fenced) return refuse(`session ${st.sessionID} is sealed by the gateway: nothing more runs in it`);
      // Turns Codex ran in the thread while the host did not see them: imported before this hook's work.
      await this.catchUp(id, event, typeof input.turn_id === 'string' ? input.turn_id : null);
      switch (event) {
        case 'SessionStart': {
          await this.ensureSession(id, input);
          if (launch) await this.admitProcess(id, launch.token).catch((e) => this.log(`process admission of ${id}: ${e?.message ?? e}`));
          const key = `${worktreeRoot(st.cwd)}\0${id}`;
          if (!this.warmed.has(key)) { this.warmed.add(key); await this.snapshot(this.sessions.get(id)!); }
          return allow;
        }
        case 'UserPromptSubmit': return this.admitPrompt(id, input, ticket, launch);
        case 'PreToolUse': return this.admitTool(id, input, ticket);
        case 'PostToolUse': await this.toolEnded(id, input); return allow;
        case 'Stop': await this.endOfTurn(id, typeof input.turn_id === 'string' ? input.turn_id : null, input); return allow;
        case 'SessionEnd':
          if (st.kind === 'observed' && st.current) void this.enqueue(id, () => this.endRunning(id, 'exit'));
          if (st.kind === 'observed' && st.pendingEdits?.length) void this.afterExit(id);
          return allow;
        default: return allow;
      }
    });
    const known = this.sessions.get(id);
    const wait = event === 'UserPromptSubmit' || (event === 'PreToolUse' && (launch !== null || known?.kind === 'launched' || !known));
    if (admitting && !wait && known?.fenced) { decided.catch(() => {}); return refuse(`session ${known.sessionID} is sealed by the gateway: nothing more runs in it`); }
    const strict = launch !== null || known?.kind === 'launched';
    return wait ? await decideWithin(this.gw, decided, ticket, strict, event, this.opts.admissionTimeoutMs ?? 20_000, this.log) : (decided.catch(() => {}), allow);
  }

  /**
   * A subagent (`multi_agent_v1` `spawn_agent`) is a thread of its own, run by its parent's Codex process: a child
   * session (parentID) keyed by its agent ID, each of its turns an execution (trigger SYNTHETIC: its prompt is the
   * parent model's), mirrored from its own rollout at SubagentStop. Its tool calls are admitted against the parent
   * thread (whose seal stops the process they run in); the parent's seal fences and interrupts it too.
   */
  private async subagentHook(id: string, agentId: string, event: string, input: CodexHookInput, ticket: Ticket): Promise<Decision> {
    const key = `${id}:agent:${agentId}`;
    const parent = await this.ensureSession(id, { cwd: input.cwd });
    const rollout = typeof input.agent_transcript_path === 'string' ? input.agent_transcript_path
      : typeof input.transcript_path === 'string' && input.transcript_path.endsWith(`-${agentId}.jsonl`) ? input.transcript_path : null;
    let ch = this.sessions.get(key);
    if (!ch) {
      const s = await this.gw.call(CreateSessionDocument, { input: {
        title: typeof input.agent_type === 'string' ? `subagent ${input.agent_type}`.slice(0, 200) : 'subagent', parentID: parent.sessionID,
        directory: parent.cwd, hostID: this.leases[parent.kind].hostID,
        hostMetadata: { codex: { threadID: agentId, parentThreadID: id, agentType: input.agent_type ?? null, rolloutPath: rollout, launched: parent.kind === 'launched' } },
        idempotencyKey: this.idempotencyKey('session', agentId),
      } }, 'plugin');
      ch = { kind: parent.kind, sessionID: s.id, cwd: parent.cwd, transcript: rollout ?? '', launch: parent.launch, fenced: parent.fenced, turns: {}, current: null,
        parent: id };
      await this.persist(key, ch);
      this.watch(key);
    } else if ((rollout && ch.transcript !== rollout) || ch.launch !== parent.launch) {
      ch = { ...ch, transcript: rollout ?? ch.transcript, launch: parent.launch };
      await this.persist(key, ch);
    }
    switch (event) {
      case 'UserPromptSubmit': return this.admitPrompt(key, input, ticket);
      case 'PreToolUse': return this.admitTool(key, input, ticket);
      case 'PostToolUse': await this.toolEnded(key, input); return allow;
      case 'SubagentStop': await this.endOfTurn(key, typeof input.turn_id === 'string' ? input.turn_id : null, input); return allow;
      default: return allow;
    }
  }

  /**
   * The Codex process a hook ran under (its parent), checked: a process of this host's user, the launch's own for
   * a launched session, whose working directory holds the `cwd` the hook names, and whose sessions folder
   * (`$CODEX_HOME/sessions`, else `~/.codex/sessions`, of its own environment) holds the rollout it names, a
   * rollout of the thread it names. Answers its PID, or why the hook is not taken.
   */
  private async verifyHook(id: string, input: CodexHookInput, launch: LaunchState | null, ppid: number): Promise<number | string> {
    const proc = await this.hookProcess(input, launch, ppid);
    if (typeof proc === 'string') return proc;
    const { pid, facts } = proc;
    const sessionsDir = facts.configDir ? path.join(real(facts.configDir), 'sessions') : null;
    // A subagent's hooks name its own rollout (transcript_path) or, at SubagentStop, its parent's and its own.
    const agentId = typeof input.agent_id === 'string' && input.agent_id ? input.agent_id : null;
    for (const [t, owners] of [[input.transcript_path, agentId ? [id, agentId] : [id]], [input.agent_transcript_path, [agentId]]] as const) {
      if (t === undefined || t === null) continue;
      if (typeof t !== 'string' || !sessionsDir || !inside(real(t), sessionsDir) || real(t) === sessionsDir) {
        return `the hook names rollout ${String(t).slice(0, 500)}, outside Codex's own sessions (${sessionsDir ?? 'no HOME'})`;
      }
      if (!owners.some((o) => o && path.basename(t).endsWith(`-${o}.jsonl`))) return `the hook's rollout ${t.slice(0, 500)} is not thread ${id.slice(0, 100)}'s`;
    }
    return pid;
  }

  /**
   * The gateway session of a thread, created at its first hook (idempotent by key), with the turns its rollout
   * already holds (the kit's catch-up; Codex writes the live turn's `task_started` before SessionStart runs, so
   * without the hook's turn ID a last unfinished turn waits for a later look).
   */
  private async ensureSession(id: string, input: CodexHookInput): Promise<CodexSessionState> {
    const st = this.sessions.get(id)!;
    if (st.sessionID) return st;
    const s = await within(this.gw.call(CreateSessionDocument, { input: {
      title: '', directory: st.cwd || String(input.cwd ?? ''), hostID: this.leases[st.kind].hostID,
      hostMetadata: { codex: { threadID: id, rolloutPath: st.transcript, launched: st.kind === 'launched' } },
      idempotencyKey: this.idempotencyKey('session', id),
    } }, 'plugin'), this.opts.admissionTimeoutMs ?? 20_000, 'createSession');
    await this.persist(id, { ...this.sessions.get(id)!, sessionID: s.id });
    this.watch(id);
    await this.catchUp(id, 'created', typeof input.turn_id === 'string' ? input.turn_id : null);
    return this.sessions.get(id)!;
  }

  private readRollout(st: CodexSessionState) {
    let text = '';
    try { text = fs.readFileSync(st.transcript, 'utf8'); } catch { /* not there (yet) */ }
    return parseRollout(text).lines;
  }

  /** The turn IDs of the rollout's `task_started` lines (only those lines parsed). */
  protected turnStarts(text: string): string[] {
    return turnIds(parseRollout(text.split('\n').filter((l) => l.includes('"task_started"')).join('\n')).lines);
  }

  /**
   * The rollout's turns (the kit's import of what the host did not see run): each with its messages, shells, model
   * and usage: those that carry a prompt (`promptTurnIds`: not Codex's own compactions, nor a prompt a hook blocked).
   */
  protected earlierHistory(id: string): { turns: EarlierTurn[] } {
    const st = this.sessions.get(id)!;
    const lines = this.readRollout(st);
    const lease = this.leases[st.kind];
    const finish = async (turnId: string, why: string) => {
      const ts = this.sessions.get(id)!.turns[turnId];
      if (!ts || ts.settled) return;
      const t = turnOf(lines, turnId);
      await this.appendTurn(id, ts, t);
      await this.finishTurnJobs(id, t, null);
      await this.settleTurn(id, turnId, { ...this.outcome(t, this.sessions.get(id)!.fenced), ...this.usageInput(t), endCaptureError: why });
    };
    return { turns: promptTurnIds(lines).map((turnId) => ({ id: turnId, get ended() { const t = turnOf(lines, turnId); return t.end !== null || t.error !== null; },
      finish: (why: string) => finish(turnId, why), import: async (why: string) => {
      const t = turnOf(lines, turnId);
      const e = await lease.call(BeginExecutionDocument, {
        sessionID: st.sessionID!, trigger: 'PROMPT', externalID: turnId, idempotencyKey: this.idempotencyKey('turn', id, turnId), startCaptureError: why,
        ...(t.model ? { model: { providerID: 'openai', modelID: t.model } } : {}),
      });
      const ts: TurnState = { turnId, executionID: e.id, settled: false };
      await this.update(id, (now) => ({ turns: { ...now.turns, [turnId]: ts } }));
      if (t.prompt) await this.appendPrompt(id, ts, t.prompt);
      await this.appendTurn(id, ts, t);
      for (const sh of t.shells) {
        await this.startShell(id, sh.callId, turnId, sh.command);
        await this.finishJob(id, sh.callId, sh.done ? shellEnd(sh) : { status: 'LOST', exitCode: null });
      }
      await this.settleTurn(id, turnId, { ...this.outcome(t, null), ...this.usageInput(t), endCaptureError: why });
    } })) };
  }

  /** UserPromptSubmit: the turn (its ID from the hook) is an execution admitted by the gateway, or the prompt is refused. */
  private async admitPrompt(id: string, input: CodexHookInput, ticket: Ticket, launch: LaunchState | null = null): Promise<Decision> {
    const turnId = typeof input.turn_id === 'string' && input.turn_id ? input.turn_id : `noid:${Date.now()}`;
    let st = this.sessions.get(id)!;
    const strict = st.kind === 'launched';
    try {
      st = await this.ensureSession(id, input);
      if (st.launch) await this.admitProcess(id, st.launch);
      if (st.current && st.current !== turnId) await this.endRunning(id, 'superseded');
      st = this.sessions.get(id)!;
      if (st.turns[turnId]) return allow; // the same prompt's hook again: admitted already
      const start = await this.snapshot(st);
      // The prompt of a run the host started for a PROMPT command (review comments): its execution is the command's.
      const commandID = launch && !st.parent ? await this.state.takePromptCommand(launch.token, id) : null;
      const e = await this.leases[st.kind].call(BeginExecutionDocument, {
        sessionID: st.sessionID!, trigger: st.parent ? 'SYNTHETIC' : 'PROMPT', externalID: turnId, idempotencyKey: this.idempotencyKey('turn', id, turnId),
        ...(typeof input.model === 'string' ? { model: { providerID: 'openai', modelID: input.model } } : {}),
        ...boundaryInput('start', start), ...(commandID ? { commandID } : {}),
      });
      if (commandID) this.promptBegan(commandID);
      if (ticket.answered && strict) {
        await this.gw.call(SettleExecutionDocument, { input: { executionID: e.id, status: 'FAILED', error: 'the prompt was refused: the gateway answered too late' } }).catch(() => {});
        return refuse('late');
      }
      const ts: TurnState = { turnId, executionID: e.id, settled: false };
      await this.update(id, (now) => ({ current: turnId, turns: { ...now.turns, [turnId]: ts } }));
      const text = typeof input.prompt === 'string' ? input.prompt : '';
      if (text) void this.enqueue(id, () => this.appendPrompt(id, ts, text));
      return allow;
    } catch (e) {
      return this.notAdmitted(id, 'prompt', e, strict);
    }
  }

  /**
   * PROMPT: `codex exec resume <thread> <text>` through the launcher (the host's hooks in force, fail closed; its
   * UserPromptSubmit admitted like any prompt), with `promptArgs` (e.g. the sandbox and approval policy).
   */
  protected async launchPrompt(id: string, st: CodexSessionState, text: string, commandID: string): Promise<PromptRun> {
    const bin = this.opts.codexBin ?? findCodexBinary();
    if (!bin) throw new Error('the codex binary was not found (set CODEX_BIN)');
    const env: NodeJS.ProcessEnv = { ...(this.opts.codexEnv ?? process.env) };
    delete env.GATEWAY_CODEX_HIDDEN;
    delete env.GATEWAY_CODEX_LAUNCH;
    const l = await launchCodex({
      dir: this.opts.dir, args: ['exec', 'resume', ...(this.opts.promptArgs ?? []), id, text], cwd: st.cwd || os.tmpdir(),
      env, stdio: 'pipe', detached: true, bin, commandID,
    });
    let tail = '';
    const keep = (d: Buffer) => { tail = (tail + d.toString('utf8')).slice(-4_000); };
    l.child.stdout!.on('data', keep);
    l.child.stderr!.on('data', keep);
    return { exited: l.exited, output: () => tail.trim() };
  }

  private async appendPrompt(id: string, ts: TurnState, text: string) {
    const st = this.sessions.get(id)!;
    const m = await this.gw.call(AppendMessageDocument, { input: {
      sessionID: st.sessionID!, executionID: ts.executionID, role: 'USER', origin: st.parent ? 'SYNTHETIC' : 'PROMPT', externalID: ts.turnId,
      idempotencyKey: this.idempotencyKey('prompt', id, ts.turnId), parts: [{ type: 'TEXT', text }],
    } }).catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`prompt of ${ts.turnId}: ${e.message}`); return null; });
    if (m) await this.update(id, (now) => ({ messages: { ...now.messages, [m.id]: [{ kind: 'prompt', turnId: ts.turnId }] } }));
  }

  private async startShell(id: string, callId: string, turnId: string, command: string) {
    const st = this.sessions.get(id)!;
    if (st.jobs?.[callId]) return;
    const j = await this.leases[st.kind].call(StartJobDocument, {
      sessionID: st.sessionID!, executionID: st.turns[turnId]?.executionID ?? null, kind: 'SHELL', background: false,
      title: null, command: command.slice(0, 10_000), idempotencyKey: this.idempotencyKey('job', id, callId),
    });
    await this.update(id, (now) => ({ jobs: { ...now.jobs, [callId]: { jobID: j.id, turnId, background: false, done: false } } }));
  }

  /**
   * PreToolUse: in a fronted session every tool call is admitted by the gateway, failing closed. A shell command
   * (`tool_name` Bash: exec_command) is a SHELL job, whose startJob is itself the admission (refused after a seal).
   */
  private async admitTool(id: string, input: CodexHookInput, ticket: Ticket): Promise<Decision> {
    const st = this.sessions.get(id)!;
    const strict = st.kind === 'launched';
    if (!st.sessionID) return strict ? refuse('the session is not known to the gateway yet') : allow;
    try {
      const callId = typeof input.tool_use_id === 'string' ? input.tool_use_id : null;
      const shell = input.tool_name === 'Bash' && callId && !st.jobs?.[callId];
      // A shell's startJob is its admission; a subagent's calls are admitted against its parent thread (whose
      // seal stops the process they run in).
      const admitIn = st.parent ? this.sessions.get(st.parent)?.sessionID ?? st.sessionID : st.sessionID;
      if (strict && (!shell || st.parent)) await this.leases.launched.call(AdmitWorkDocument, { sessionID: admitIn, route: `codex PreToolUse ${String(input.tool_name ?? '?')}`.slice(0, 400) });
      if (shell && callId) {
        const cmd = (input.tool_input ?? {}).command;
        await this.startShell(id, callId, String(input.turn_id ?? st.current ?? ''), typeof cmd === 'string' ? cmd : JSON.stringify(input.tool_input ?? {}));
        if (ticket.answered && strict) { await this.finishJob(id, callId, { status: 'CANCELLED', exitCode: null }); return refuse('late'); }
      }
      return allow;
    } catch (e) {
      return this.notAdmitted(id, 'tool call', e, strict);
    }
  }

  /** PostToolUse: a shell that exited ends (its exit code from the output); one still running is a background job now. */
  private async toolEnded(id: string, input: CodexHookInput) {
    const callId = typeof input.tool_use_id === 'string' ? input.tool_use_id : '';
    const j = this.sessions.get(id)?.jobs?.[callId];
    if (!j || j.done) return;
    const out = typeof input.tool_response === 'string' ? input.tool_response : JSON.stringify(input.tool_response ?? '');
    const r = shellResult(out);
    if (r.running) {
      await this.toBackground(id, callId);
      return;
    }
    if (r.exitCode !== null) await this.finishJob(id, callId, { status: r.exitCode === 0 ? 'COMPLETED' : 'ERROR', exitCode: r.exitCode });
  }

  /**
   * The turn's shells: those the rollout shows ended end so; the others as `otherwise` (null: left running, and a
   * shell Codex answered "still running" for is a background job from then on: it outlives its turn's answer).
   */
  private async finishTurnJobs(id: string, t: CodexTurn, otherwise: JobEnd | null) {
    const byCall = new Map(t.shells.map((s) => [s.callId, s]));
    for (const [callId, j] of Object.entries(this.sessions.get(id)?.jobs ?? {})) {
      if (j.done || j.turnId !== t.turnId) continue;
      const s = byCall.get(callId);
      if (s?.done) await this.finishJob(id, callId, shellEnd(s));
      else if (otherwise) await this.finishJob(id, callId, otherwise);
      else if (s?.running && !j.background) await this.toBackground(id, callId);
    }
  }

  /**
   * Shells still unfinished whose end the rollout now shows (any turn of the thread): Codex writes the end of a
   * terminal that outlived its turn's answer when it ends it, with the turn or at its exit, after the Stop hook.
   */
  private async finishSeenShells(id: string) {
    const st = this.sessions.get(id);
    const open = Object.values(st?.jobs ?? {}).filter((j) => !j.done);
    if (!st || !open.length || !st.transcript) return;
    const lines = this.readRollout(st);
    for (const turnId of new Set(open.map((j) => j.turnId))) await this.finishTurnJobs(id, turnOf(lines, turnId), null);
  }

  private async toBackground(id: string, callId: string) {
    const j = this.sessions.get(id)?.jobs?.[callId];
    if (!j) return;
    await this.gw.call(BackgroundJobDocument, { input: { jobID: j.jobID } }).catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`background ${j.jobID}: ${e.message}`); });
    await this.update(id, (now) => ({ jobs: { ...now.jobs, [callId]: { ...j, background: true } } }));
  }

  /** Reads the turn from the rollout; waits (bounded) until it holds the turn's last assistant message. */
  private readTurn(st: CodexSessionState, turnId: string, lastText: string | null, waitMs: number): Promise<CodexTurn> {
    return readTurnUntil(st.transcript, () => turnOf(this.readRollout(st), turnId), (t) => {
      const texts = t.steps.flatMap((s) => s.parts).filter((p) => p.type === 'TEXT').map((p) => p.text ?? '');
      return t.end !== null || t.error !== null || (lastText !== null ? (texts.at(-1) ?? '').trim() === lastText.trim() : false);
    }, waitMs);
  }

  /** One ASSISTANT message per model response (idempotent by key), with where each part lives in the rollout. */
  private async appendTurn(id: string, ts: TurnState, t: CodexTurn) {
    const st = this.sessions.get(id)!;
    for (const s of t.steps) {
      if (!s.parts.length) continue;
      const m = await this.gw.call(AppendMessageDocument, { input: {
        sessionID: st.sessionID!, executionID: ts.executionID, role: 'ASSISTANT', origin: 'MODEL', externalID: s.id,
        idempotencyKey: this.idempotencyKey('message', id, ts.turnId, s.id), parts: s.parts,
      } }).catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`message ${s.id}: ${e.message}`); return null; });
      if (m) await this.update(id, (now) => ({ messages: { ...now.messages, [m.id]: s.locators } }));
    }
  }

  private outcome(t: CodexTurn, fenced: boolean | null): Pick<TurnSettlement, 'status' | 'interruptReason' | 'error' | 'errorName'> {
    if (fenced) return { status: 'INTERRUPTED', interruptReason: 'SEAL' };
    if (t.error) return { status: 'FAILED', error: t.error.slice(0, 4_000), errorName: 'APIError' };
    if (t.end?.kind === 'aborted') return { status: 'INTERRUPTED', interruptReason: 'USER' };
    if (t.end?.kind === 'complete') return { status: 'SUCCEEDED' };
    return { status: 'INTERRUPTED', interruptReason: 'USER' };
  }

  private usageInput(t: CodexTurn) {
    return {
      ...(t.usage ? { usage: t.usage } : {}),
      ...(t.model ? { model: { providerID: 'openai', modelID: t.model } } : {}),
      ...(t.end ? { finishReason: t.end.kind === 'complete' ? 'stop' : t.end.reason } : {}),
      // Each model response with its own usage and the rollout's times (the kit's settlement of its model calls).
      ...(t.calls.length ? { modelCalls: settlementOfCalls(modelCallsOf(t)).modelCalls } : {}),
    };
  }

  /**
   * The turn as it ended (Stop, SubagentStop; or `why` it ended without them: Codex exited or was killed, or a new
   * prompt came): its messages, its shells' ends, and its settlement: what Codex wrote of its end (complete,
   * aborted, the model API's error), INTERRUPTED otherwise.
   */
  protected async turnOutcome(id: string, turnId: string, end: TurnEnd): Promise<() => TurnSettlement> {
    const st = this.sessions.get(id)!;
    const ts = st.turns[turnId];
    const last = 'stop' in end && typeof end.stop.last_assistant_message === 'string' ? end.stop.last_assistant_message : null;
    const t = await this.readTurn(st, turnId, last, 'stop' in end ? 5_000 : 0);
    await this.appendTurn(id, ts, t);
    await this.finishTurnJobs(id, t, 'why' in end ? jobEndWhenTurnEnds(end.why) : null);
    if ('stop' in end) {
      const ended = t.end ?? { kind: 'complete' as const, lastText: last };
      // Fenced as it is once the end boundary is captured (a seal during the capture interrupts the turn).
      return () => ({ ...this.outcome({ ...t, end: ended }, this.sessions.get(id)!.fenced), ...this.usageInput({ ...t, end: ended }) });
    }
    const why = end.why;
    // Codex wrote why the turn ended: aborted (Ctrl-C: it exits 1 after `turn_aborted`), or the model API's error.
    const aborted = t.end?.kind === 'aborted';
    const failed = !st.fenced && !aborted && (why === 'failed' || t.error !== null);
    const settlement: TurnSettlement = {
      ...(failed ? { status: 'FAILED', error: t.error ?? 'Codex exited with an error before the turn ended', errorName: t.error ? 'APIError' : 'HostExit' }
        : { status: 'INTERRUPTED', interruptReason: aborted && !st.fenced && why !== 'seal' ? 'USER' : interruptReasonOf(st.fenced, why) }),
      ...this.usageInput(t),
    };
    return () => settlement;
  }

  /** The running turn ended without Stop: Codex exited (or was stopped): the ends it wrote of earlier turns' terminals first, then the turn. */
  protected async endRunning(id: string, why: EndWhy) {
    await this.finishSeenShells(id);
    await super.endRunning(id, why);
  }

  // ---- the gateway's commands ----

  /** COMPACT_SESSION: Codex's own compaction (bridge/codex/commands.ts), while no Codex process of the thread runs. */
  protected async compact(c: Command): Promise<Record<string, unknown>> {
    const id = this.state.byGateway.get(c.sessionID);
    const st = id ? this.sessions.get(id) : undefined;
    if (!id || !st) throw new Error(`session ${c.sessionID} is not a Codex thread of this host`);
    if (st.parent) throw new Error('a subagent\'s thread is compacted with its parent\'s process only: not by the host');
    if (this.agentRunning(id) || st.current) throw new Error('Codex is running this thread: compaction waits until it is idle');
    return compactThread(this.opts, id, st);
  }

  /** GENERATE: a hidden `codex exec --ephemeral` completion (bridge/codex/commands.ts). */
  protected generate(c: Command): Promise<Record<string, unknown>> {
    return generateText(this.opts, c.payload as GeneratePayload);
  }

  // ---- gateway -> rollout: corrections and retractions ----

  protected eventEdit(st: CodexSessionState, ev: GatewayEvent): RolloutEdit | null {
    const locators = ev.messageID ? st.messages?.[ev.messageID] : undefined;
    if (!locators) return null;
    if (ev.type === 'message.retracted') return { kind: 'retract', at: locators, placeholder: String(ev.message?.parts?.[0]?.text ?? '[retracted]') };
    if (!ev.partID) return null;
    const sorted = [...(ev.message?.parts ?? [])].sort((a: any, b: any) => (a.index ?? 0) - (b.index ?? 0));
    const i = sorted.findIndex((p: any) => p.id === ev.partID);
    const text = sorted[i]?.text;
    return typeof text === 'string' && i >= 0 && locators[i] ? { kind: 'correct', at: locators[i], text } : null;
  }

  protected rewrite(_st: CodexSessionState, text: string, edits: RolloutEdit[]) { return rewriteRollout(text, edits); }
}
