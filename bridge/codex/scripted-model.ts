// A scripted OpenAI Responses API server (server-sent events), to drive the real `codex` binary offline (tests,
// local experiments): a Codex provider with `base_url = "http://127.0.0.1:<port>/v1"`, `wire_api = "responses"`.
//
// The script travels inside the prompt: a line `SCRIPT:` followed by a JSON array of steps. Each step is one
// model response (one request of Codex's agent loop): `reasoning` (a summary), `text`, `shell` (exec_command
// calls), `patch` (apply_patch calls, a freeform tool: offered by Codex for bundled model slugs such as gpt-5.5),
// `usage`. The step answered is found from the call IDs the server gave (`call_s<step>_<n>`) after the last prompt
// that carries a script; past the end the model answers "done.". A prompt with `REPLY:<text>` gets that text
// (whatever scripts it quotes), one without a script `ok`. Every request body is kept (`requests`); `gate(name)` holds a step marked `{ "gate": name }`
// until released (a turn kept running for as long as a test needs, without sleeps). `when(text, steps)`: a prompt
// that contains `text` (and no script of its own) runs `steps`, e.g. one the gateway writes (review comments).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CodexScriptStep {
  reasoning?: string;
  text?: string;
  /** exec_command calls: the command, and how long Codex waits for it before it answers "still running". */
  shell?: (string | { cmd: string; yield_time_ms?: number })[];
  /** apply_patch calls (the patch text, `*** Begin Patch` …). */
  patch?: string[];
  /**
   * Other function calls (an MCP server's tool: `namespace` `mcp__<server>`, its `name`; a subagent:
   * `multi_agent_v1` `spawn_agent`, `wait_agent` with `"$AGENT_ID"`, replaced by the last spawned agent's ID;
   * `write_stdin` with `"$SHELL_SESSION"`, replaced by the session of the last shell still running).
   */
  calls?: { name: string; namespace?: string; arguments: Record<string, unknown> }[];
  usage?: { input_tokens?: number; cached_tokens?: number; output_tokens?: number; reasoning_tokens?: number };
  gate?: string;
  /** Answer with a `response.failed` of this message instead (the turn fails). */
  fail?: string;
}

export interface RecordedRequest { body: any; headers: http.IncomingHttpHeaders; at: number }

export interface ScriptedResponses {
  url: string;
  requests: RecordedRequest[];
  release(gate: string): void;
  /** From now on a prompt containing `text` (and no script) runs `steps`. */
  when(text: string, steps: CodexScriptStep[]): void;
  waitGate(gate: string): Promise<void>;
  close(): Promise<void>;
}

export function codexScript(intro: string, steps: CodexScriptStep[]): string {
  return `${intro}\nSCRIPT:${JSON.stringify(steps)}`;
}

/** The text of a Responses input message. */
export function inputText(item: any): string {
  if (typeof item?.content === 'string') return item.content;
  if (!Array.isArray(item?.content)) return '';
  return item.content.map((c: any) => (typeof c?.text === 'string' ? c.text : '')).join('\n');
}

/** The user prompts of a request (not Codex's own `<environment_context>`, `<turn_aborted>`… user messages). */
export function prompts(input: any[]): { index: number; text: string }[] {
  return input.map((it, index) => ({ it, index })).filter(({ it }) => it?.type === 'message' && it.role === 'user')
    .map(({ it, index }) => ({ index, text: inputText(it) })).filter((p) => !p.text.trimStart().startsWith('<'));
}

/** A prompt containing `text` (and no script of its own) runs `steps` (ScriptedResponses.when). */
export interface ScriptRule { text: string; steps: CodexScriptStep[] }

export function pickStep(input: any[], rules: ScriptRule[] = []): { step: CodexScriptStep; n: number } | 'none' | 'done' {
  const last = prompts(input).at(-1);
  if (!last) return 'none';
  const at = /(^|\n)SCRIPT:/.exec(last.text);
  let steps: CodexScriptStep[];
  if (!at) {
    const rule = rules.find((r) => last.text.includes(r.text));
    if (!rule) return 'none';
    steps = rule.steps;
  } else {
    try { steps = JSON.parse(last.text.slice(at.index + at[0].length).split('\n')[0]); } catch { return 'none'; }
  }
  let n = 0;
  for (const it of input.slice(last.index + 1)) {
    const m = /^call_s(\d+)_/.exec(String(it?.call_id ?? ''));
    if (m && (it.type === 'function_call' || it.type === 'custom_tool_call')) n = Math.max(n, Number(m[1]) + 1);
  }
  return n < steps.length ? { step: steps[n], n } : 'done';
}

let seq = 0;

