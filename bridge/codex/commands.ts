// The gateway's commands as Codex carries them out (the host's compact and generate): Codex's own compaction
// through its app-server, a hidden `codex exec --ephemeral` completion. The host checks that the thread may run
// them; these run Codex.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { within } from '../hooks-host/admission.js';
import { runHidden } from '../hooks-host/host-commands.js';
import { startAppServer } from './app-server.js';
import { findCodexBinary } from './launch.js';
import { parseRollout } from './rollout.js';

/** What the commands need of the host's options. */
export interface CodexRunOptions { codexBin?: string; codexEnv?: NodeJS.ProcessEnv }

export interface GeneratePayload { prompt: string; model: { providerID: string; modelID: string }; context?: { role: string; text: string }[] }

/**
 * COMPACT_SESSION: Codex's own compaction, through a `codex app-server` of the host's (`thread/resume`, then
 * `thread/compact/start`; the host runs it while no Codex process of the thread runs). Codex asks the model for a
 * handoff summary and writes it into the rollout (a `compacted` line: the context the next `codex exec resume`
 * sends); that summary is the reply. Codex summarizes its rollout (with the corrections the host wrote into it).
 */
export async function compactThread(opts: CodexRunOptions, id: string, st: { cwd: string; transcript: string }): Promise<Record<string, unknown>> {
  const bin = opts.codexBin ?? findCodexBinary();
  if (!bin) throw new Error('the codex binary was not found');
  const env: NodeJS.ProcessEnv = { ...(opts.codexEnv ?? process.env), GATEWAY_CODEX_HIDDEN: '1' };
  delete env.GATEWAY_CODEX_LAUNCH;
  const before = parseRollout(fs.readFileSync(st.transcript, 'utf8')).lines.filter((l) => l.type === 'compacted').length;
  const server = await startAppServer(bin, st.cwd || os.tmpdir(), env);
  try {
    await server.call('thread/resume', { threadId: id });
    const done = server.notified('turn/completed', (p) => p?.threadId === id);
    await server.call('thread/compact/start', { threadId: id });
    const turn = await within(done, 120_000, 'codex thread/compact/start');
    if (turn?.turn?.status !== 'completed') throw new Error(`Codex's compaction ended ${turn?.turn?.status ?? '?'}: ${JSON.stringify(turn?.turn?.error ?? null).slice(0, 500)}`);
  } finally {
    await server.close();
  }
  const compacted = parseRollout(fs.readFileSync(st.transcript, 'utf8')).lines.filter((l) => l.type === 'compacted');
  const message = compacted.length > before ? String(compacted.at(-1)!.payload?.message ?? '') : '';
  // Codex prefixes the model's summary with a note for the next model ("…Here is the summary produced by the other language model…:").
  const summary = message.replace(/^Another language model started[\s\S]*?summary[^\n]*:\n/, '').trim();
  if (!summary) throw new Error(`Codex wrote no compaction summary into ${st.transcript}`);
  return { summary };
}

/**
 * GENERATE: a hidden `codex exec --ephemeral -m <model>` in an empty directory (its hooks answer at once:
 * GATEWAY_CODEX_HIDDEN), the gateway's context and the prompt as its prompt; the answer is its last message.
 * OpenAI's input tokens count the cached ones (the gateway's one meaning).
 */
export async function generateText(opts: CodexRunOptions, p: GeneratePayload): Promise<Record<string, unknown>> {
  const bin = opts.codexBin ?? findCodexBinary();
  if (!bin) throw new Error('the codex binary was not found');
  const context = (p.context ?? []).map((m) => `${m.role}: ${m.text}`).join('\n\n');
  const prompt = context ? `Conversation so far:\n\n${context}\n\n---\n\n${p.prompt}` : p.prompt;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-codex-generate-'));
  try {
    const env: NodeJS.ProcessEnv = { ...(opts.codexEnv ?? process.env), GATEWAY_CODEX_HIDDEN: '1' };
    delete env.GATEWAY_CODEX_LAUNCH;
    const r = await runHidden(bin, ['exec', '--ephemeral', '--skip-git-repo-check', '-s', 'read-only', '-m', p.model.modelID, '--json', '-'], dir, env, prompt);
    let text = '';
    let usage: { input_tokens?: unknown; output_tokens?: unknown } | null = null;
    for (const line of r.out.split('\n')) {
      try {
        const ev = JSON.parse(line);
        if (ev?.type === 'item.completed' && ev.item?.type === 'agent_message' && typeof ev.item.text === 'string') text = ev.item.text;
        if (ev?.type === 'turn.completed' && ev.usage) usage = ev.usage;
        if (ev?.type === 'turn.failed' || ev?.type === 'error') throw new Error(String(ev.error?.message ?? ev.message ?? 'failed'));
      } catch (e) { if (!(e instanceof SyntaxError)) throw e; }
    }
    if (r.code !== 0) throw new Error(`codex exec exited ${r.code}: ${r.err.slice(-500)}`);
    return { text, inputTokens: Number(usage?.input_tokens ?? 0), outputTokens: Number(usage?.output_tokens ?? 0), providerID: 'openai', modelID: p.model.modelID };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
