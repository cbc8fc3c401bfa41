// A scripted Gemini API server (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, server-sent events,
// and `:generateContent`), to drive the real Gemini CLI offline (tests, benchmarks): `GOOGLE_GEMINI_BASE_URL` set
// to its URL (http is accepted for 127.0.0.1), `GEMINI_API_KEY` any value, `security.auth.selectedType` =
// `gemini-api-key` in the settings.
//
// The script travels inside the prompt: a line `SCRIPT:` followed by a JSON array of steps. Each step is one model
// response (one request of Gemini CLI's agent loop): `thought` (a thought part, which Gemini CLI shows and stores
// but never sends back), `text`, `shell` (run_shell_command calls), `write` (write_file), `calls` (any other
// function), `usage`. The step answered is found from the call IDs the server gave (`call_s<step>_<n>`, which
// come back in the history) after the last prompt that carries a script; past the end the model answers "done.".
// A prompt with `REPLY:<text>` gets that text (its last one), one without a script `ok`. Every request is kept (`requests`);
// `gate(name)` holds a step marked `{ "gate": name }` until released; `when(text, steps)`: a prompt that contains
// `text` (and no script of its own) runs `steps`. Gemini CLI's side requests (`generateContent`) are answered too:
// the session summary it makes at the next start, and compression (the `<state_snapshot>` it asks for: a summary
// quoting the start of every prompt it was given).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GeminiScriptStep {
  thought?: string;
  text?: string;
  /** run_shell_command calls: the command, or its arguments (`is_background`…). */
  shell?: (string | { command: string; is_background?: boolean; description?: string })[];
  /** write_file calls (a path relative to the project, its content). */
  write?: { file_path: string; content: string }[];
  calls?: { name: string; args: Record<string, unknown> }[];
  usage?: { prompt?: number; cached?: number; candidates?: number; thoughts?: number };
  gate?: string;
  /** Answer HTTP 400 with this message instead (Gemini CLI ends the turn with an API error). */
  fail?: string;
}

export interface GeminiContent { role: string; parts: GeminiPart[] }
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name?: string; response?: Record<string, unknown> };
}
export interface RecordedRequest { model: string; method: 'stream' | 'generate'; contents: GeminiContent[]; body: unknown; at: number }

export interface ScriptedGemini {
  /** The base URL (GOOGLE_GEMINI_BASE_URL). */
  url: string;
  requests: RecordedRequest[];
  release(gate: string): void;
  when(text: string, steps: GeminiScriptStep[]): void;
  waitGate(gate: string): Promise<void>;
  close(): Promise<void>;
}

