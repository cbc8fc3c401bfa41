// A tiny OpenAI-compatible chat-completions server that streams scripted steps, used to drive a real OpenCode
// server without any model service (tests and local experiments).
//
// The script travels inside the user prompt: a line `SCRIPT:` followed by a JSON array of steps. Each step is one
// model response: `{ "text": "..." }` or `{ "tool": "write", "args": {...} }` (several tool calls in one step:
// `{ "tools": [{ "tool", "args" }, ...] }`). The step to answer is the number of assistant turns after the last
// user message that carries a script; past the end of the script the model answers "done." and stops.
// Requests without tools (title generation and the like) get a short plain text; one whose last user message has
// a line `REPLY:<text>` gets that text. A step may carry `reasoning` (streamed as reasoning_content) and `usage`
// (the usage of that response, OpenAI style: prompt_tokens, completion_tokens, prompt_tokens_details...).
// `when(text, steps)`: a user message that contains `text` (and no script of its own) runs `steps`, e.g. a prompt
// the gateway writes (review comments sent to the agent), which cannot carry a script line.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptStep {
  text?: string;
  /** The text, base64-encoded: a text the prompt (which carries the script) must not contain, e.g. a secret. */
  text64?: string;
  tool?: string;
  args?: Record<string, unknown>;
  tools?: Array<{ tool: string; args: Record<string, unknown> }>;
  reasoning?: string;
  usage?: Record<string, unknown>;
}

export interface ScriptedModel {
  url: string; // base URL ending in /v1
  port: number;
  requests: number;
  /** The bodies of the last 200 chat-completion requests, oldest first (what OpenCode sent the model). */
  bodies: string[];
  /** From now on a user message containing `text` (and no script) runs `steps`. */
  when(text: string, steps: ScriptStep[]): void;
  close(): Promise<void>;
}

/** A user message containing `text` (and no script of its own) runs `steps` (ScriptedModel.when). */
export interface ScriptRule { text: string; steps: ScriptStep[] }

export function scriptPrompt(intro: string, steps: ScriptStep[]): string {
  return `${intro}\nSCRIPT:${JSON.stringify(steps)}`;
}

type ChatMessage = { role: string; content?: unknown; tool_calls?: unknown[] };

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((c) => (c && typeof c === "object" && "text" in c ? String((c as { text: unknown }).text) : "")).join("");
  return "";
}

export function pickStep(messages: ChatMessage[], rules: ScriptRule[] = []): ScriptStep | "none" {
  let scriptAt = -1;
  let steps: ScriptStep[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "user") continue;
    const t = textOf(m.content);
    const at = t.indexOf("SCRIPT:");
    if (at < 0) {
      const rule = rules.find((r) => t.includes(r.text));
      if (!rule) continue;
      steps = rule.steps;
      scriptAt = i;
      break;
    }
    try {
      steps = JSON.parse(t.slice(at + "SCRIPT:".length).split("\n")[0]);
      scriptAt = i;
    } catch {
      continue;
    }
    break;
  }
  if (scriptAt < 0) return "none";
  const turns = messages.slice(scriptAt + 1).filter((m) => m.role === "assistant").length;
  return steps[turns] ?? { text: "done." };
}

export async function startScriptedModel(port = 0): Promise<ScriptedModel> {
  let seq = 0;
  const state = { requests: 0 };
  const bodies: string[] = [];
  const rules: ScriptRule[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      state.requests++;
      if (req.method === "POST") { bodies.push(body); if (bodies.length > 200) bodies.shift(); }
      if (req.method === "GET" && req.url?.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: "scripted", object: "model" }] }));
        return;
      }
      let parsed: { messages?: ChatMessage[]; tools?: unknown[]; stream?: boolean; model?: string } = {};
      try {
        parsed = JSON.parse(body || "{}");
      } catch {
        /* empty */
      }
      const messages = parsed.messages ?? [];
      const picked = parsed.tools && parsed.tools.length > 0 ? pickStep(messages, rules) : "none";
      const lastUser = [...messages].reverse().find((m) => m.role === "user");
      const reply = lastUser ? /(?:^|\n)REPLY:([^\n]*)/.exec(textOf(lastUser.content))?.[1] : undefined;
      const step: ScriptStep = picked === "none" ? { text: reply ?? "Scripted session" } : picked;
      if (step.text64 !== undefined) step.text = Buffer.from(step.text64, "base64").toString("utf8");
      const usage = step.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      const id = `chatcmpl-${++seq}`;
      const model = parsed.model ?? "scripted";
      const created = Math.floor(Date.now() / 1000);
      const calls = step.tools ?? (step.tool ? [{ tool: step.tool, args: step.args ?? {} }] : []);
      if (!parsed.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id, object: "chat.completion", created, model,
            choices: [{
              index: 0,
              message: calls.length
                ? { role: "assistant", content: null, tool_calls: calls.map((c, i) => ({ id: `call_${seq}_${i}`, type: "function", function: { name: c.tool, arguments: JSON.stringify(c.args) } })) }
                : { role: "assistant", content: step.text ?? "" },
              finish_reason: calls.length ? "tool_calls" : "stop",
            }],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      const send = (delta: unknown, finish: string | null, usage?: unknown) =>
        res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`);
      send({ role: "assistant", content: "" }, null);
      if (step.reasoning) send({ reasoning_content: step.reasoning }, null);
      if (step.text) send({ content: step.text }, null);
      calls.forEach((c, i) =>
        send({ tool_calls: [{ index: i, id: `call_${seq}_${i}`, type: "function", function: { name: c.tool, arguments: JSON.stringify(c.args) } }] }, null),
      );
      send({}, calls.length ? "tool_calls" : "stop", usage);
      res.write("data: [DONE]\n\n");
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  const p = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${p}/v1`,
    port: p,
    get requests() {
      return state.requests;
    },
    bodies,
    when(text, steps) { rules.push({ text, steps }); },
    close: () => new Promise<void>((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}

if (process.argv[1] && process.argv[1].endsWith("scripted-model.ts")) {
  const port = Number(process.argv[2] ?? 0);
  startScriptedModel(port).then((m) => console.log(`scripted model on ${m.url}`));
}
