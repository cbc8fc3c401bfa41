import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { GatewayClient, GatewayCallError, GatewayConnectionError, GraphQLRequestError } from '../client/index.js';
import { ChatCompletionsClient, COMPACTION_INSTRUCTION, contextMessages, type LlmOptions } from './llm.js';
import { WorktreeCapturer } from './capture.js';
import {
  AppendMessageDocument, BackgroundJobDocument, BeginExecutionDocument, FinishJobDocument, RegisterHostDocument,
  RenewHostLeaseDocument, RestoreJobDocument, SettleExecutionDocument, StartJobDocument,
  AcknowledgeHostCommandDocument, HostCommandsDocument, type HostCommandsSubscription,
  HostCommandDocument, ReplyHostCommandDocument,
  type AppendMessageInput, type JobKind, type Trigger, type ExecutionStatus, type InterruptReason,
} from '../client/generated.js';

export interface ReferenceHostOptions {
  url: string;
  token: string;
  wsUrl?: string;
  name?: string;
  /** Re-register under this ID (after a restart) to take the host's work back. */
  hostID?: string;
  leaseMs?: number;
  capabilities?: { cancel?: boolean; compact?: boolean; generate?: boolean; prompt?: boolean; exclusiveAdmission?: boolean };
  models?: { providerID: string; modelID: string }[];
  /** Grace period between SIGTERM and SIGKILL when cancelling a job. */
  killGraceMs?: number;
  /** Working directory of the jobs' processes. */
  cwd?: string;
  /**
   * Called for an INTERRUPT_EXECUTION command (seal): stop the execution's work. The default settles
   * the execution INTERRUPTED with the command's reason once this returns.
   */
  onInterrupt?: (executionID: string, reason: 'SEAL') => void | Promise<void>;
  /**
   * The OpenAI-compatible chat-completions endpoint used for COMPACT_SESSION and GENERATE
   * commands (declare capabilities.compact / .generate and the models it offers).
   */
  llm?: LlmOptions;
  /** The model that summarizes sessions (the session's model); default: the first of `models`. */
  compactionModel?: { providerID: string; modelID: string };
  /**
   * PROMPT commands (review comments sent to the agent; declare capabilities.prompt): the agent's turn, run inside
   * the execution the host begins for the command (after the prompt is appended as the user's message, before the
   * execution settles). Whatever it does in the worktree shows in the execution's changeset when `worktree` is
   * set; the text it answers is appended as the model's message. Thrown: the execution settles FAILED. The
   * default asks `llm` (with the compaction model) when configured, else answers nothing.
   */
  onPrompt?: (turn: PromptTurn) => Promise<{ text?: string } | void>;
  /** A worktree captured at every boundary of the executions the host runs for PROMPT commands (host/capture.ts). */
  worktree?: string;
}

/** One PROMPT command being carried out: the session, the execution begun for it, and what to tell the agent. */
export interface PromptTurn {
  sessionID: string;
  executionID: string;
  commandID: string;
  text: string;
  commentIDs: string[];
  /** Aborted when the execution is interrupted (a seal). */
  signal: AbortSignal;
}

export type HostCommand = HostCommandsSubscription['hostCommands'];

export interface RunningJob {
  id: string;
  pid: number;
  /** Resolves when the process exited and its end was reported to the gateway. */
  done: Promise<{ status: 'COMPLETED' | 'ERROR' | 'CANCELLED'; exitCode: number | null }>;
  process: ChildProcess;
}

/**
 * The reference host: what a real agent runtime embeds to report its lifecycle to the gateway.
 * It registers and renews its lease, begins and settles executions, appends messages, and runs shell
 * jobs as real child processes (each in its own process group), reporting their exits.
 */
