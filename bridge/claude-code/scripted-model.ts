// A scripted Anthropic Messages API server (streaming server-sent events), to drive the real `claude`
// binary offline (tests, the hook bench, local experiments): ANTHROPIC_BASE_URL=http://127.0.0.1:<port>.
//
// The script travels inside a user prompt: a line `SCRIPT:` followed by a JSON array of steps. Each step is
// one model response (one request of Claude Code's agent loop): `thinking`, `text`, `tools` ([{ name, input }],
// streamed as tool_use blocks, stop_reason "tool_use") and `usage`. The step answered is the number of
// assistant messages after the last user message that carries a script; past the end the model answers
// "done." and stops. A request without tools (Claude Code's side requests: titles, summaries) or without a
// script gets a short text (`REPLY:<text>` in its last user message chooses it). Every request body is kept
// (`requests`), so a test can check what the model was sent. `gate(name)` holds a step marked
// `{ "gate": name }` until released (a turn kept running for as long as a test needs, without sleeps).
// `when(text, steps)`: a user message that contains `text` (and no script of its own) runs `steps`, e.g. a prompt
// the gateway writes (review comments sent to the agent), which cannot carry a script line.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptTool { name: string; input: Record<string, unknown> }
export interface ScriptStep {
  thinking?: string;
  text?: string;
  tools?: ScriptTool[];
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  /** Held until `release(gate)` (the request is answered then). */
  gate?: string;
  /** Answer with an HTTP error of this status instead (e.g. 400: the turn fails). */
  fail?: number;
}

export interface RecordedRequest { path: string; body: any; at: number }

export interface ScriptedAnthropic {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Requests that carried tools (the agent loop's own), in order. */
  agentRequests(): RecordedRequest[];
  release(gate: string): void;
  /** From now on a user message containing `text` (and no script) runs `steps`. */
  when(text: string, steps: ScriptStep[]): void;
  /** Resolves when a request is waiting at `gate`. */
  waitGate(gate: string): Promise<void>;
  close(): Promise<void>;
}

export function scriptPrompt(intro: string, steps: ScriptStep[]): string {
  return `${intro}\nSCRIPT:${JSON.stringify(steps)}`;
}

type Msg = { role: string; content: unknown };

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (c && typeof c === 'object' && (c as any).type === 'text' ? String((c as any).text) : '')).join('\n');
  return '';
}

/** The step a request answers, or 'none' (no script in its messages), or 'done' (past the script's end). */
/** A user message containing `text` (and no script of its own) runs `steps` (ScriptedAnthropic.when). */
export interface ScriptRule { text: string; steps: ScriptStep[] }

export function pickStep(messages: Msg[], rules: ScriptRule[] = []): ScriptStep | 'none' | 'done' {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'user') continue;
    const t = textOf(m.content);
    // The first `SCRIPT:` that starts a line (a script may carry a subagent's prompt with a script of its own).
    const at = /(^|\n)SCRIPT:/.exec(t);
    let steps: ScriptStep[];
    if (!at) {
      const rule = rules.find((r) => t.includes(r.text));
      if (!rule) continue;
      steps = rule.steps;
    } else {
      try { steps = JSON.parse(t.slice(at.index + at[0].length).split('\n')[0]); } catch { continue; }
    }
    const n = messages.slice(i + 1).filter((x) => x.role === 'assistant').length;
    return n < steps.length ? steps[n] : 'done';
  }
  return 'none';
}

