// Claude Code as a host of the gateway, on the hooks-driven host kit (bridge/hooks-host/hooks-host.ts: the
// registrations, state file, loopback channel, launcher routes, fence, seal's stop, commands and transcript
// rewrites are the kit's; what follows is Claude Code's). Claude Code has no server to follow: what the host sees of
// it are its hooks (bridge/claude-code/hook.ts: a bash script that forwards each hook's JSON to this process
// over loopback HTTP and answers with the host's decision) and its transcript (transcript.ts). The host
//
// - mirrors each Claude Code session as a gateway session (`externalID`-like key in hostMetadata.claudeCode),
//   created at its first hook, served by one of the host's two registrations (below);
// - admits each turn at UserPromptSubmit: captures the worktree (the reference host's capture, with its
//   watcher), `beginExecution` with that start snapshot and the prompt appended as a PROMPT message; a refusal
//   (SessionSealedError) blocks the prompt (exit 2);
// - at Stop reads the turn from the transcript (assistant text, thinking, tool calls with their results, each
//   model call: turnOutcome), appends it; the kit captures the worktree again and settles the execution;
// - in sessions the gateway fronts, admits every tool call at PreToolUse with `admitWork` (fails closed);
// - obeys the seal's commands: the session is fenced (every later hook of it refuses), the Claude Code process
//   running its turn is stopped (its process group: the shells it started go with it), and the turn settles
//   INTERRUPTED(SEAL) once the process is gone; only then is CLOSE_ADMISSIONS acknowledged.
//
// The kit's two registrations (bridge/hooks-host/hooks-host.ts): sessions started by `gateway claude-code`
// (launch.ts) are fronted, exclusively admitted, and stay so (a hook of one without a valid launch token is
// refused); sessions whose hooks are merged into the user's settings are observed (ADMISSION_NOT_EXCLUSIVE).
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  AdmitWorkDocument, AppendMessageDocument, BeginExecutionDocument, CreateSessionDocument,
  ReportExecutionCostDocument, SettleExecutionDocument, StartJobDocument,
} from '../../client/index.js';
import type { Command } from '../common/host-lease.js';
import { allow, decideWithin, refuse, within, type Decision, type Ticket } from '../hooks-host/admission.js';
import { HooksHost, type BaseSessionState, type EarlierTurn, type GatewayEvent, type HooksHostOptions, type JobEnd, type Kind, type PromptRun } from '../hooks-host/hooks-host.js';
import type { LaunchState } from '../hooks-host/launches.js';
import { worktreeRoot } from '../hooks-host/worktree.js';
import { interruptReasonOf, jobEndWhenTurnEnds, readTurnUntil, settlementOfCalls, type KitTurnState, type TurnEnd, type TurnSettlement } from '../hooks-host/turn.js';
import { GatewayError } from '../common/gateway.js';
import { hookSettings, writeHookScript, type HookInput } from './hook.js';
import { CLAUDE_CODE_NAMES } from './local-channel.js';
import { claudeConfigDir, isClaude, transcriptsRefused } from './processes.js';
import { costsToReport } from './cost.js';
import { compactSession, generateText, launchPromptRun, type GeneratePayload } from './commands.js';
import { modelCallsOf, parseTranscript, rewriteFileAtomically, rewriteTranscript, shellEnd, taskNotification, turnIdsOf, turnOf, type MessageKey, type TranscriptEdit, type Turn } from './transcript.js';

/** The model IDs Claude Code 2.1.332 resolves its aliases opus, sonnet and haiku to (measured: `--model <alias>`). */
export const CLAUDE_CODE_MODELS = ['claude-opus-5-5', 'claude-sonnet-5-5', 'claude-haiku-5-5'];

export interface ClaudeCodeHostOptions extends HooksHostOptions {
  /**
   * The models the host offers for generation (registered with the gateway: any other is ModelNotFoundError).
   * Default: what Claude Code 2.1.332's aliases opus, sonnet and haiku resolve to (CLAUDE_CODE_MODELS).
   */
  models?: string[];
  /** The environment and binary of the `claude` runs the host makes itself (compaction, generation). Default: its own. */
  claudeEnv?: NodeJS.ProcessEnv;
  claudeBin?: string;
  /** Arguments added to the `claude -p --resume` runs that carry out PROMPT commands (e.g. `--allowedTools …`, `--model …`). */
  promptArgs?: string[];
}

/** A turn (`cost`: Claude Code's, once reported: cost.ts); a Bash tool call: a SHELL job (keyed by the tool_use_id). */
interface TurnState extends KitTurnState { promptId: string; startedAt: number; cost?: number }
interface JobState { jobID: string; promptId: string; background: boolean; taskId: string | null; done: boolean }

/** What the host keeps per Claude Code session (the state file; survives host restarts). */
export interface SessionState extends BaseSessionState {
  turns: Record<string, TurnState>;
  jobs?: Record<string, JobState>;
  /** Gateway message -> the transcript message it mirrors and its gateway parts in order (corrections, retractions). */
  messages?: Record<string, { key: MessageKey; parts: string[] }>;
  /** Corrections and retractions not written into the transcript yet (a Claude Code process of the session runs). */
  pendingEdits?: TranscriptEdit[];
  /** A subagent's session (the Agent tool): `parent` is the Claude Code session it runs in; its agent ID. */
  agentId?: string;
}