export class ReferenceHost {
  readonly client: GatewayClient;
  id: string | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  readonly jobs = new Map<string, RunningJob>();
  private cancelled = new Set<string>();
  /** Cancels that arrived before the job's process was known (admitted, not yet spawned). */
  private cancelRequested = new Set<string>();
  private crashed = false;
  private killTimers = new Set<NodeJS.Timeout>();
  private stopCommands: (() => void) | null = null;
  /** Commands received (tests and demos look at them). */
  readonly commands: HostCommand[] = [];

  constructor(readonly opts: ReferenceHostOptions) {
    // A host's command stream must outlive any outage of the gateway: its connection is retried for good
    // (a refused or revoked token still ends it).
    this.client = new GatewayClient({ url: opts.url, token: opts.token, wsUrl: opts.wsUrl, retryForMs: Infinity });
  }

  async start(): Promise<string> {
    const h = await this.client.call(RegisterHostDocument, {
      input: {
        hostID: this.opts.hostID ?? null,
        name: this.opts.name ?? 'reference-host',
        leaseMs: this.opts.leaseMs ?? 30_000,
        capabilities: { cancel: true, compact: false, generate: false, ...this.opts.capabilities },
        models: this.opts.models ?? [],
      },
    });
    this.id = (h as any).id;
    const every = Math.max(200, Math.floor((this.opts.leaseMs ?? 30_000) / 3));
    this.renewTimer = setInterval(() => void this.renew(), every);
    this.renewTimer.unref();
    const caps = this.opts.capabilities;
    if (caps?.cancel !== false || caps?.compact || caps?.generate || caps?.prompt) this.listenForCommands();
    return this.id!;
  }

  /** `stop` was called: calls that are retried until answered give up. */
  private stopped = false;
  /** The renewal in flight (one at a time: the timer does not stack renewals behind a slow one). */
  private renewal: Promise<void> | null = null;
  /** Renewals answered and failed (tests and demos look at them). */
  readonly renewals = { ok: 0, failed: 0 };

  /**
   * Renews the lease. A renewal the gateway could not carry out for now (DATABASE_UNAVAILABLE and any other 5xx,
   * the gateway unreachable) is tried again at once with backoff (100 ms doubling to 1 s) until it lands or the
   * host stops: the lease lasts three renewal periods, and a database that blinked must not cost it one.
   */
  private renew(): Promise<void> {
    if (this.renewal || !this.renewTimer || !this.id) return this.renewal ?? Promise.resolve();
    const hostID = this.id;
    this.renewal = this.untilAnswered(() => this.client.call(RenewHostLeaseDocument, { input: { hostID } }), () => !this.renewTimer, this.renewals)
      .then(() => {}, () => {}) // refused (HostNotFoundError, a revoked token): the next tick tries again
      .finally(() => { this.renewal = null; });
    return this.renewal;
  }

