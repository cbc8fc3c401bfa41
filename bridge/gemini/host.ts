// Google's Gemini CLI as a host of the gateway, on the hooks-driven host kit (bridge/hooks-host/). What the host
// sees of Gemini CLI are its hooks (the kit's hook script, put into its settings by the launcher) and its chat
// history (chat.ts). The host
//
// - mirrors each Gemini CLI session as a gateway session (hostMetadata.gemini.sessionID), created at its first
//   hook; turns the history holds that the host did not see (Gemini CLI run without the hooks, or the host down)
//   are imported at every SessionStart, once, with honest boundaries;
// - admits each turn at BeforeAgent: captures the worktree, `beginExecution` with that start snapshot, the prompt
//   appended; a refusal blocks the prompt (Gemini CLI makes no model request and records nothing);
// - admits every tool call of a fronted session at BeforeTool (a run_shell_command is a SHELL job, whose startJob
//   is the admission), failing closed; AfterTool ends a shell (its exit code from the result) or makes it a
//   background job (`is_background`);
// - at AfterAgent reads the turn from the history (the prompt, thoughts, text, each tool call with its result,
//   one message per model response, model and usage), captures the worktree again and settles the execution;
// - obeys the seal: the session is fenced, its Gemini CLI processes killed with their trees, and every process
//   that carries one of the session's launch tokens (shells run detached in process groups of their own, which
//   outlive SIGINT and Gemini CLI itself), the turn settles INTERRUPTED(SEAL), the jobs CANCELLED;
// - writes corrections and retractions into the history as appended records with the message's ID (Gemini CLI's
//   loader puts them in place of the message), while no Gemini CLI process of the session runs.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AdmitWorkDocument, AppendMessageDocument, BackgroundJobDocument, BeginExecutionDocument, CreateSessionDocument,
  SettleExecutionDocument, StartJobDocument, type PartInput, type SettleExecutionInput,
} from '../../client/index.js';
import type { Command } from '../common/host-lease.js';
import { GatewayError } from '../common/gateway.js';
import { allow, decideWithin, refuse, within, type Decision, type Ticket } from '../hooks-host/admission.js';
import { runHidden } from '../hooks-host/host-commands.js';
import { HooksHost, type BaseSessionState, type EarlierTurn, type GatewayEvent, type HooksHostOptions, type JobEnd, type PromptRun } from '../hooks-host/hooks-host.js';
import { interruptReasonOf, settlementOfCalls, type KitTurnState, type TurnEnd, type TurnSettlement } from '../hooks-host/turn.js';
import type { LaunchState } from '../hooks-host/launches.js';
import { alive, killMarked, processesWithEnv } from '../hooks-host/processes.js';
import { boundaryInput, inside, real, worktreeRoot } from '../hooks-host/worktree.js';
import { appendedEdits, isObject, loadConversation, shellResult, turnsOf, type ChatEdit, type GeminiTurn, type Locator, type ShellCall } from './chat.js';
import { findGeminiBinary, GEMINI_ADMITTING, GEMINI_NAMES, geminiDir, HIDDEN_VAR, isGemini, launchGemini, LAUNCH_VAR, withHooks, writeHookScript } from './launch.js';

export interface GeminiHostOptions extends HooksHostOptions {
  /** The models the host offers for generation (any other is ModelNotFoundError). Default: none (no generation). */
  models?: string[];
  /** The environment of the Gemini CLI runs the host makes itself (compaction, generation, PROMPT commands). Default: its own. */
  geminiEnv?: NodeJS.ProcessEnv;
  geminiBin?: string;
  /** Arguments of the runs that carry out PROMPT commands, before `--resume <id> -p <text>` (e.g. `--yolo -m <model>`). */
  promptArgs?: string[];
}

interface TurnState extends KitTurnState { turnId: string; prompt: string; startedAt: number; promptMessage?: string | null }
/** A shell job: `n`, its place among its turn's shells (hooks carry no call ID: the history's calls are matched in order). */
interface JobState { jobID: string; turnId: string; n: number; command: string; done: boolean; background: boolean; returned?: boolean; pids?: number[] }

export interface GeminiSessionState extends BaseSessionState {
  turns: Record<string, TurnState>;
  jobs?: Record<string, JobState>;
  /** Gateway message -> where each of its parts lives in the history. */
  messages?: Record<string, Locator[]>;
  /** The history's prompt message ID -> the turn the host mirrored it as. */
  prompts?: Record<string, string>;
  /** The launch tokens that ran the session: every process they started carries one (the seal kills them). */
  markers?: string[];
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** How a shell's result ended its job. */
const shellEnd = (s: { exitCode: number | null; signal: string | null }): JobEnd => (s.exitCode === null ? { status: 'CANCELLED', exitCode: null }
  : { status: s.exitCode === 0 ? 'COMPLETED' : 'ERROR', exitCode: s.exitCode });

export class GeminiHost extends HooksHost<GeminiSessionState, ChatEdit> {
  private readonly warmed = new Set<string>();
  /** The host's own compaction runs: launch token -> when their compressed history shows (see `compact`). */
  private readonly compactions = new Map<string, () => Promise<void>>();