export function geminiScript(intro: string, steps: GeminiScriptStep[]): string {
  return `${intro}\nSCRIPT:${JSON.stringify(steps)}`;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request's contents, read defensively (what is not a content with parts is left out). */
export function contentsOf(body: unknown): GeminiContent[] {
  const raw = isObj(body) && Array.isArray(body.contents) ? body.contents : [];
  const out: GeminiContent[] = [];
  for (const c of raw) {
    if (!isObj(c) || !Array.isArray(c.parts)) continue;
    const parts: GeminiPart[] = [];
    for (const p of c.parts) {
      if (!isObj(p)) continue;
      const part: GeminiPart = {};
      if (typeof p.text === 'string') part.text = p.text;
      if (p.thought === true) part.thought = true;
      if (isObj(p.functionCall)) part.functionCall = { id: typeof p.functionCall.id === 'string' ? p.functionCall.id : undefined, name: typeof p.functionCall.name === 'string' ? p.functionCall.name : undefined };
      if (isObj(p.functionResponse)) {
        const r = p.functionResponse;
        part.functionResponse = { id: typeof r.id === 'string' ? r.id : undefined, name: typeof r.name === 'string' ? r.name : undefined, response: isObj(r.response) ? r.response : undefined };
      }
      parts.push(part);
    }
    out.push({ role: typeof c.role === 'string' ? c.role : 'user', parts });
  }
  return out;
}

/** The user prompts of a request: text parts of user contents, without Gemini CLI's own `<session_context>`… parts. */
export function prompts(contents: GeminiContent[]): { index: number; text: string }[] {
  return contents.map((c, index) => ({ c, index })).filter(({ c }) => c.role === 'user' && c.parts.some((p) => p.text !== undefined))
    .map(({ c, index }) => ({ index, text: c.parts.map((p) => p.text ?? '').filter((t) => !t.trimStart().startsWith('<')).join('\n') }))
    .filter((p) => p.text.trim() !== '');
}

/** Every text the request carries (prompts, answers, tool results), for tests that check what the model was sent. */
export function sentText(r: RecordedRequest): string {
  return JSON.stringify(r.contents);
}

export interface ScriptRule { text: string; steps: GeminiScriptStep[] }

export function pickStep(contents: GeminiContent[], rules: ScriptRule[] = []): { step: GeminiScriptStep; n: number } | 'none' | 'done' {
  const last = prompts(contents).at(-1);
  if (!last) return 'none';
  // The last script: Gemini CLI sends two prompts in a row as one content (a turn cut short left no answer between).
  const at = [...last.text.matchAll(/(^|\n)SCRIPT:/g)].at(-1);
  let steps: GeminiScriptStep[];
  if (!at) {
    const rule = rules.find((r) => last.text.includes(r.text));
    if (!rule) return 'none';
    steps = rule.steps;
  } else {
    try { steps = JSON.parse(last.text.slice((at.index ?? 0) + at[0].length).split('\n')[0]); } catch { return 'none'; }
  }
  let n = 0;
  for (const c of contents.slice(last.index + 1)) {
    for (const p of c.parts) {
      const m = /call_s(\d+)_/.exec(p.functionCall?.id ?? p.functionResponse?.id ?? '');
      if (m) n = Math.max(n, Number(m[1]) + 1);
    }
  }
  return n < steps.length ? { step: steps[n], n } : 'done';
}

let seq = 0;

function responseParts(step: GeminiScriptStep, n: number): Record<string, unknown>[] {
  const parts: Record<string, unknown>[] = [];
  if (step.thought) parts.push({ text: step.thought, thought: true });
  if (step.text) parts.push({ text: step.text });
  let k = 0;
  const call = (name: string, args: Record<string, unknown>) => parts.push({ functionCall: { id: `call_s${n}_${k++}_${++seq}`, name, args } });
  for (const s of step.shell ?? []) call('run_shell_command', typeof s === 'string' ? { command: s } : s);
  for (const w of step.write ?? []) call('write_file', w);
  for (const c of step.calls ?? []) call(c.name, c.args);
  return parts;
}

function usageOf(step: GeminiScriptStep) {
  const u = { prompt: 100, cached: 0, candidates: 20, thoughts: 0, ...step.usage };
  return { promptTokenCount: u.prompt, cachedContentTokenCount: u.cached, candidatesTokenCount: u.candidates, thoughtsTokenCount: u.thoughts,
    totalTokenCount: u.prompt + u.candidates + u.thoughts };
}

/** One model response as Gemini's API sends it (streamed: a chunk per part, the usage and finish reason on the last). */
function answer(res: http.ServerResponse, method: 'stream' | 'generate', model: string, step: GeminiScriptStep, n: number) {
  const parts = responseParts(step, n);
  if (!parts.length) parts.push({ text: 'ok' });
  const chunk = (ps: Record<string, unknown>[], last: boolean) => ({
    candidates: [{ content: { role: 'model', parts: ps }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
    ...(last ? { usageMetadata: usageOf(step) } : {}), modelVersion: model, responseId: `resp_${++seq}`,
  });
  if (method === 'generate') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(chunk(parts, true)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  parts.forEach((p, i) => res.write(`data: ${JSON.stringify(chunk([p], i === parts.length - 1))}\r\n\r\n`));
  res.end();
}

export async function startScriptedGemini(opts: { log?: (m: string) => void } = {}): Promise<ScriptedGemini> {
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
      opts.log?.(`${req.method} ${p}`);
      const m = /\/models\/([^/:]+):(streamGenerateContent|generateContent)$/.exec(p);
      if (req.method !== 'POST' || !m) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 404, message: `not here: ${p}`, status: 'NOT_FOUND' } }));
        return;
      }
      let body: unknown = null;
      try { body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null; } catch { body = null; }
      const model = decodeURIComponent(m[1]);
      const method = m[2] === 'streamGenerateContent' ? 'stream' : 'generate';
      const contents = contentsOf(body);
      requests.push({ model, method, contents, body, at: Date.now() });
      const lastUser = contents.filter((c) => c.role === 'user').at(-1)?.parts.map((x) => x.text ?? '').join('\n') ?? '';
      // Compression: a `<state_snapshot>` quoting every prompt the history holds (so a test sees what it was given).
      if (/<state_snapshot>/.test(lastUser)) {
        // Short (each prompt's start): Gemini CLI keeps a compressed history only when it is smaller than before.
        const seen = prompts(contents.slice(0, -1)).map((x) => x.text.replace(/\s+/g, ' ').slice(0, 40)).join(' | ').slice(0, 1_000);
        return answer(res, method, model, { text: `<state_snapshot>SCRIPTED SUMMARY of: ${seen}</state_snapshot>` }, 0);
      }
      // The summary of an earlier session Gemini CLI asks for at its next start.
      if (/Summarize the user's primary intent/.test(lastUser)) return answer(res, method, model, { text: 'scripted session summary' }, 0);
      const asked = [...(prompts(contents).at(-1)?.text ?? '').matchAll(/REPLY:(.*)/g)].at(-1); // the last: a quoted context may hold others
      if (asked) return answer(res, method, model, { text: asked[1] }, 0);
      const picked = pickStep(contents, rules);
      if (picked === 'none' || picked === 'done') return answer(res, method, model, { text: picked === 'done' ? 'done.' : 'ok' }, 0);
      const { step, n } = picked;
      if (step.gate) {
        const g = gate(step.gate);
        g.here = true;
        g.arrived.splice(0).forEach((f) => f());
        if (!g.open) await new Promise<void>((r) => g.waiting.push(r));
      }
      if (step.fail) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 400, message: step.fail, status: 'INVALID_ARGUMENT' } }));
        return;
      }
      answer(res, method, model, step, n);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = address && typeof address === 'object' ? (address satisfies AddressInfo).port : 0;
  return {
    url: `http://127.0.0.1:${port}`, requests,
    release(name) { const g = gate(name); g.open = true; g.waiting.splice(0).forEach((f) => f()); },
    when(text, steps) { rules.push({ text, steps }); },
    waitGate(name) { const g = gate(name); return g.here ? Promise.resolve() : new Promise<void>((r) => g.arrived.push(r)); },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