export type { HookInput };
export { worktreeRoot, shellEnd, taskNotification, rewriteFileAtomically };

export class ClaudeCodeHost extends HooksHost<SessionState, TranscriptEdit> {
  private readonly warmed = new Set<string>();

  constructor(readonly opts: ClaudeCodeHostOptions) {
    super(opts, {
      names: CLAUDE_CODE_NAMES, writeScript: writeHookScript, isAgent: isClaude, configDirOf: claudeConfigDir,
      // compact: Claude Code's own `/compact` on `--resume`; generate: a hidden `claude -p --model` run; prompt:
      // `claude -p <text> --resume <session>` through the launcher (launchPrompt).
      capabilities: () => ({ cancel: true, compact: true, generate: true, prompt: true }),
      models: () => (opts.models ?? CLAUDE_CODE_MODELS).map((modelID) => ({ providerID: 'anthropic', modelID })),
    });
  }

  /** The settings file a session of `kind` runs with (`--settings`), written into the host's directory. */
  settingsFile(kind: Kind, extra: Record<string, unknown> = {}): string {
    const file = path.join(this.opts.dir, `settings-${kind}${Object.keys(extra).length ? `-${randomBytes(4).toString('hex')}` : ''}.json`);
    fs.writeFileSync(file, JSON.stringify(hookSettings(this.scriptPath, kind === 'launched' ? 'closed' : 'open', extra), null, 2) + '\n');
    return file;
  }

  protected launchAnswer(_l: LaunchState, body: any) {
    return { settings: this.settingsFile('launched', body.settings && typeof body.settings === 'object' ? body.settings : {}) };
  }