  constructor(readonly opts: GeminiHostOptions) {
    super(opts, {
      names: GEMINI_NAMES, writeScript: writeHookScript, isAgent: isGemini,
      configDirOf: (env) => geminiDir({ get: (k) => env.get(k) }),
      admitting: { prompt: GEMINI_ADMITTING[0], tool: GEMINI_ADMITTING[1] },
      capabilities: () => ({ cancel: true, compact: true, generate: (opts.models ?? []).length > 0, prompt: true }),
      models: () => (opts.models ?? []).map((modelID) => ({ providerID: 'google', modelID })),
    });
  }

  protected launchAnswer() { return { script: this.scriptPath }; }

  // ---- hooks ----

  protected async decideHook(event: string, input: Record<string, unknown>, launchToken: string, ppid: number): Promise<Decision> {
    const id = text(input.session_id) ?? '';
    const admitting = event === 'BeforeAgent' || event === 'BeforeTool';
    const compaction = this.compactions.get(launchToken);
    if (compaction) {
      if (event === 'BeforeAgent') await compaction();
      return admitting ? refuse('a compaction run of the gateway\'s host: nothing else runs in it') : allow;
    }
    if (!id) return admitting && launchToken ? refuse('the hook input names no session_id') : allow;
    const launch = launchToken ? this.state.launches.get(launchToken) ?? null : null;
    if (launchToken && !launch && admitting) return refuse('unknown launch token: start Gemini CLI with `gateway gemini`');
    const pid = await this.verifyHook(id, input, launch, ppid);
    if (typeof pid === 'string') {
      this.stats.unverified++;
      this.log(`${event} of session ${id.slice(0, 100)} not taken: ${pid}`);
      return admitting && launchToken ? refuse(`the gateway's Gemini CLI host did not take this hook: ${pid}`) : allow;
    }
    const ticket: Ticket = { answered: false };
    const decided = this.enqueue(id, async (): Promise<Decision> => {
      let st = this.sessions.get(id);
      if (st?.kind === 'launched' && !launch && admitting) return refuse(`session ${id} is fronted by the gateway: resume it with \`gateway gemini --resume ${id} …\``);
      if (!launch) this.pids.set(id, pid);
      if (!st) {
        if (event !== 'SessionStart' && event !== 'BeforeAgent') return allow;
        st = { kind: launch ? 'launched' : 'observed', sessionID: null, cwd: text(input.cwd) ?? '', transcript: text(input.transcript_path) ?? '',
          launch: launch?.token ?? null, fenced: false, turns: {}, current: null };
        await this.persist(id, st);
      }
      // A resume in a later minute than the session began names a new, empty file at SessionStart (Gemini CLI
      // 0.61.0 makes one, then goes on in the session's own file, which the later hooks name): not taken there.
      const transcript = event === 'SessionStart' && st.transcript && fs.existsSync(st.transcript) ? null : text(input.transcript_path);
      if ((transcript && transcript !== st.transcript) || (launch && (launch.token !== st.launch || !st.markers?.includes(launch.token)))) {
        st = { ...st, transcript: transcript ?? st.transcript, ...(launch ? { launch: launch.token, markers: [...new Set([...(st.markers ?? []), launch.token])].slice(-50) } : {}) };
        await this.persist(id, st);
      }
      if (launch && await this.state.bindLaunch(launch.token, id) && admitting) {
        return refuse(`this Gemini CLI process started before the gateway rewrote session ${id}'s history (a correction or a retraction): exit it and run \`gateway gemini --resume ${id} …\``);
      }
      if (admitting && st.fenced) return refuse(`session ${st.sessionID} is sealed by the gateway: nothing more runs in it`);
      // Turns Gemini CLI ran in the session while the host did not see them: imported before this hook's work.
      await this.catchUp(id, event, null);
      switch (event) {
        case 'SessionStart': {
          await this.ensureSession(id, input);
          if (launch) await this.admitProcess(id, launch.token).catch((e) => this.log(`process admission of ${id}: ${e?.message ?? e}`));
          const key = `${worktreeRoot(st.cwd)}\0${id}`;
          if (!this.warmed.has(key)) { this.warmed.add(key); await this.snapshot(this.sessions.get(id)!); }
          return allow;
        }
        case 'BeforeAgent': return this.admitPrompt(id, input, ticket, launch);
        case 'BeforeTool': return this.admitTool(id, input, ticket);
        case 'AfterTool': await this.toolEnded(id, input); return allow;
        case 'AfterAgent': await this.endOfTurn(id, null, input); return allow;
        case 'SessionEnd':
          if (st.kind === 'observed' && st.current) void this.enqueue(id, () => this.endRunning(id, 'exit'));
          if (st.kind === 'observed' && st.pendingEdits?.length) void this.afterExit(id);
          return allow;
        default: return allow;
      }
    });
    const known = this.sessions.get(id);
    const strict = launch !== null || known?.kind === 'launched';
    if (!admitting) return (decided.catch(() => {}), allow);
    return decideWithin(this.gw, decided, ticket, strict, event, this.opts.admissionTimeoutMs ?? 20_000, this.log, event === 'BeforeTool' ? 'tool call' : 'prompt');
  }