let seq = 0;
function sse(res: http.ServerResponse, type: string, data: Record<string, unknown>) {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

function stream(res: http.ServerResponse, model: string, step: ScriptStep) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${++seq}` });
  const u = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...step.usage };
  sse(res, 'message_start', { message: { id: `msg_scripted_${Date.now()}_${++seq}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
    usage: { input_tokens: u.input_tokens, output_tokens: 1, cache_read_input_tokens: u.cache_read_input_tokens, cache_creation_input_tokens: u.cache_creation_input_tokens } } });
  let index = 0;
  if (step.thinking) {
    sse(res, 'content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    sse(res, 'content_block_delta', { index, delta: { type: 'thinking_delta', thinking: step.thinking } });
    sse(res, 'content_block_delta', { index, delta: { type: 'signature_delta', signature: 'c2NyaXB0ZWQ=' } });
    sse(res, 'content_block_stop', { index });
    index++;
  }
  if (step.text) {
    sse(res, 'content_block_start', { index, content_block: { type: 'text', text: '' } });
    sse(res, 'content_block_delta', { index, delta: { type: 'text_delta', text: step.text } });
    sse(res, 'content_block_stop', { index });
    index++;
  }
  for (const t of step.tools ?? []) {
    sse(res, 'content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_${Date.now().toString(36)}${++seq}`, name: t.name, input: {} } });
    sse(res, 'content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(t.input) } });
    sse(res, 'content_block_stop', { index });
    index++;
  }
  sse(res, 'message_delta', { delta: { stop_reason: step.tools?.length ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: u.output_tokens } });
  sse(res, 'message_stop', {});
  res.end();
}

function plain(res: http.ServerResponse, model: string, text: string, streaming: boolean) {
  if (streaming) return stream(res, model, { text });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: `msg_plain_${++seq}`, type: 'message', role: 'assistant', model, content: [{ type: 'text', text }],
    stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 2 } }));
}

export async function startScriptedAnthropic(opts: { log?: (m: string) => void } = {}): Promise<ScriptedAnthropic> {
  const requests: RecordedRequest[] = [];
  const rules: ScriptRule[] = [];
  const gates = new Map<string, { open: boolean; waiting: (() => void)[]; arrived: (() => void)[]; here: boolean }>();
  const gate = (name: string) => {
    let g = gates.get(name);
    if (!g) { g = { open: false, waiting: [], arrived: [], here: false }; gates.set(name, g); }
    return g;
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const path = (req.url ?? '/').split('?')[0];
      let body: any = null;
      try { body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null; } catch { body = null; }
      requests.push({ path, body, at: Date.now() });
      opts.log?.(`${req.method} ${path}`);
      if (req.method !== 'POST' || !path.endsWith('/v1/messages')) {
        if (path.endsWith('/count_tokens')) { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"input_tokens":10}'); return; }
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not here' } }));
        return;
      }
      const model = String(body?.model ?? 'claude-scripted');
      const messages: Msg[] = Array.isArray(body?.messages) ? body.messages : [];
      const streaming = !!body?.stream;
      const tools = Array.isArray(body?.tools) && body.tools.length > 0;
      // Claude Code's compaction request (its last user message asks for a <summary> block): the summary
      // quotes every earlier user and assistant text, so a test sees what the compaction was given.
      const lastUser = textOf(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
      if (/<summary>/.test(lastUser) && /summar/i.test(lastUser)) {
        const seen = messages.slice(0, -1).map((m) => textOf(m.content)).filter(Boolean).join(' | ').replace(/\s+/g, ' ').slice(0, 2_000);
        return plain(res, model, `<analysis>scripted</analysis>\n<summary>SCRIPTED SUMMARY of: ${seen}</summary>`, streaming);
      }
      const step = tools ? pickStep(messages, rules) : 'none';
      if (step === 'none' || step === 'done') {
        const last = textOf(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
        const reply = /REPLY:(.*)/.exec(last)?.[1] ?? (step === 'done' ? 'done.' : 'ok');
        return plain(res, model, reply, streaming);
      }
      if (step.gate) {
        const g = gate(step.gate);
        g.here = true;
        g.arrived.splice(0).forEach((f) => f());
        if (!g.open) await new Promise<void>((r) => g.waiting.push(r));
      }
      if (step.fail) {
        res.writeHead(step.fail, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'scripted failure' } }));
        return;
      }
      stream(res, model, step);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`, port, requests,
    agentRequests: () => requests.filter((r) => Array.isArray(r.body?.tools) && r.body.tools.length > 0),
    release(name) { const g = gate(name); g.open = true; g.waiting.splice(0).forEach((f) => f()); },
    when(text, steps) { rules.push({ text, steps }); },
    waitGate(name) { const g = gate(name); return g.here ? Promise.resolve() : new Promise<void>((r) => g.arrived.push(r)); },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