  protected async decideHook(event: string, input: HookInput, launchToken: string, ppid: number): Promise<Decision> {
    const cc = typeof input.session_id === 'string' ? input.session_id : '';
    const admitting = event === 'UserPromptSubmit' || event === 'PreToolUse';
    if (!cc) return admitting && launchToken ? refuse('the hook input names no session_id') : allow;
    const launch = launchToken ? this.state.launches.get(launchToken) ?? null : null;
    if (launchToken && !launch && admitting) return refuse('unknown launch token: start Claude Code with `gateway claude-code`');
    // Before anything is read, captured or created: the hook ran under a Claude Code process of this user
    // (the launch's own, for a launched one), and what it names is that process's.
    const pid = await this.verifyHook(cc, input, launch, ppid);
    if (typeof pid === 'string') {
      this.stats.unverified++;
      this.log(`${event} of session ${cc.slice(0, 100)} not taken: ${pid}`);
      return admitting && launchToken ? refuse(`the gateway's Claude Code host did not take this hook: ${pid}`) : allow;
    }
    // Only prompts and tool calls wait for the host's decision; every other hook is answered at once (its work
    // is queued in the session's order: Claude Code never waits for the host to mirror a turn or a session).
    // Set when the hook was answered without the task's decision (the gateway unreachable or too slow): what the
    // task admits after that is undone in a fronted session (refused there), kept in an observed one (let through).
    const ticket: Ticket = { answered: false };
    const decided = this.enqueue(cc, async (): Promise<Decision> => {
      let st = this.sessions.get(cc);
      if (st?.kind === 'launched' && !launch && admitting) {
        // A session the gateway fronts, run without its launcher (e.g. `claude --resume` with the host's hooks in
        // the user's settings): refused, or the seal's proof would not hold.
        return refuse(`session ${cc} is fronted by the gateway: resume it with \`gateway claude-code --resume ${cc}\``);
      }
      if (!launch) this.pids.set(cc, pid);
      if (!st) {
        if (event === 'SessionEnd' || event === 'Stop' || event === 'StopFailure' || event === 'PostToolUse' || event === 'SubagentStop') return allow;
        if (event === 'PreToolUse' && !launch) return allow;
        st = { kind: launch ? 'launched' : 'observed', sessionID: null, cwd: String(input.cwd ?? ''), transcript: String(input.transcript_path ?? ''),
          launch: launch?.token ?? null, fenced: false, turns: {}, current: null };
        await this.persist(cc, st);
      }
      if ((typeof input.transcript_path === 'string' && input.transcript_path !== st.transcript) || (st.kind === 'launched' && launch && launch.token !== st.launch)) {
        // Resumed: the transcript may have moved; a launched session is now run by this launch (the seal stops its process).
        st = { ...st, transcript: typeof input.transcript_path === 'string' ? input.transcript_path : st.transcript, ...(st.kind === 'launched' && launch ? { launch: launch.token } : {}) };
        await this.persist(cc, st);
      }
      if (launch) {
        if (await this.state.bindLaunch(launch.token, cc) && admitting) {
          return refuse(`this Claude Code process started before the gateway rewrote session ${cc}'s transcript (a correction or a retraction) and may still hold the old text: exit it and run \`gateway claude-code --resume ${cc}\``);
        }
      }
      if (admitting && st.fenced) return refuse(`session ${st.sessionID} is sealed by the gateway: nothing more runs in it`);
      // A subagent's hooks (they name its agent_id) are its own session's, a child of this one.
      const agentId = typeof input.agent_id === 'string' && input.agent_id ? input.agent_id : null;
      if (agentId && ['SubagentStart', 'PreToolUse', 'PostToolUse', 'SubagentStop'].includes(event)) return this.subagentHook(cc, agentId, event, input, ticket);
      // Turns Claude Code ran in the session while the host did not see them: imported before this hook's work.
      await this.catchUp(cc, event, typeof input.prompt_id === 'string' ? input.prompt_id : null);
      switch (event) {
        case 'SessionStart': {
          await this.ensureSession(cc, input);
          if (launch) await this.admitProcess(cc, launch.token).catch((e) => this.log(`process admission of ${cc}: ${e?.message ?? e}`));
          // The worktree's first capture walks it, starts its watcher and uploads every content the gateway lacks:
          // done now, while Claude Code starts up (a snapshot of the session's start), so the first prompt's
          // capture reads and sends only what changed since.
          const root = worktreeRoot(st.cwd);
          if (!this.warmed.has(`${root}\0${cc}`)) { this.warmed.add(`${root}\0${cc}`); await this.snapshot(this.sessions.get(cc)!); }
          return allow;
        }
        case 'UserPromptSubmit': return this.admitPrompt(cc, input, ticket, launch);
        case 'PreToolUse': return this.admitTool(cc, input, ticket);
        case 'PostToolUse': await this.toolEnded(cc, input); return allow;
        case 'Stop': case 'StopFailure': await this.endOfTurn(cc, typeof input.prompt_id === 'string' ? input.prompt_id : null, input); await this.reportCosts(cc); return allow;
        case 'SessionEnd':
          // Claude Code wrote its cost of the process's turns just before this hook (a cost-state line).
          void this.enqueue(cc, () => this.reportCosts(cc));
          if (st.kind === 'observed') for (const k of [cc, ...this.childrenOf(cc)]) if (this.sessions.get(k)?.current) void this.enqueue(cc, () => this.endRunning(k, 'exit'));
          if (st.kind === 'observed' && st.pendingEdits?.length) void this.afterExit(cc);
          return allow;
        default: return allow;
      }
    });
    // A tool call of a session the gateway only observes is not held for the gateway (it fails open anyway):
    // refused at once when the seal fenced the session, else let through while its job is recorded in order.
    const known = this.sessions.get(cc);
    const wait = event === 'UserPromptSubmit' || (event === 'PreToolUse' && (launch !== null || known?.kind === 'launched' || !known));
    if (admitting && !wait && known?.fenced) { decided.catch(() => {}); return refuse(`session ${known.sessionID} is sealed by the gateway: nothing more runs in it`); }
    const strict = launch !== null || known?.kind === 'launched';
    return wait ? await decideWithin(this.gw, decided, ticket, strict, event, this.opts.admissionTimeoutMs ?? 20_000, this.log) : (decided.catch(() => {}), allow);
  }

  /**
   * The Claude Code process a hook ran under (the hook's parent or grandparent), checked: a process of this
   * host's user, the launch's own process for a launched session, whose working directory holds the `cwd` the
   * hook names and whose own sessions folder (`$CLAUDE_CONFIG_DIR` or `~/.claude`, `projects/`) holds the
   * transcripts it names. Answers its PID, or why the hook is not taken.
   */
  private async verifyHook(cc: string, input: HookInput, launch: LaunchState | null, ppid: number): Promise<number | string> {
    const proc = await this.hookProcess(input, launch, ppid);
    if (typeof proc === 'string') return proc;
    return transcriptsRefused(cc, input, proc.facts.configDir) ?? proc.pid;
  }