  /**
   * The Gemini CLI process a hook ran under, checked (the kit's hookProcess), and the history it names: a
   * `session-…-<first 8 characters of the session ID>.jsonl` under that process's own `~/.gemini/tmp`.
   */
  private async verifyHook(id: string, input: Record<string, unknown>, launch: LaunchState | null, ppid: number): Promise<number | string> {
    const proc = await this.hookProcess(input, launch, ppid);
    if (typeof proc === 'string') return proc;
    const t = input.transcript_path;
    if (t === undefined || t === null) return proc.pid;
    const tmp = proc.facts.configDir ? path.join(real(proc.facts.configDir), 'tmp') : null;
    if (typeof t !== 'string' || !tmp || !inside(real(t), tmp) || real(t) === tmp) return `the hook names history ${String(t).slice(0, 500)}, outside Gemini CLI's own (${tmp ?? 'no HOME'})`;
    if (!/^session-.*\.jsonl$/.test(path.basename(t)) || !path.basename(t).endsWith(`-${id.slice(0, 8)}.jsonl`)) return `the hook's history ${t.slice(0, 500)} is not session ${id.slice(0, 100)}'s`;
    return proc.pid;
  }

  /** The gateway session of a Gemini CLI session, created at its first hook (idempotent by key). */
  private async ensureSession(id: string, input: Record<string, unknown>): Promise<GeminiSessionState> {
    const st = this.sessions.get(id)!;
    if (st.sessionID) return st;
    const s = await within(this.gw.call(CreateSessionDocument, { input: {
      title: '', directory: st.cwd || (text(input.cwd) ?? ''), hostID: this.leases[st.kind].hostID,
      hostMetadata: { gemini: { sessionID: id, historyPath: st.transcript, launched: st.kind === 'launched' } },
      idempotencyKey: this.idempotencyKey('session', id),
    } }, 'plugin'), this.opts.admissionTimeoutMs ?? 20_000, 'createSession');
    await this.persist(id, { ...this.sessions.get(id)!, sessionID: s.id });
    this.watch(id);
    await this.catchUp(id, 'created', null);
    return this.sessions.get(id)!;
  }

  private turns(st: GeminiSessionState): GeminiTurn[] {
    let t = '';
    try { t = fs.readFileSync(st.transcript, 'utf8'); } catch { /* not there (yet) */ }
    return turnsOf(loadConversation(t));
  }

  /** The history's turns (the kit's import of earlier history); a turn the host mirrored live is named by its turn. */
  protected earlierHistory(id: string): { turns: EarlierTurn[] } {
    const st = this.sessions.get(id)!;
    const lease = this.leases[st.kind];
    // The running turn, once its prompt is in the history, is named by its turn (its own hooks mirror it).
    const running = st.current && st.turns[st.current] ? this.liveTurn(st, st.turns[st.current])?.promptId : null;
    const named = (promptId: string) => st.prompts?.[promptId] ?? (promptId === running && st.current ? st.current : promptId);
    // The running turn the host admitted, ended while its AfterAgent found no host: settled from the history.
    const finish = async (t: GeminiTurn, why: string) => {
      const ts = st.current ? this.sessions.get(id)!.turns[st.current] : undefined;
      if (!ts || ts.settled) return;
      await this.appendTurn(id, ts, t);
      await this.finishTurnJobs(id, ts.turnId, t, null);
      await this.settleTurn(id, ts.turnId, { ...this.outcome(t, this.sessions.get(id)!.fenced), ...this.usageInput(t), endCaptureError: why });
    };
    return { turns: this.turns(st).map((t) => ({ id: named(t.promptId), ended: t.answered, finish: (why: string) => finish(t, why), import: async (why: string) => {
      const e = await lease.call(BeginExecutionDocument, {
        sessionID: st.sessionID!, trigger: 'PROMPT', externalID: t.promptId, idempotencyKey: this.idempotencyKey('turn', id, t.promptId), startCaptureError: why,
        ...(t.model ? { model: { providerID: 'google', modelID: t.model } } : {}),
      });
      const ts: TurnState = { turnId: t.promptId, executionID: e.id, settled: false, prompt: t.prompt, startedAt: Date.now() };
      await this.update(id, (now) => ({ turns: { ...now.turns, [t.promptId]: ts }, prompts: { ...now.prompts, [t.promptId]: t.promptId } }));
      await this.appendPrompt(id, ts, t.prompt);
      await this.appendTurn(id, ts, t);
      for (const [n, sh] of t.shells.entries()) {
        const key = await this.startShell(id, t.promptId, n, sh.command);
        await this.finishJob(id, key, sh.background ? { status: 'LOST', exitCode: null } : shellEnd(sh));
      }
      await this.settleTurn(id, t.promptId, { ...this.outcome(t, null), ...this.usageInput(t), endCaptureError: why });
    } })) };
  }