  /**
   * Runs `call` until the gateway answers it: a call it could not carry out for now (DATABASE_UNAVAILABLE and the
   * other 502-504, the gateway unreachable) is tried again with backoff (100 ms doubling to 1 s) until `stopped()`;
   * a masked internal error (500) three times, as the bridges do (a persistent one is a defect); any other failure
   * is thrown. Only for calls that are safe to repeat: a renewal, a settle (the same settle again answers the
   * execution), an acknowledgement.
   */
  private async untilAnswered<T>(call: () => Promise<T>, stopped: () => boolean = () => this.crashed || this.stopped, count?: { ok: number; failed: number }): Promise<T> {
    let internal = 0;
    for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
      try {
        const r = await call();
        if (count) count.ok++;
        return r;
      } catch (e) {
        if (count) count.failed++;
        const transient = e instanceof GatewayConnectionError
          || (e instanceof GraphQLRequestError && e.status > 500)
          || (e instanceof GraphQLRequestError && e.status === 500 && ++internal <= 3);
        if (!transient || stopped()) throw e;
        await new Promise((r) => setTimeout(r, wait));
        if (stopped()) throw e;
      }
    }
  }

  private hostID(): string {
    if (!this.id) throw new Error('host not started');
    return this.id;
  }

  async beginExecution(sessionID: string, trigger: Trigger = 'PROMPT', opts: { startSnapshot?: string | null; startCaptureError?: string | null; commandID?: string | null } = {}) {
    return this.client.call(BeginExecutionDocument, { input: { sessionID, hostID: this.hostID(), trigger, ...opts } });
  }

  async settleExecution(executionID: string, status: ExecutionStatus, opts: { interruptReason?: InterruptReason; error?: string; endSnapshot?: string | null; endCaptureError?: string | null } = {}) {
    return this.client.call(SettleExecutionDocument, { input: { executionID, status, ...opts } });
  }

  async appendMessage(input: AppendMessageInput) {
    return this.client.call(AppendMessageDocument, { input });
  }

  async appendText(sessionID: string, executionID: string | null, text: string, origin: AppendMessageInput['origin'] = 'MODEL') {
    return this.appendMessage({
      sessionID,
      executionID,
      role: origin === 'MODEL' ? 'ASSISTANT' : 'USER',
      origin,
      parts: [{ type: 'TEXT', text }],
    });
  }

  /**
   * Admits a job with the gateway first, then starts `bash -c command` in its own process group and
   * reports its exit. A job the gateway refuses (sealed session) never starts a process.
   */
  async runJob(sessionID: string, executionID: string | null, command: string, opts: { kind?: JobKind; title?: string; background?: boolean } = {}): Promise<RunningJob> {
    const job: any = await this.client.call(StartJobDocument, {
      input: {
        sessionID, executionID, hostID: this.hostID(), kind: opts.kind ?? 'SHELL',
        title: opts.title ?? command.slice(0, 80), command, background: opts.background ?? false,
      },
    });
    return this.spawnFor(job.id, command);
  }

  private spawnFor(jobID: string, command: string): RunningJob {
    const child = spawn('bash', ['-c', command], { cwd: this.opts.cwd, detached: true, stdio: 'ignore' });
    child.unref();
    const done = new Promise<{ status: 'COMPLETED' | 'ERROR' | 'CANCELLED'; exitCode: number | null }>((resolve) => {
      child.once('exit', async (code, signal) => {
        await waitForGroupExit(child.pid!);
        if (this.crashed) return;
        const status = this.cancelled.has(jobID) ? 'CANCELLED' : code === 0 ? 'COMPLETED' : 'ERROR';
        const exitCode = code ?? (signal ? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1) : null);
        this.jobs.delete(jobID);
        await this.reportFinish(jobID, status, exitCode);
        resolve({ status, exitCode });
      });
    });
    const rj: RunningJob = { id: jobID, pid: child.pid!, done, process: child };
    this.jobs.set(jobID, rj);
    if (this.cancelRequested.delete(jobID)) this.cancelJob(jobID);
    return rj;
  }

  private async reportFinish(jobID: string, status: 'COMPLETED' | 'ERROR' | 'CANCELLED', exitCode: number | null) {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        await this.client.call(FinishJobDocument, { input: { jobID, status, exitCode } });
        return;
      } catch (e) {
        if (e instanceof GatewayCallError) return; // already finished, or not ours: nothing to retry
        await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 2_000)));
      }
    }
  }

  async backgroundJob(jobID: string) {
    return this.client.call(BackgroundJobDocument, { input: { jobID } });
  }

  /** After a restart: take a LOST job back whose process this host still supervises. */
  async restoreJob(jobID: string) {
    return this.client.call(RestoreJobDocument, { input: { jobID, hostID: this.hostID() } });
  }

  /**
   * Cancels a job's process group: SIGTERM, then SIGKILL after the grace period. The exit is
   * reported as CANCELLED by the exit handler.
   */
  cancelJob(jobID: string): boolean {
    const j = this.jobs.get(jobID);
    if (!j) return false;
    this.cancelled.add(jobID);
    try { process.kill(-j.pid, 'SIGTERM'); } catch {}
    const t = setTimeout(() => { try { process.kill(-j.pid, 'SIGKILL'); } catch {} }, this.opts.killGraceMs ?? 2_000);
    t.unref();
    this.killTimers.add(t);
    j.done.finally(() => { clearTimeout(t); this.killTimers.delete(t); });
    return true;
  }

  /** Stops renewing the lease. With `crash`, leaves processes running and reports nothing (a host crash). */
  async stop(opts: { crash?: boolean } = {}) {
    this.stopped = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    // A renewal retrying ends after its attempt in flight; none is made after stop has resolved.
    await this.renewal;
    if (opts.crash) {
      // A crash takes the pending SIGKILLs with it.
      this.crashed = true;
      for (const t of this.killTimers) clearTimeout(t);
    }
    this.stopCommands?.();
    this.stopCommands = null;
    for (const t of this.turns.values()) t.abort();
    await this.capturer?.close().catch(() => {});
    if (!opts.crash) {
      for (const id of [...this.jobs.keys()]) this.cancelJob(id);
      await Promise.all([...this.jobs.values()].map((j) => j.done));
    }
    await this.client.close();
  }

  // ---- Seal: the host command channel -------------------------------------------------

  /**
   * Subscribes to this host's commands (graphql-ws; the client reconnects by itself and the gateway
   * then delivers again every command not yet acknowledged). Each command is obeyed, then acknowledged.
   */
  private listenForCommands() {
    const hostID = this.hostID();
    this.stopCommands = this.client.subscribe(HostCommandsDocument, { hostID }, {
      next: (d) => { void this.handleCommand(d.hostCommands).catch(() => {}); },
      error: () => {},
    });
  }

  private async handleCommand(c: HostCommand) {
    if (this.crashed) return;
    this.commands.push(c);
    if (c.kind === 'COMPACT_SESSION' || c.kind === 'GENERATE') return this.handleRequest(c); // requests with a reply
    if (c.kind === 'PROMPT') return this.handlePrompt(c); // answered by the execution it begins
    if (c.kind === 'CANCEL_JOB' && c.jobID) {
      // A job admitted but not spawned yet is cancelled as soon as its process exists.
      if (!this.cancelJob(c.jobID)) this.cancelRequested.add(c.jobID);
    } else if (c.kind === 'INTERRUPT_EXECUTION' && c.executionID) {
      const reason = c.reason as 'SEAL'; // interrupts are only issued by a seal (PLUGIN: a plugin's requests)
      this.turns.get(c.executionID)?.abort();
      await this.opts.onInterrupt?.(c.executionID, reason);
      await this.untilAnswered(() => this.settleExecution(c.executionID!, 'INTERRUPTED', { interruptReason: reason })).catch(() => {});
    }
    await this.untilAnswered(() => this.client.call(AcknowledgeHostCommandDocument, { input: { commandID: c.id } })).catch(() => {});
  }

  // ---- Compaction and generation requests ------------------------------------------------------

  /** Requests being worked on (a reconnect redelivers pending commands: each runs once). */
  private requestsInFlight = new Set<string>();
  /** How each request ended on this host's side (tests look at it): the reply mutation's result type. */
  readonly replies: { commandID: string; kind: string; result: string }[] = [];

  /**
   * COMPACT_SESSION: summarize payload.context with the compaction model. GENERATE: run payload.prompt
   * after payload.context with exactly payload.model. Either way the answer (or the failure) goes back
   * with replyHostCommand; a reply the gateway refuses as late is simply dropped.
   */
  private async handleRequest(c: HostCommand) {
    if (this.requestsInFlight.has(c.id)) return;
    this.requestsInFlight.add(c.id);
    try {
      const { hostCommand: full } = await this.client.request(HostCommandDocument, { id: c.id });
      const p: any = full?.payload;
      if (!full || !p || full.repliedAt) return;
      let result: Record<string, unknown> | null = null;
      let error: string | null = null;
      try {
        const llm = this.opts.llm;
        if (!llm) throw new Error('this host has no model endpoint configured');
        const client = new ChatCompletionsClient(llm);
        const context = contextMessages(p.context ?? []);
        if (c.kind === 'COMPACT_SESSION') {
          const model = this.opts.compactionModel ?? this.opts.models?.[0];
          if (!model) throw new Error('this host has no model to compact with');
          const out = await client.complete(model, [...context, { role: 'user', content: COMPACTION_INSTRUCTION }]);
          result = { summary: out.text, inputTokens: out.inputTokens, outputTokens: out.outputTokens };
        } else {
          const model = p.model as { providerID: string; modelID: string };
          const out = await client.complete(model, [...context, { role: 'user', content: String(p.prompt) }]);
          result = { text: out.text, providerID: model.providerID, modelID: model.modelID, inputTokens: out.inputTokens, outputTokens: out.outputTokens };
        }
      } catch (e: any) {
        error = String(e?.message ?? e).slice(0, 2_000) || 'failed';
      }
      if (this.crashed) return;
      const r = await this.client.request(ReplyHostCommandDocument, { input: { commandID: c.id, result, error } });
      this.replies.push({ commandID: c.id, kind: c.kind, result: r.replyHostCommand.__typename });
    } catch {
      // The gateway could not be reached: the command stays pending and is delivered again on reconnect.
      this.requestsInFlight.delete(c.id);
      return;
    }
  }

  // ---- PROMPT: review comments sent to the agent -----------------------------------------------------

  /** The turns running for PROMPT commands, by execution (an interrupt aborts its turn). */
  private turns = new Map<string, AbortController>();
  /** How each PROMPT command went on this host's side (tests look at it). */
  readonly prompts: { commandID: string; sessionID: string; text: string; executionID: string | null; error: string | null; settled?: string }[] = [];
  private capturer: WorktreeCapturer | null = null;

  /** A boundary snapshot of the worktree (when one is set): its ID, or why it could not be captured. */
  private async boundary(sessionID: string): Promise<{ snapshot: string | null; error: string | null }> {
    if (!this.opts.worktree) return { snapshot: null, error: null };
    try {
      this.capturer ??= new WorktreeCapturer();
      return { snapshot: (await this.capturer.snapshot(this.client, sessionID, this.opts.worktree, this.hostID())).id, error: null };
    } catch (e: any) {
      return { snapshot: null, error: String(e?.message ?? e).slice(0, 2_000) || 'capture failed' };
    }
  }

  /**
   * PROMPT: carries out payload.text as a normal turn of the agent. The execution is begun with the command's ID,
   * which answers the command (the gateway marks it STARTED and the comments answered by this execution, in the
   * begin's transaction); the prompt is appended as the user's message, the turn runs (onPrompt), and the
   * execution settles. A begin the gateway refuses (the session was sealed or became busy meanwhile, or the
   * command was given up) is replied as an error, and nothing runs.
   */
  private async handlePrompt(c: HostCommand) {
    if (this.requestsInFlight.has(c.id)) return;
    this.requestsInFlight.add(c.id);
    let full: { payload?: unknown; repliedAt?: unknown } | null | undefined;
    try {
      ({ hostCommand: full } = await this.client.request(HostCommandDocument, { id: c.id }));
    } catch {
      this.requestsInFlight.delete(c.id); // delivered again on reconnect
      return;
    }
    const p = full?.payload as { text?: string; commentIDs?: string[] } | null | undefined;
    if (!full || !p || full.repliedAt) return;
    const record: (typeof this.prompts)[number] = { commandID: c.id, sessionID: c.sessionID, text: String(p.text ?? ''), executionID: null, error: null };
    this.prompts.push(record);
    const start = await this.boundary(c.sessionID);
    let executionID: string;
    try {
      const e: any = await this.beginExecution(c.sessionID, 'PROMPT', { startSnapshot: start.snapshot, startCaptureError: start.error, commandID: c.id });
      executionID = e.id;
      record.executionID = executionID;
    } catch (e: any) {
      record.error = e instanceof GatewayCallError ? e.error._tag : String(e?.message ?? e);
      if (this.crashed) return;
      await this.client.request(ReplyHostCommandDocument, { input: { commandID: c.id, error: `the prompt could not start: ${String(e?.message ?? e).slice(0, 1_900)}` } })
        .catch(() => {});
      return;
    }
    const abort = new AbortController();
    this.turns.set(executionID, abort);
    let status: ExecutionStatus = 'SUCCEEDED';
    let error: string | undefined;
    try {
      await this.appendText(c.sessionID, executionID, record.text, 'PROMPT');
      const turn: PromptTurn = { sessionID: c.sessionID, executionID, commandID: c.id, text: record.text, commentIDs: p.commentIDs ?? [], signal: abort.signal };
      const out = await (this.opts.onPrompt ?? ((t: PromptTurn) => this.modelTurn(t)))(turn);
      if (out && out.text) await this.appendText(c.sessionID, executionID, out.text);
    } catch (e: any) {
      status = 'FAILED';
      error = String(e?.message ?? e).slice(0, 2_000) || 'the turn failed';
    } finally {
      this.turns.delete(executionID);
    }
    if (this.crashed || abort.signal.aborted) return; // an interrupt settles it (INTERRUPTED)
    const end = await this.boundary(c.sessionID);
    await this.settleExecution(executionID, status, { error, endSnapshot: end.snapshot, endCaptureError: end.error })
      .then(() => { record.settled = status; }, () => {});
  }

  /** The default turn: the prompt to the host's model (llm), its answer as the model's message. */
  private async modelTurn(t: PromptTurn): Promise<{ text?: string }> {
    const llm = this.opts.llm;
    const model = this.opts.compactionModel ?? this.opts.models?.[0];
    if (!llm || !model) return {};
    const out = await new ChatCompletionsClient(llm).complete(model, [{ role: 'user', content: t.text }]);
    return { text: out.text };
  }

  /**
   * After a restart: takes back a job whose process group this host still supervises (by PID, e.g.
   * from its own state file), then watches the group and reports its end like any other job.
   */
  async adoptJob(jobID: string, pid: number): Promise<RunningJob> {
    await this.restoreJob(jobID);
    const done = (async () => {
      await waitForGroupExit(pid, 20);
      this.jobs.delete(jobID);
      const status = this.cancelled.has(jobID) ? 'CANCELLED' as const : 'ERROR' as const;
      if (!this.crashed) await this.reportFinish(jobID, status, null);
      return { status, exitCode: null };
    })();
    const rj: RunningJob = { id: jobID, pid, done, process: null as any };
    this.jobs.set(jobID, rj);
    if (this.cancelRequested.delete(jobID)) this.cancelJob(jobID);
    return rj;
  }
}

/** Resolves once no process of the group is left (a job is over only when everything it started is). */
async function waitForGroupExit(pgid: number, everyMs = 10): Promise<void> {
  for (let wait = 1; groupRunning(pgid); wait = Math.min(wait * 2, everyMs)) {
    await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * True while a process of the group can still run. Zombies do not count: they have terminated and
 * only wait for their parent (init, for orphans) to reap them, which some inits do only now and then.
 */
export function groupRunning(pgid: number): boolean {
  try { process.kill(-pgid, 0); } catch (e: any) { return e?.code !== 'ESRCH'; }
  let entries: string[];
  try { entries = readdirSync('/proc'); } catch { return true; } // no procfs: trust kill(0)
  for (const d of entries) {
    if (d.charCodeAt(0) < 48 || d.charCodeAt(0) > 57) continue;
    let stat: string;
    try { stat = readFileSync(`/proc/${d}/stat`, 'utf8'); } catch { continue; }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(f[2]) === pgid && f[0] !== 'Z' && f[0] !== 'X') return true;
  }
  return false;
}

