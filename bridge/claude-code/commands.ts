// The gateway's commands as Claude Code carries them out (the host's launchPrompt, compact and generate): a PROMPT
// through the launcher, Claude Code's own /compact, a hidden `claude -p` completion. The host checks that the
// session may run them; these run Claude Code.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PromptRun } from '../hooks-host/hooks-host.js';
import { runHidden } from '../hooks-host/host-commands.js';
import { findClaudeBinary, launchClaude } from './launch.js';
import { parseTranscript, usageOf } from './transcript.js';

/** What the commands need of the host's options. */
export interface ClaudeRunOptions {
  dir: string;
  claudeBin?: string;
  claudeEnv?: NodeJS.ProcessEnv;
  promptArgs?: string[];
}

/** What they need of a session's state. */
export interface ClaudeSessionFacts { cwd: string; transcript: string; launchSettings?: Record<string, unknown> | null }

export interface GeneratePayload { prompt: string; model: { providerID: string; modelID: string }; context?: { role: string; text: string }[] }

/** The built-in tools of Claude Code 2.1.332 a hidden completion runs without. */
const ALL_TOOLS = ['Agent', 'Bash', 'Edit', 'ListAgents', 'Read', 'ReportFindings', 'ScheduleWakeup', 'Skill', 'ToolSearch', 'Workflow', 'Write',
  'Glob', 'Grep', 'NotebookEdit', 'WebFetch', 'WebSearch', 'TodoWrite', 'Monitor', 'SendMessage', 'TaskStop', 'EnterWorktree', 'ExitWorktree', 'CronCreate', 'CronDelete', 'CronList'];

const NO_BINARY = 'the claude binary was not found (install @anthropic-ai/claude-code, or set CLAUDE_BIN)';

/**
 * PROMPT: `claude -p <text> --resume <session>` through the launcher (the host's hooks in force, fail closed; its
 * UserPromptSubmit admitted like any prompt), with the settings the session's last launch asked for (e.g. its
 * permissions) and `promptArgs`.
 */
export async function launchPromptRun(opts: ClaudeRunOptions, cc: string, st: ClaudeSessionFacts, text: string, commandID: string): Promise<PromptRun> {
  const bin = opts.claudeBin ?? findClaudeBinary();
  if (!bin) throw new Error(NO_BINARY);
  const env: NodeJS.ProcessEnv = { ...(opts.claudeEnv ?? process.env) };
  delete env.GATEWAY_CLAUDE_HIDDEN;
  delete env.GATEWAY_CLAUDE_LAUNCH;
  const l = await launchClaude({
    dir: opts.dir, args: ['-p', text, '--resume', cc, '--output-format', 'json', ...(opts.promptArgs ?? [])], cwd: st.cwd || os.tmpdir(),
    env, settings: st.launchSettings ?? {}, stdio: 'pipe', detached: true, bin, commandID,
  });
  let tail = '';
  const keep = (d: Buffer) => { tail = (tail + d.toString('utf8')).slice(-4_000); };
  l.child.stdout!.on('data', keep);
  l.child.stderr!.on('data', keep);
  return { exited: l.exited, output: () => tail.trim() };
}

/** A `claude` run of the host's own: its hooks answer at once (GATEWAY_CLAUDE_HIDDEN), nothing of it is mirrored. */
function runClaude(opts: ClaudeRunOptions, args: string[], cwd: string): Promise<{ code: number | null; out: string; err: string }> {
  const bin = opts.claudeBin ?? findClaudeBinary();
  if (!bin) return Promise.reject(new Error(NO_BINARY));
  const env: NodeJS.ProcessEnv = { ...(opts.claudeEnv ?? process.env), GATEWAY_CLAUDE_HIDDEN: '1' };
  delete env.GATEWAY_CLAUDE_LAUNCH;
  return runHidden(bin, args, cwd, env);
}

/**
 * COMPACT_SESSION: Claude Code's own compaction, `claude -p /compact --resume <session>` (the host runs it while no
 * Claude Code process of the session runs). Claude Code writes a compact boundary and its summary into the
 * transcript (the context the next `--resume` sends); the summary line's text is the reply. The gateway's context
 * is not used: Claude Code summarizes its transcript (with the corrections the host wrote into it).
 */
export async function compactSession(opts: ClaudeRunOptions, cc: string, st: ClaudeSessionFacts): Promise<Record<string, unknown>> {
  const r = await runClaude(opts, ['-p', '/compact', '--resume', cc, '--output-format', 'json'], st.cwd || os.tmpdir());
  if (r.code !== 0) throw new Error(`claude /compact exited ${r.code}: ${(r.out + r.err).slice(-500)}`);
  const { lines } = parseTranscript(fs.readFileSync(st.transcript, 'utf8'));
  const boundary = lines.map((l) => l.type === 'system' && l.subtype === 'compact_boundary').lastIndexOf(true);
  const summary = boundary >= 0 ? lines.slice(boundary + 1).find((l) => l.type === 'user' && l.message) : undefined;
  const content = summary?.message?.content;
  const text = typeof content === 'string' ? content
    : Array.isArray(content) ? content.filter((b) => b?.type === 'text' && typeof b.text === 'string').map((b) => b.text).join('\n') : '';
  if (!text.trim()) throw new Error(`Claude Code wrote no compaction summary into ${st.transcript}`);
  return { summary: text };
}

/**
 * GENERATE: a hidden completion, `claude -p --model <id> --no-session-persistence` in an empty directory with
 * every built-in tool disallowed, the gateway's context and the prompt as its prompt. The model must be one
 * the host offers (the gateway refuses others with ModelNotFoundError); Claude Code's report of the model it
 * used is checked against it.
 */
export async function generateText(opts: ClaudeRunOptions, p: GeneratePayload): Promise<Record<string, unknown>> {
  const context = (p.context ?? []).map((m) => `${m.role}: ${m.text}`).join('\n\n');
  const prompt = context ? `Conversation so far:\n\n${context}\n\n---\n\n${p.prompt}` : p.prompt;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-generate-'));
  try {
    const r = await runClaude(opts, ['-p', prompt, '--model', p.model.modelID, '--no-session-persistence', '--output-format', 'json', '--disallowedTools', ...ALL_TOOLS], dir);
    let out: { result?: unknown; is_error?: unknown; modelUsage?: Record<string, unknown>; usage?: unknown } | null = null;
    try { out = JSON.parse(r.out.trim().split('\n').at(-1) ?? ''); } catch { /* below */ }
    if (!out || r.code !== 0 || out.is_error) throw new Error(`claude -p exited ${r.code}: ${String(out?.result ?? r.err).slice(0, 500)}`);
    const used = Object.keys(out.modelUsage ?? {});
    if (used.length && !used.includes(p.model.modelID)) throw new Error(`Claude Code answered with ${used.join(', ')}, not the model asked for`);
    const usage = usageOf(out.usage);
    return {
      // Input tokens in the one meaning: the cached ones included (Anthropic's input_tokens leaves them out).
      text: String(out.result ?? ''), inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0,
      providerID: 'anthropic', modelID: p.model.modelID,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