  /** BeforeAgent: the turn is an execution admitted by the gateway, or the prompt is refused (nothing recorded). */
  private async admitPrompt(id: string, input: Record<string, unknown>, ticket: Ticket, launch: LaunchState | null): Promise<Decision> {
    const turnId = randomUUID();
    let st = this.sessions.get(id)!;
    const strict = st.kind === 'launched';
    try {
      st = await this.ensureSession(id, input);
      if (st.launch) await this.admitProcess(id, st.launch);
      if (st.current) await this.endRunning(id, 'superseded');
      st = this.sessions.get(id)!;
      const start = await this.snapshot(st);
      const commandID = launch ? await this.state.takePromptCommand(launch.token, id) : null;
      const e = await this.leases[st.kind].call(BeginExecutionDocument, {
        sessionID: st.sessionID!, trigger: 'PROMPT', externalID: turnId, idempotencyKey: this.idempotencyKey('turn', id, turnId),
        ...boundaryInput('start', start), ...(commandID ? { commandID } : {}),
      });
      if (commandID) this.promptBegan(commandID);
      if (ticket.answered && strict) {
        await this.gw.call(SettleExecutionDocument, { input: { executionID: e.id, status: 'FAILED', error: 'the prompt was refused: the gateway answered too late' } }).catch(() => {});
        return refuse('late');
      }
      const prompt = text(input.prompt) ?? '';
      const ts: TurnState = { turnId, executionID: e.id, settled: false, prompt, startedAt: Date.now() };
      await this.update(id, (now) => ({ current: turnId, turns: { ...now.turns, [turnId]: ts } }));
      if (prompt) void this.enqueue(id, () => this.appendPrompt(id, ts, prompt));
      return allow;
    } catch (e: unknown) {
      if (e instanceof GatewayError && e.tag === 'SessionSealedError') {
        await this.fence(id);
        return refuse(`session ${st.sessionID} is sealed by the gateway: prompt refused`);
      }
      const why = e instanceof GatewayError ? `${e.tag}: ${String(e.fields.message ?? '')}` : e instanceof Error ? e.message : String(e);
      this.log(`prompt of ${id}: ${why}`);
      return strict ? refuse(`the gateway did not admit this prompt (${why})`) : allow;
    }
  }

  /** PROMPT: `gemini --resume <id> -p <text>` through the launcher (its BeforeAgent admitted like any prompt). */
  protected async launchPrompt(id: string, st: GeminiSessionState, prompt: string, commandID: string): Promise<PromptRun> {
    const env: NodeJS.ProcessEnv = { ...(this.opts.geminiEnv ?? process.env) };
    const l = await launchGemini({ dir: this.opts.dir, args: [...(this.opts.promptArgs ?? []), '--resume', id, '-p', prompt], cwd: st.cwd || os.tmpdir(),
      env, stdio: 'pipe', detached: true, bin: this.opts.geminiBin, commandID });
    let tail = '';
    const keep = (d: Buffer) => { tail = (tail + d.toString('utf8')).slice(-4_000); };
    l.child.stdout!.on('data', keep);
    l.child.stderr!.on('data', keep);
    return { exited: l.exited, output: () => tail.trim() };
  }