  /**
   * A subagent (the Agent tool) is a child session of its Claude Code session (parentID), keyed by its agent ID;
   * each run of it (one per parent prompt) an execution (trigger SYNTHETIC: its prompt is the parent model's),
   * mirrored from its own transcript (`<session>/subagents/agent-<id>.jsonl`) at SubagentStop. Its tool calls are
   * admitted against the parent session (whose seal stops the process they run in), its Bash calls are jobs of
   * the child.
   */
  private async subagentHook(cc: string, agentId: string, event: string, input: HookInput, ticket: Ticket): Promise<Decision> {
    const key = `${cc}:agent:${agentId}`;
    const parent = await this.ensureSession(cc, input);
    let ch = this.sessions.get(key);
    const agentPath = typeof input.agent_transcript_path === 'string' ? input.agent_transcript_path
      : path.join(path.dirname(parent.transcript), cc, 'subagents', `agent-${agentId}.jsonl`);
    if (!ch) {
      const s = await this.gw.call(CreateSessionDocument, { input: {
        title: typeof input.agent_type === 'string' ? `subagent ${input.agent_type}`.slice(0, 200) : 'subagent', parentID: parent.sessionID,
        directory: parent.cwd, hostID: this.leases[parent.kind].hostID,
        hostMetadata: { claudeCode: { sessionID: cc, agentID: agentId, agentType: input.agent_type ?? null, transcriptPath: agentPath, launched: parent.kind === 'launched' } },
        idempotencyKey: this.idempotencyKey('subagent', cc, agentId),
      } }, 'plugin');
      ch = { kind: parent.kind, sessionID: s.id, cwd: parent.cwd, transcript: agentPath, launch: parent.launch, fenced: parent.fenced, turns: {}, current: null, parent: cc, agentId };
      await this.persist(key, ch);
      this.watch(key);
    } else if (ch.transcript !== agentPath || ch.launch !== parent.launch) {
      ch = { ...ch, transcript: agentPath, launch: parent.launch };
      await this.persist(key, ch);
    }
    const promptId = typeof input.prompt_id === 'string' && input.prompt_id ? input.prompt_id : `noid:${agentId}`;
    if (!ch.turns[promptId] && event !== 'PostToolUse') {
      const start = await this.snapshot(ch);
      const e = await this.leases[ch.kind].call(BeginExecutionDocument, {
        sessionID: ch.sessionID!, trigger: 'SYNTHETIC', externalID: agentId, idempotencyKey: this.idempotencyKey('turn', key, promptId),
        ...('id' in start ? { startSnapshot: start.id } : { startCaptureError: start.error }),
      });
      const now = this.sessions.get(key)!;
      ch = { ...now, current: promptId, turns: { ...now.turns, [promptId]: { promptId, executionID: e.id, settled: false, startedAt: Date.now() } } };
      await this.persist(key, ch);
    }
    switch (event) {
      case 'PreToolUse': return this.admitTool(key, input, ticket);
      case 'PostToolUse': await this.toolEnded(key, input); return allow;
      case 'SubagentStop': await this.endOfTurn(key, typeof input.prompt_id === 'string' ? input.prompt_id : null, input); return allow;
      default: return allow;
    }
  }

  /** The gateway session of a Claude Code session, created at its first hook (idempotent by key). */
  private async ensureSession(cc: string, input: HookInput): Promise<SessionState> {
    const st = this.sessions.get(cc)!;
    if (st.sessionID) return st;
    const lease = this.leases[st.kind];
    const s = await within(this.gw.call(CreateSessionDocument, { input: {
      title: '', directory: st.cwd || String(input.cwd ?? ''), hostID: lease.hostID,
      hostMetadata: { claudeCode: { sessionID: cc, transcriptPath: st.transcript, launched: st.kind === 'launched' } },
      idempotencyKey: this.idempotencyKey('session', cc),
    } }, 'plugin'), this.opts.admissionTimeoutMs ?? 20_000, 'createSession');
    const next = { ...st, sessionID: s.id };
    await this.persist(cc, next);
    this.watch(cc);
    await this.catchUp(cc, 'created', typeof input.prompt_id === 'string' ? input.prompt_id : null);
    return this.sessions.get(cc)!;
  }