function send(res: http.ServerResponse, type: string, data: Record<string, unknown>) {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

/** The unified-exec session of the last shell the input shows still running (`Process running with session ID n`). */
function lastShellSession(input: any[]): number | null {
  for (const it of [...input].reverse()) {
    const m = it?.type === 'function_call_output' && typeof it.output === 'string' ? /Process running with session ID (\d+)/.exec(it.output) : null;
    if (m) return Number(m[1]);
  }
  return null;
}

/** The ID of the agent the last `spawn_agent` call of the input started (its output is `{"agent_id": …}`). */
function lastAgent(input: any[]): string | null {
  for (const it of [...input].reverse()) {
    if (it?.type !== 'function_call_output' || typeof it.output !== 'string') continue;
    try { const o = JSON.parse(it.output); if (typeof o?.agent_id === 'string') return o.agent_id; } catch { /* not JSON */ }
  }
  return null;
}

function stream(res: http.ServerResponse, model: string, step: CodexScriptStep, n: number, input: any[] = []) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const id = `resp_${Date.now().toString(36)}_${++seq}`;
  send(res, 'response.created', { response: { id, model } });
  let outputIndex = 0;
  const item = (it: Record<string, unknown>) => {
    send(res, 'response.output_item.added', { output_index: outputIndex, item: it });
    send(res, 'response.output_item.done', { output_index: outputIndex++, item: it });
  };
  if (step.reasoning) item({ type: 'reasoning', id: `rs_${++seq}`, summary: [{ type: 'summary_text', text: step.reasoning }] });
  if (step.text) item({ type: 'message', id: `msg_${++seq}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: step.text, annotations: [] }] });
  let k = 0;
  for (const s of step.shell ?? []) {
    const args = typeof s === 'string' ? { cmd: s } : s;
    item({ type: 'function_call', id: `fc_${++seq}`, name: 'exec_command', arguments: JSON.stringify(args), call_id: `call_s${n}_${k++}_${seq}` });
  }
  for (const c of step.calls ?? []) {
    const args = JSON.stringify(c.arguments).replaceAll('"$AGENT_ID"', JSON.stringify(lastAgent(input)))
      .replaceAll('"$SHELL_SESSION"', JSON.stringify(lastShellSession(input)));
    item({ type: 'function_call', id: `fc_${++seq}`, name: c.name, ...(c.namespace ? { namespace: c.namespace } : {}), arguments: args, call_id: `call_s${n}_${k++}_${seq}` });
  }
  for (const p of step.patch ?? []) item({ type: 'custom_tool_call', id: `ctc_${++seq}`, name: 'apply_patch', input: p, call_id: `call_s${n}_${k++}_${seq}` });
  const u = { input_tokens: 100, cached_tokens: 0, output_tokens: 20, reasoning_tokens: 0, ...step.usage };
  send(res, 'response.completed', { response: { id, model, usage: {
    input_tokens: u.input_tokens, input_tokens_details: { cached_tokens: u.cached_tokens },
    output_tokens: u.output_tokens, output_tokens_details: { reasoning_tokens: u.reasoning_tokens }, total_tokens: u.input_tokens + u.output_tokens,
  } } });
  res.end();
}

export async function startScriptedResponses(opts: { log?: (m: string) => void } = {}): Promise<ScriptedResponses> {
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
      const p = (req.url ?? '/').split('?')[0];
      let body: any = null;
      try { body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null; } catch { body = null; }
      opts.log?.(`${req.method} ${p}`);
      if (req.method !== 'POST' || !p.endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not here' } }));
        return;
      }
      requests.push({ body, headers: req.headers, at: Date.now() });
      const model = String(body?.model ?? 'scripted');
      const input: any[] = Array.isArray(body?.input) ? body.input : [];
      // Codex's compaction request (its last user message asks for a handoff summary): the summary quotes every
      // earlier prompt, so a test sees what the compaction was given.
      const lastUser = input.filter((it) => it?.type === 'message' && it.role === 'user').at(-1);
      if (/CONTEXT CHECKPOINT COMPACTION/.test(inputText(lastUser))) {
        const seen = prompts(input).map((p) => p.text).filter((t) => !/CONTEXT CHECKPOINT COMPACTION/.test(t)).join(' | ').replace(/\s+/g, ' ').slice(0, 2_000);
        return stream(res, model, { text: `SCRIPTED SUMMARY of: ${seen}` }, 0);
      }
      const asked = /REPLY:(.*)/.exec(prompts(input).at(-1)?.text ?? '');
      if (asked) return stream(res, model, { text: asked[1] }, 0);
      const picked = pickStep(input, rules);
      if (picked === 'none' || picked === 'done') {
        const last = prompts(input).at(-1)?.text ?? '';
        const reply = /REPLY:(.*)/.exec(last)?.[1] ?? (picked === 'done' ? 'done.' : 'ok');
        return stream(res, model, { text: reply }, 0);
      }
      const { step, n } = picked;
      if (step.gate) {
        const g = gate(step.gate);
        g.here = true;
        g.arrived.splice(0).forEach((f) => f());
        if (!g.open) await new Promise<void>((r) => g.waiting.push(r));
      }
      if (step.fail) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        send(res, 'response.created', { response: { id: `resp_f${++seq}` } });
        send(res, 'response.failed', { response: { id: `resp_f${seq}`, error: { code: 'invalid_prompt', message: step.fail } } });
        res.end();
        return;
      }
      stream(res, model, step, n, input);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`, requests,
    release(name) { const g = gate(name); g.open = true; g.waiting.splice(0).forEach((f) => f()); },
    when(text, steps) { rules.push({ text, steps }); },
    waitGate(name) { const g = gate(name); return g.here ? Promise.resolve() : new Promise<void>((r) => g.arrived.push(r)); },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