  private async appendPrompt(id: string, ts: TurnState, prompt: string) {
    const st = this.sessions.get(id)!;
    const m = await this.gw.call(AppendMessageDocument, { input: {
      sessionID: st.sessionID!, executionID: ts.executionID, role: 'USER', origin: 'PROMPT', externalID: ts.turnId,
      idempotencyKey: this.idempotencyKey('prompt', id, ts.turnId), parts: [{ type: 'TEXT', text: prompt }],
    } }).catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`prompt of ${ts.turnId}: ${e.message}`); return null; });
    if (!m) return;
    await this.update(id, (now) => {
      const t = now.turns[ts.turnId];
      // An imported turn's prompt is its history message already; a live one's is found when the turn ends.
      const located = now.prompts?.[ts.turnId] === ts.turnId ? { messages: { ...now.messages, [m.id]: [{ kind: 'text' as const, messageId: ts.turnId }] } } : {};
      return { ...located, turns: { ...now.turns, [ts.turnId]: { ...(t ?? ts), promptMessage: m.id } } };
    });
  }

  private async startShell(id: string, turnId: string, n: number, command: string): Promise<string> {
    const st = this.sessions.get(id)!;
    const key = `${turnId}#${n}`;
    if (st.jobs?.[key]) return key;
    const j = await this.leases[st.kind].call(StartJobDocument, {
      sessionID: st.sessionID!, executionID: st.turns[turnId]?.executionID ?? null, kind: 'SHELL', background: false,
      title: null, command: command.slice(0, 10_000), idempotencyKey: this.idempotencyKey('job', id, key),
    });
    await this.update(id, (now) => ({ jobs: { ...now.jobs, [key]: { jobID: j.id, turnId, n, command, background: false, done: false } } }));
    return key;
  }

  /** BeforeTool: in a fronted session every tool call is admitted by the gateway, failing closed (a shell's startJob is its admission). */
  private async admitTool(id: string, input: Record<string, unknown>, ticket: Ticket): Promise<Decision> {
    const st = this.sessions.get(id)!;
    const strict = st.kind === 'launched';
    if (!st.sessionID) return strict ? refuse('the session is not known to the gateway yet') : allow;
    try {
      const turnId = st.current;
      const shell = input.tool_name === 'run_shell_command' && turnId;
      if (strict && !shell) await this.leases.launched.call(AdmitWorkDocument, { sessionID: st.sessionID, route: `gemini BeforeTool ${String(input.tool_name ?? '?')}`.slice(0, 400) });
      if (shell) {
        const args = isObject(input.tool_input) ? input.tool_input : {};
        const n = Object.values(st.jobs ?? {}).filter((j) => j.turnId === turnId).length;
        const key = await this.startShell(id, turnId, n, typeof args.command === 'string' ? args.command : JSON.stringify(args));
        if (ticket.answered && strict) { await this.finishJob(id, key, { status: 'CANCELLED', exitCode: null }); return refuse('late'); }
      }
      return allow;
    } catch (e: unknown) {
      if (e instanceof GatewayError && e.tag === 'SessionSealedError') {
        await this.fence(id);
        return refuse(`session ${st.sessionID} is sealed by the gateway: tool call refused`);
      }
      const why = e instanceof GatewayError ? `${e.tag}: ${String(e.fields.message ?? '')}` : e instanceof Error ? e.message : String(e);
      this.log(`tool call of ${id}: ${why}`);
      return strict ? refuse(`the gateway did not admit this tool call (${why})`) : allow;
    }
  }

  /** AfterTool of a shell: the first of the turn's shells with that command not returned yet ends (or runs on in the background). */
  private async toolEnded(id: string, input: Record<string, unknown>) {
    const st = this.sessions.get(id);
    if (!st?.current || input.tool_name !== 'run_shell_command') return;
    const args = isObject(input.tool_input) ? input.tool_input : {};
    const entry = Object.entries(st.jobs ?? {}).filter(([, j]) => j.turnId === st.current && !j.returned && !j.done && j.command === args.command)
      .sort(([, a], [, b]) => a.n - b.n)[0];
    if (!entry) return;
    const [key, j] = entry;
    const out = isObject(input.tool_response) ? text(input.tool_response.llmContent) : null;
    const r = shellResult(out);
    if (r.background) await this.toBackground(id, key, r.pids);
    else await this.finishJob(id, key, shellEnd(r));
    await this.update(id, (now) => ({ jobs: { ...now.jobs, [key]: { ...(now.jobs?.[key] ?? j), returned: true } } }));
  }

  private async toBackground(id: string, key: string, pids: number[]) {
    const j = this.sessions.get(id)?.jobs?.[key];
    if (!j || j.background) return;
    await this.gw.call(BackgroundJobDocument, { input: { jobID: j.jobID } }).catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`background ${j.jobID}: ${e.message}`); });
    await this.update(id, (now) => ({ jobs: { ...now.jobs, [key]: { ...j, background: true, pids } } }));
  }

  /**
   * The turn's shells as the history shows them (matched to the jobs in order); those it does not show end as
   * `otherwise` (null: left as they are).
   */
  private async finishTurnJobs(id: string, turnId: string, t: GeminiTurn | null, otherwise: JobEnd | null) {
    for (const [key, j] of Object.entries(this.sessions.get(id)?.jobs ?? {})) {
      if (j.done || j.turnId !== turnId) continue;
      const sh: ShellCall | undefined = t?.shells[j.n];
      if (sh?.background) { await this.toBackground(id, key, sh.pids); continue; }
      if (sh) await this.finishJob(id, key, shellEnd(sh));
      else if (otherwise) await this.finishJob(id, key, otherwise);
    }
  }

  /** Whether a process the job may run in is still there: its PIDs, or any carrying one of the session's launch tokens. */
  private jobAlive(st: GeminiSessionState | undefined, j: JobState): boolean {
    return (j.pids ?? []).some(alive) || (st?.markers ?? []).some((m) => processesWithEnv(LAUNCH_VAR, m).length > 0);
  }

  /**
   * Shell jobs left unfinished when Gemini CLI is gone (it leaves its detached shells running when it exits, after
   * SIGINT or SIGTERM too): while a process of theirs still runs, they go on as background jobs (the seal kills them
   * by their launch token: CANCELLED); once none does, nobody can know how they ended (LOST).
   */
  protected async finishAllJobs(key: string, end: JobEnd) {
    for (const [k, j] of Object.entries(this.sessions.get(key)?.jobs ?? {})) {
      if (j.done) continue;
      if (end.status === 'LOST' && this.jobAlive(this.sessions.get(key), j)) {
        await this.toBackground(key, k, j.pids ?? []);
        this.watchBackground(key, k);
        continue;
      }
      await this.finishJob(key, k, end);
    }
  }

  private watchBackground(key: string, k: string) {
    const timer = setInterval(() => {
      const j = this.sessions.get(key)?.jobs?.[k];
      if (this.stopped || !j || j.done) { clearInterval(timer); return; }
      if (this.jobAlive(this.sessions.get(key), j)) return;
      clearInterval(timer);
      void this.enqueue(key, () => this.finishJob(key, k, { status: 'LOST', exitCode: null }));
    }, 1_000);
    timer.unref();
  }

  /** The live turn in the history: the last one with its prompt's text no other turn was matched to. */
  private liveTurn(st: GeminiSessionState, ts: TurnState): GeminiTurn | null {
    const claimed = new Set(Object.keys(st.prompts ?? {}));
    return this.turns(st).filter((t) => t.prompt === ts.prompt && !claimed.has(t.promptId)).at(-1) ?? null;
  }

  /** Reads the turn from the history; waits (bounded) until it holds the model's answer. */
  private async readTurn(st: GeminiSessionState, ts: TurnState, answer: string | null, waitMs: number): Promise<GeminiTurn | null> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const t = this.liveTurn(st, ts);
      const last = t?.steps.at(-1)?.parts.filter((p) => p.type === 'TEXT').map((p) => p.text).join('') ?? '';
      if ((t && (t.answered || (answer !== null && last.trim() === answer.trim()))) || Date.now() >= deadline) return t;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** One ASSISTANT message per model response (idempotent by key), with where each part lives in the history; the prompt's place too. */
  private async appendTurn(id: string, ts: TurnState, t: GeminiTurn) {
    const st = this.sessions.get(id)!;
    await this.update(id, (now) => ({ prompts: { ...now.prompts, [t.promptId]: ts.turnId },
      ...(ts.promptMessage || now.turns[ts.turnId]?.promptMessage ? { messages: { ...now.messages, [String(now.turns[ts.turnId]?.promptMessage ?? ts.promptMessage)]: [{ kind: 'text', messageId: t.promptId }] } } : {}) }));
    for (const s of t.steps) {
      const parts: PartInput[] = s.parts.map((p) => ({ ...p }));
      const m = await this.gw.call(AppendMessageDocument, { input: {
        sessionID: st.sessionID!, executionID: ts.executionID, role: 'ASSISTANT', origin: 'MODEL', externalID: s.id,
        idempotencyKey: this.idempotencyKey('message', id, ts.turnId, s.id), parts,
      } }).catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`message ${s.id}: ${e.message}`); return null; });
      if (m) await this.update(id, (now) => ({ messages: { ...now.messages, [m.id]: s.locators } }));
    }
  }

  private outcome(t: GeminiTurn | null, fenced: boolean | null): TurnSettlement {
    if (fenced) return { status: 'INTERRUPTED', interruptReason: 'SEAL' };
    if (t?.answered) return { status: 'SUCCEEDED' };
    return { status: 'INTERRUPTED', interruptReason: 'USER' };
  }

  /** The turn's model calls (one per model response: its model, usage in the one meaning, times as Gemini CLI wrote them). */
  private usageInput(t: GeminiTurn | null): Partial<TurnSettlement> {
    return { ...(t ? settlementOfCalls(t.calls) : {}), ...(t?.answered ? { finishReason: 'stop' } : {}) };
  }

  /**
   * The kit's end of turn, read from the history: at AfterAgent (which comes after an interrupt too: SIGINT and
   * SIGTERM end the turn, then Gemini CLI exits 0; the history tells whether the model answered), or when the turn
   * ended without it: Gemini CLI exited, crashed, failed (an API error: exit code 1, the prompt rolled out of the
   * history), a new prompt came first, or the seal stopped it.
   */
  protected async turnOutcome(id: string, turnKey: string, end: TurnEnd): Promise<() => TurnSettlement> {
    const st = this.sessions.get(id)!;
    const ts = st.turns[turnKey];
    const t = 'stop' in end ? await this.readTurn(st, ts, text(end.stop.prompt_response), 5_000) : this.liveTurn(st, ts);
    if (t) await this.appendTurn(id, ts, t);
    await this.finishTurnJobs(id, turnKey, t, 'why' in end && end.why === 'seal' ? { status: 'CANCELLED', exitCode: null } : null);
    if ('stop' in end) return () => ({ ...this.outcome(t, this.sessions.get(id)!.fenced), ...this.usageInput(t) });
    const why = end.why;
    // Gemini CLI went by itself (its shells run on, detached): those still running go on as background jobs.
    if (why !== 'seal' && why !== 'superseded' && !this.killing.has(id)) await this.finishAllJobs(id, { status: 'LOST', exitCode: null });
    const failed = !st.fenced && why === 'failed';
    const settlement: TurnSettlement = {
      ...(failed ? { status: 'FAILED', error: 'Gemini CLI exited with an error before the turn ended (an API error rolls the prompt out of its history)', errorName: 'HostExit' }
        : { status: 'INTERRUPTED', interruptReason: interruptReasonOf(st.fenced, why) }),
      ...this.usageInput(t),
    };
    return () => settlement;
  }

  /** The seal: every process that carries one of the session's launch tokens (detached shells, their background jobs). */
  protected async stopStrays(key: string, why: 'seal' | 'signal'): Promise<boolean> {
    const st = this.sessions.get(key);
    if (why !== 'seal' || !st?.markers?.length) return false;
    return (await killMarked(LAUNCH_VAR, st.markers, (ms) => this.waitExit(ms))) > 0;
  }

  // ---- the gateway's commands ----

  /** A hidden Gemini CLI run (its hooks answer at once) in a throwaway home holding the user's settings without hooks. */
  private async hiddenRun(args: string[], cwd: string, home: string | null) {
    const bin = this.opts.geminiBin ?? findGeminiBinary();
    if (!bin) throw new Error('Gemini CLI was not found (set GEMINI_BIN)');
    const env: NodeJS.ProcessEnv = { ...(this.opts.geminiEnv ?? process.env), GEMINI_CLI_NO_RELAUNCH: 'true', [HIDDEN_VAR]: '1' };
    delete env[LAUNCH_VAR];
    if (home) env.GEMINI_CLI_HOME = home;
    return runHidden(process.execPath, [bin, '--skip-trust', ...args], cwd, env);
  }

  /**
   * COMPACT_SESSION: Gemini CLI's own compression (`gemini --resume <id> -p /compress`, while no Gemini CLI process
   * of the session runs): it asks the model for a `<state_snapshot>` of the history (with the corrections the host
   * wrote into it) and writes the compressed history into the file (the context the next resume sends); that
   * snapshot is the reply. In `-p` mode Gemini CLI starts the compression without waiting for it and sends
   * `/compress` on as a prompt: the run's BeforeAgent hook is held until the compressed history is in the file (or
   * 45 s, within the hook's time), then refused, so no model turn is made of it and the run ends.
   */
  protected async compact(c: Command): Promise<Record<string, unknown>> {
    const id = this.state.byGateway.get(c.sessionID);
    const st = id ? this.sessions.get(id) : undefined;
    if (!id || !st) throw new Error(`session ${c.sessionID} is not a Gemini CLI session of this host`);
    if (this.agentRunning(id) || st.current) throw new Error('Gemini CLI is running this session: compaction waits until it is idle');
    const bin = this.opts.geminiBin ?? findGeminiBinary();
    if (!bin) throw new Error('Gemini CLI was not found (set GEMINI_BIN)');
    const snapshotOf = () => {
      let t = '';
      try { t = fs.readFileSync(st.transcript, 'utf8'); } catch { /* gone */ }
      return loadConversation(t).messages.find((m) => m.type === 'user' && m.text.includes('<state_snapshot>')) ?? null;
    };
    const before = snapshotOf()?.text ?? null;
    const token = `compaction-${randomUUID()}`;
    this.compactions.set(token, async () => {
      for (const deadline = Date.now() + 45_000; Date.now() < deadline && !this.stopped; await new Promise((r) => setTimeout(r, 100))) {
        const s = snapshotOf();
        if (s && s.text !== before) return;
      }
    });
    try {
      const model = this.turns(st).map((t) => t.model).filter(Boolean).at(-1);
      const env: NodeJS.ProcessEnv = { ...(this.opts.geminiEnv ?? process.env), GEMINI_CLI_NO_RELAUNCH: 'true', [LAUNCH_VAR]: token };
      delete env[HIDDEN_VAR];
      const r = await runHidden(process.execPath, [bin, '--skip-trust', '--resume', id, ...(model ? ['-m', model] : []), '-p', '/compress'], st.cwd || os.tmpdir(), env);
      const now = snapshotOf();
      const summary = now && now.text !== before ? now.text.replace(/<\/?state_snapshot>/g, '').trim() : '';
      if (!summary) throw new Error(`Gemini CLI compressed nothing (exit ${r.code}): ${(r.err || r.out).slice(-500)}`);
      return { summary };
    } finally {
      this.compactions.delete(token);
    }
  }

  /**
   * GENERATE: a hidden `gemini -m <model> -o json -p …` in an empty directory, under a throwaway home (the user's
   * settings without hooks), so nothing of it reaches the user's sessions; the answer is its `response`.
   */
  protected async generate(c: Command): Promise<Record<string, unknown>> {
    const p = isObject(c.payload) ? c.payload : {};
    const modelID = isObject(p.model) ? text(p.model.modelID) ?? '' : '';
    const context = (Array.isArray(p.context) ? p.context.filter(isObject) : []).map((m) => `${text(m.role)}: ${text(m.text)}`).join('\n\n');
    const prompt = context ? `Conversation so far:\n\n${context}\n\n---\n\n${text(p.prompt) ?? ''}` : text(p.prompt) ?? '';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-gemini-generate-'));
    try {
      const userDir = geminiDir({ get: (k) => (this.opts.geminiEnv ?? process.env)[k] });
      let settings: Record<string, unknown> = {};
      try { const v: unknown = JSON.parse(fs.readFileSync(path.join(userDir ?? '', 'settings.json'), 'utf8')); if (isObject(v)) settings = v; } catch { /* none */ }
      const { hooks: _hooks, ...rest } = withHooks(settings, '');
      fs.mkdirSync(path.join(dir, 'home', '.gemini'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'home', '.gemini', 'settings.json'), JSON.stringify(rest));
      fs.mkdirSync(path.join(dir, 'work'));
      const r = await this.hiddenRun(['-m', modelID, '-o', 'json', '-p', prompt], path.join(dir, 'work'), path.join(dir, 'home'));
      if (r.code !== 0) throw new Error(`gemini exited ${r.code}: ${r.err.slice(-500)}`);
      const out: unknown = JSON.parse(r.out.slice(r.out.indexOf('{')));
      if (!isObject(out)) throw new Error('gemini -o json answered no object');
      const models = isObject(out.stats) && isObject(out.stats.models) ? out.stats.models : {};
      const stats = isObject(models[modelID]) ? models[modelID] : {};
      const tokens = isObject(stats.tokens) ? stats.tokens : {};
      return { text: text(out.response) ?? '', inputTokens: Number(tokens.prompt ?? 0), outputTokens: Number(tokens.candidates ?? 0), providerID: 'google', modelID };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  // ---- gateway -> history: corrections and retractions ----

  protected eventEdit(st: GeminiSessionState, ev: GatewayEvent): ChatEdit | null {
    const locators = ev.messageID ? st.messages?.[ev.messageID] : undefined;
    if (!locators) return null;
    const parts: unknown[] = isObject(ev.message) && Array.isArray(ev.message.parts) ? ev.message.parts : [];
    if (ev.type === 'message.retracted') {
      const first = parts.find(isObject);
      return { kind: 'retract', at: locators, placeholder: (first ? text(first.text) : null) ?? '[retracted]' };
    }
    if (!ev.partID) return null;
    const sorted = parts.filter(isObject).sort((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0));
    const i = sorted.findIndex((p) => p.id === ev.partID);
    const corrected = i >= 0 ? text(sorted[i].text) : null;
    return corrected !== null && locators[i] ? { kind: 'correct', at: locators[i], text: corrected } : null;
  }

  protected rewrite(_st: GeminiSessionState, history: string, edits: ChatEdit[]) { return appendedEdits(history, edits); }
}