  /** The prompt IDs the transcript's lines name (a text search: tool results and local commands name theirs too). */
  protected turnStarts(text: string): string[] {
    return [...new Set([...text.matchAll(/"promptId":"([^"\\]+)"/g)].map((m) => m[1]))];
  }

  /**
   * The transcript's turns (the kit's import of what the host did not see run): each with its messages, jobs (a
   * background shell ends with the task notification of a later turn), model and usage. Claude Code's own
   * compactions and local commands are not turns (`turnIdsOf`).
   */
  protected earlierHistory(cc: string): { turns: EarlierTurn[]; after?: (imported: string[]) => Promise<void> } {
    const st = this.sessions.get(cc)!;
    let text = '';
    try { text = fs.readFileSync(st.transcript, 'utf8'); } catch { return { turns: [] }; }
    const { lines } = parseTranscript(text);
    const ended = (promptId: string) => { const t = turnOf(lines, promptId); return t.apiError !== null || (t.finishReason !== null && t.finishReason !== 'tool_use'); };
    const finish = async (promptId: string, why: string) => {
      const now = this.sessions.get(cc)!;
      const ts = now.turns[promptId];
      if (!ts || ts.settled) return;
      const t = turnOf(lines, promptId);
      await this.appendTurn(now, cc, ts, t);
      await this.finishTurnJobs(cc, t, null);
      const failure = this.failureOf(t, null);
      await this.settleTurn(cc, promptId, {
        ...(now.fenced ? { status: 'INTERRUPTED', interruptReason: 'SEAL' } : failure ? { status: 'FAILED', ...failure } : { status: 'SUCCEEDED' }),
        ...this.usageInput(t), endCaptureError: why,
      });
    };
    return {
      turns: turnIdsOf(lines).map((promptId) => ({ id: promptId, get ended() { return ended(promptId); }, finish: (why: string) => finish(promptId, why), import: async (why: string) => {
        const t = turnOf(lines, promptId);
        const lease = this.leases[st.kind];
        const note = t.prompt ? taskNotification(t.prompt) : null;
        const e = await lease.call(BeginExecutionDocument, {
          sessionID: st.sessionID!, trigger: note ? 'SYNTHETIC' : 'PROMPT', externalID: promptId, idempotencyKey: this.idempotencyKey('turn', cc, promptId), startCaptureError: why,
        });
        const ts: TurnState = { promptId, executionID: e.id, settled: false, startedAt: Date.now() };
        const now = this.sessions.get(cc)!;
        await this.persist(cc, { ...now, turns: { ...now.turns, [promptId]: ts } });
        if (t.prompt) {
          const m = await this.gw.call(AppendMessageDocument, { input: {
            sessionID: st.sessionID!, executionID: e.id, role: 'USER', origin: note ? 'SYNTHETIC' : 'PROMPT', externalID: promptId,
            idempotencyKey: this.idempotencyKey('prompt', cc, promptId), parts: [{ type: 'TEXT', text: t.prompt }],
          } });
          await this.remember(cc, m, { prompt: promptId });
        }
        await this.appendTurn(this.sessions.get(cc)!, cc, ts, t);
        for (const p of t.steps.flatMap((x) => x.parts)) {
          if (p.type !== 'TOOL' || p.tool !== 'Bash' || !p.externalID) continue;
          const input = (p.input ?? {}) as Record<string, unknown>;
          const j = await lease.call(StartJobDocument, {
            sessionID: st.sessionID!, executionID: e.id, kind: 'SHELL', background: input.run_in_background === true,
            title: typeof input.description === 'string' ? input.description.slice(0, 500) : null,
            command: typeof input.command === 'string' ? input.command.slice(0, 10_000) : null, idempotencyKey: this.idempotencyKey('job', cc, p.externalID),
          });
          const n2 = this.sessions.get(cc)!;
          await this.persist(cc, { ...n2, jobs: { ...n2.jobs, [p.externalID]: { jobID: j.id, promptId, background: input.run_in_background === true, taskId: null, done: false } } });
          // A background shell's end is in a later task notification (imported with its own turn); else nobody saw it.
          const end = input.run_in_background === true ? null : shellEnd(p.output, p.status) ?? { status: 'LOST' as const, exitCode: null };
          if (end) await this.finishJob(cc, p.externalID, end);
        }
        if (note) {
          const id = note.toolUseId ?? Object.entries(this.sessions.get(cc)!.jobs ?? {}).find(([, j]) => j.taskId === note.taskId)?.[0];
          if (id) await this.finishJob(cc, id, note.end);
        }
        const ended = t.finishReason !== null && t.finishReason !== 'tool_use';
        const failure = this.failureOf(t, null);
        await this.settleTurn(cc, promptId, {
          ...(failure ? { status: 'FAILED', ...failure } : ended ? { status: 'SUCCEEDED' } : { status: 'INTERRUPTED', interruptReason: 'USER' }),
          ...this.usageInput(t), endCaptureError: why,
        });
      } })),
      // Background shells of the imported turns whose end no notification reported: nobody saw it.
      after: async (imported) => {
        for (const [id, j] of Object.entries(this.sessions.get(cc)!.jobs ?? {})) if (!j.done && imported.includes(j.promptId)) await this.finishJob(cc, id, { status: 'LOST', exitCode: null });
      },
    };
  }

  /** UserPromptSubmit: the turn is an execution admitted by the gateway, or the prompt is refused. */
  private async admitPrompt(cc: string, input: HookInput, ticket: Ticket, launch: LaunchState | null): Promise<Decision> {
    const promptId = typeof input.prompt_id === 'string' && input.prompt_id ? input.prompt_id : `noid:${Date.now()}`;
    let st = this.sessions.get(cc)!;
    const strict = st.kind === 'launched';
    try {
      st = await this.ensureSession(cc, input);
      if (st.launch) await this.admitProcess(cc, st.launch);
      if (st.current && st.current !== promptId) await this.endRunning(cc, 'superseded');
      st = this.sessions.get(cc)!;
      const existing = st.turns[promptId];
      if (existing) return allow; // the same prompt's hook again (a retry): admitted already
      const note = typeof input.prompt === 'string' ? taskNotification(input.prompt) : null;
      if (note) {
        // Claude Code reports a background shell's end as a prompt of its own (a new turn): the job ends here.
        const id = note.toolUseId ?? Object.entries(st.jobs ?? {}).find(([, j]) => j.taskId === note.taskId)?.[0];
        if (id) await this.finishJob(cc, id, note.end);
        st = this.sessions.get(cc)!;
      }
      const lease = this.leases[st.kind];
      const start = await this.snapshot(st);
      // The prompt of a run the host started for a PROMPT command (review comments): its execution is the command's.
      const commandID = launch && !note ? await this.state.takePromptCommand(launch.token, cc) : null;
      const e = await lease.call(BeginExecutionDocument, {
        sessionID: st.sessionID!, trigger: note ? 'SYNTHETIC' : 'PROMPT', externalID: promptId, idempotencyKey: this.idempotencyKey('turn', cc, promptId),
        ...('id' in start ? { startSnapshot: start.id } : { startCaptureError: start.error }), ...(commandID ? { commandID } : {}),
      });
      if (commandID) this.promptBegan(commandID);
      if (ticket.answered && strict) {
        // Refused meanwhile (the gateway answered too late): this execution never ran.
        await this.gw.call(SettleExecutionDocument, { input: { executionID: e.id, status: 'FAILED', error: 'the prompt was refused: the gateway answered too late' } }).catch(() => {});
        return refuse('late');
      }
      st = { ...this.sessions.get(cc)!, current: promptId, turns: { ...this.sessions.get(cc)!.turns, [promptId]: { promptId, executionID: e.id, settled: false, startedAt: Date.now() } } };
      await this.persist(cc, st);
      const text = typeof input.prompt === 'string' ? input.prompt : '';
      // The prompt's message is not part of the decision: queued next in the session's order (before any later
      // hook's work), so Claude Code does not wait for it.
      const sessionID = st.sessionID!;
      if (text) void this.enqueue(cc, async () => {
        const m = await this.gw.call(AppendMessageDocument, { input: {
          sessionID, executionID: e.id, role: 'USER', origin: note ? 'SYNTHETIC' : 'PROMPT', externalID: promptId,
          idempotencyKey: this.idempotencyKey('prompt', cc, promptId), parts: [{ type: 'TEXT', text }],
        } });
        await this.remember(cc, m, { prompt: promptId });
      });
      return allow;
    } catch (e) {
      // Fronted sessions fail closed (admission is the gateway's); observed ones are never blocked by it.
      return this.notAdmitted(cc, 'prompt', e, strict);
    }
  }

  /**
   * PreToolUse: in a fronted session every tool call is admitted by the gateway (admitWork), failing closed.
   * A Bash call is a SHELL job (startJob, itself refused after a seal), in every session.
   */
  private async admitTool(cc: string, input: HookInput, ticket: Ticket): Promise<Decision> {
    const st = this.sessions.get(cc)!;
    const strict = st.kind === 'launched';
    if (!st.sessionID) return strict ? refuse('the session is not known to the gateway yet') : allow;
    try {
      const toolUseId = typeof input.tool_use_id === 'string' ? input.tool_use_id : null;
      const turn = st.current ? st.turns[st.current] : undefined;
      const job = input.tool_name === 'Bash' && toolUseId && !st.jobs?.[toolUseId];
      // startJob is itself an admission (the session lock, then the seal: refused from the seal's first commit on),
      // so a Bash call costs one round trip; any other tool call of a fronted session asks admitWork. A
      // subagent's calls are admitted by its parent session (the one whose seal stops the process).
      const admitIn = st.parent ? this.sessions.get(st.parent)?.sessionID ?? st.sessionID : st.sessionID;
      if (strict && (!job || st.parent)) await this.leases.launched.call(AdmitWorkDocument, { sessionID: admitIn, route: `claude-code PreToolUse ${String(input.tool_name ?? '?')}`.slice(0, 400) });
      if (job && toolUseId) {
        const ti = input.tool_input ?? {};
        const background = ti.run_in_background === true;
        const j = await this.leases[st.kind].call(StartJobDocument, {
          sessionID: st.sessionID, executionID: turn?.executionID ?? null, kind: 'SHELL', background,
          title: typeof ti.description === 'string' ? ti.description.slice(0, 500) : null,
          command: typeof ti.command === 'string' ? ti.command.slice(0, 10_000) : null,
          idempotencyKey: this.idempotencyKey('job', cc, toolUseId),
        });
        const now = this.sessions.get(cc)!;
        await this.persist(cc, { ...now, jobs: { ...now.jobs, [toolUseId]: { jobID: j.id, promptId: st.current ?? '', background, taskId: null, done: false } } });
        // Refused meanwhile (the gateway answered too late): the shell never ran.
        if (ticket.answered && strict) { await this.finishJob(cc, toolUseId, { status: 'CANCELLED', exitCode: null }); return refuse('late'); }
      }
      return allow;
    } catch (e) {
      return this.notAdmitted(cc, 'tool call', e, strict);
    }
  }

  /** PostToolUse (Claude Code sends it for calls that succeeded): a foreground shell ended; a background one started. */
  private async toolEnded(cc: string, input: HookInput) {
    const st = this.sessions.get(cc)!;
    const id = typeof input.tool_use_id === 'string' ? input.tool_use_id : '';
    const j = st.jobs?.[id];
    if (!j || j.done) return;
    const r = (input.tool_response ?? {}) as Record<string, unknown>;
    if (typeof r.backgroundTaskId === 'string') {
      await this.persist(cc, { ...st, jobs: { ...st.jobs, [id]: { ...j, background: true, taskId: r.backgroundTaskId } } });
      return;
    }
    await this.finishJob(cc, id, r.interrupted === true ? { status: 'CANCELLED', exitCode: null } : { status: 'COMPLETED', exitCode: 0 });
  }

  /** The turn's foreground shells not finished by PostToolUse (failed, interrupted): their ends from the transcript. */
  private async finishTurnJobs(cc: string, t: Turn, otherwise: JobEnd | null) {
    const st = this.sessions.get(cc)!;
    const results = new Map(t.steps.flatMap((s) => s.parts).filter((p) => p.type === 'TOOL' && p.externalID).map((p) => [p.externalID!, p]));
    for (const [id, j] of Object.entries(st.jobs ?? {})) {
      if (j.done || j.taskId) continue;
      const p = results.get(id);
      const end = p ? shellEnd(p.output, p.status) : null;
      if (end) await this.finishJob(cc, id, end);
      else if (otherwise) await this.finishJob(cc, id, otherwise);
    }
  }

  /** Reads the turn from the transcript; waits (bounded) until it holds the turn's last assistant message. */
  private readTurn(st: SessionState, promptId: string, lastText: string | null, waitMs: number): Promise<Turn> {
    const read = () => {
      let text = '';
      try { text = fs.readFileSync(st.transcript, 'utf8'); } catch { /* not there (yet) */ }
      return turnOf(parseTranscript(text).lines, promptId, !!st.parent);
    };
    return readTurnUntil(st.transcript, read, (t) => t.apiError !== null
      || (lastText !== null ? (t.lastText ?? '').trim() === lastText.trim() : t.finishReason !== null && t.finishReason !== 'tool_use'), waitMs);
  }

  /** Appends the turn's assistant messages (one per step; idempotent by key), after the files its prompt attached. */
  private async appendTurn(st: SessionState, cc: string, ts: TurnState, t: Turn) {
    if (t.files.length) {
      // Claude Code writes a prompt's attachments as lines of their own after it: a USER message of FILE parts.
      await this.gw.call(AppendMessageDocument, { input: {
        sessionID: st.sessionID!, executionID: ts.executionID, role: 'USER', origin: 'PROMPT', externalID: `${ts.promptId}:files`,
        idempotencyKey: this.idempotencyKey('files', cc, ts.promptId),
        parts: t.files.map((f) => ({ type: 'FILE' as const, path: f.path, ...(f.mime ? { mime: f.mime } : {}) })),
      } }).catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`files of ${ts.promptId}: ${e.message}`); });
    }
    for (const s of t.steps) {
      if (!s.parts.length) continue;
      const m = await this.gw.call(AppendMessageDocument, { input: {
        sessionID: st.sessionID!, executionID: ts.executionID, role: 'ASSISTANT', origin: 'MODEL', externalID: s.messageID,
        idempotencyKey: this.idempotencyKey('message', cc, s.messageID),
        parts: s.parts,
      } }).catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`message ${s.messageID}: ${e.message}`); return null; });
      if (m) await this.remember(cc, m, { step: s.messageID });
    }
  }

  private async remember(cc: string, m: { id: string; parts?: { id: string; index: number }[] }, key: MessageKey) {
    const st = this.sessions.get(cc)!;
    const parts = [...(m.parts ?? [])].sort((a, b) => a.index - b.index).map((p) => p.id);
    await this.persist(cc, { ...st, messages: { ...st.messages, [m.id]: { key, parts } } });
  }

  // ---- gateway -> transcript: corrections and retractions ----

  protected eventEdit(st: SessionState, ev: GatewayEvent): TranscriptEdit | null {
    const known = ev.messageID ? st.messages?.[ev.messageID] : undefined;
    if (!known) return null;
    if (ev.type === 'message.retracted') return { kind: 'retract', key: known.key, placeholder: String(ev.message?.parts?.[0]?.text ?? '[retracted]') };
    if (!ev.partID) return null;
    const text = ev.message?.parts?.find((p: any) => p.id === ev.partID)?.text;
    const partIndex = known.parts.indexOf(ev.partID);
    return typeof text === 'string' && partIndex >= 0 ? { kind: 'correct', key: known.key, partIndex, text } : null;
  }

  /** A subagent's transcript holds its lines as a sidechain. */
  protected rewrite(st: SessionState, text: string, edits: TranscriptEdit[]) { return rewriteTranscript(text, edits, !!st.parent); }

  /** The turn's API failure: from the transcript's API error line, else the StopFailure hook's input. */
  private failureOf(t: Turn, input: HookInput | null): { error: string; errorName: string } | null {
    if (t.apiError) {
      const what = [t.apiError.status, t.apiError.type].filter((x) => x !== null).join(' ');
      return { error: `${t.apiError.text || 'API Error'}${what ? ` (${what})` : ''}`.slice(0, 4_000), errorName: 'APIError' };
    }
    if (input?.hook_event_name === 'StopFailure') {
      const text = typeof input.last_assistant_message === 'string' && input.last_assistant_message ? input.last_assistant_message : 'API Error';
      return { error: `${text}${typeof input.error === 'string' ? ` (${input.error})` : ''}`.slice(0, 4_000), errorName: 'APIError' };
    }
    return null;
  }

  /** The turn's usage, model, finish reason and model calls (the kit's settlement of its canonical model calls). */
  private usageInput(t: Turn) {
    return settlementOfCalls(modelCallsOf(t));
  }

  /**
   * The turn as it ended (Stop, StopFailure, SubagentStop; or `why` it ended without them: Claude Code exited,
   * killed by the seal, by the user, crashed, or a new prompt came first): its messages so far and its jobs' ends,
   * and its settlement: INTERRUPTED(SEAL) when fenced; FAILED with the Messages API's failure (Claude Code gave up
   * retrying: StopFailure, the transcript's API error line, or an error exit); else SUCCEEDED, or INTERRUPTED.
   */
  protected async turnOutcome(cc: string, promptId: string, end: TurnEnd): Promise<() => TurnSettlement> {
    const st = this.sessions.get(cc)!;
    const ts = st.turns[promptId];
    const stop = 'stop' in end ? end.stop as HookInput : null;
    const last = typeof stop?.last_assistant_message === 'string' ? stop.last_assistant_message : null;
    const t = await this.readTurn(st, promptId, last, stop ? 5_000 : 0);
    if (stop && st.parent && t.prompt) {
      // A subagent's prompt (written by the parent's model) is in its transcript only.
      const m = await this.gw.call(AppendMessageDocument, { input: {
        sessionID: st.sessionID!, executionID: ts.executionID, role: 'USER', origin: 'SYNTHETIC', externalID: promptId,
        idempotencyKey: this.idempotencyKey('prompt', cc, promptId), parts: [{ type: 'TEXT', text: t.prompt }],
      } }).catch((e) => { if (!(e instanceof GatewayError)) throw e; this.log(`subagent prompt: ${e.message}`); return null; });
      if (m) await this.remember(cc, m, { prompt: promptId });
    }
    await this.appendTurn(st, cc, ts, t);
    await this.finishTurnJobs(cc, t, 'why' in end ? jobEndWhenTurnEnds(end.why) : null);
    let outcome: TurnSettlement;
    if ('stop' in end) {
      // A turn that ended because the seal refused its tools is not a success.
      const failure = this.failureOf(t, stop);
      outcome = st.fenced ? { status: 'INTERRUPTED', interruptReason: 'SEAL' } : failure ? { status: 'FAILED', ...failure } : { status: 'SUCCEEDED' };
    } else {
      // An exit seen before the StopFailure hook: the transcript's API error line still says why the turn failed.
      const why = end.why;
      const failure = why === 'failed' && !st.fenced ? this.failureOf(t, null) ?? { error: 'Claude Code exited with an error before the turn ended' } : null;
      outcome = failure ? { status: 'FAILED', ...failure } : { status: 'INTERRUPTED', interruptReason: interruptReasonOf(st.fenced, why) };
    }
    const settlement = { ...outcome, ...this.usageInput(t) };
    return () => settlement;
  }

  /** The cost Claude Code computed for the settled turns of its processes that ended (cost.ts), reported once per execution. */
  private async reportCosts(cc: string) {
    const st = this.sessions.get(cc);
    if (!st?.transcript || st.parent) return;
    for (const { promptId, executionID, cost } of costsToReport(st.transcript, st.turns)) {
      try {
        await this.gw.call(ReportExecutionCostDocument, { input: { executionID, cost } });
      } catch (e: any) {
        this.log(`cost of ${executionID}: ${e?.message ?? e}`); // refused: a cost there already (the same one: a retry)
        if (!(e instanceof GatewayError)) continue; // not reached: reported at a later hook
      }
      await this.update(cc, (now) => ({ turns: { ...now.turns, [promptId]: { ...now.turns[promptId], cost } } }));
    }
  }

  // ---- the gateway's commands (compaction, generation, prompts: the rest is the kit's) ----

  protected launchPrompt(cc: string, st: SessionState, text: string, commandID: string): Promise<PromptRun> {
    return launchPromptRun(this.opts, cc, st, text, commandID);
  }

  /** COMPACT_SESSION: Claude Code's own /compact (bridge/claude-code/commands.ts), while no Claude Code process of the session runs. */
  protected async compact(c: Command): Promise<Record<string, unknown>> {
    const cc = this.state.byGateway.get(c.sessionID);
    const st = cc ? this.sessions.get(cc) : undefined;
    if (!cc || !st) throw new Error(`session ${c.sessionID} is not a Claude Code session of this host`);
    if (st.parent) throw new Error('a subagent\'s transcript cannot be compacted by Claude Code (only a session can be resumed)');
    if (this.agentRunning(cc) || st.current) throw new Error('Claude Code is running this session: compaction waits until it is idle');
    return compactSession(this.opts, cc, st);
  }

  /** GENERATE: a hidden `claude -p` completion (bridge/claude-code/commands.ts). */
  protected generate(c: Command): Promise<Record<string, unknown>> {
    return generateText(this.opts, c.payload as GeneratePayload);
  }
}
