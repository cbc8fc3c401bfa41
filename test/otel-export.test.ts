import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { begin, createSession, ok, registerHost, settle } from './fixtures.js';
import { until } from './support/until.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';
import { buildApp } from '../server/app.js';
import { loadOtelConfig, type OtelExportConfig } from '../server/otel-export.js';
import { spanIdOf, traceIdOf } from '../domain/traces.js';
import { RETRACTION_PLACEHOLDER } from '../domain/corrections.js';
import { settleExecution } from '../domain/executions.js';
import { SYSTEM } from '../domain/access.js';
import type { Sql } from '../db/connection.js';
import { rmSync, writeFileSync } from 'node:fs';
import { ReferenceHost } from '../host/host.js';
import { WorktreeCapturer } from '../host/capture.js';
import { changesetKit } from './support/changeset-kit.js';

const otel = (r: OtlpReceiver, extra: Partial<OtelExportConfig> = {}): OtelExportConfig => ({
  url: r.url, protocol: 'http/protobuf', headers: { 'x-api-key': 'k1' }, captureContent: false, serviceName: 'gw-test', pollMs: 0, ...extra,
});

type Host = { hostID: string; token: string };
const METRICS_TOKEN = 'metrics-token-for-the-otel-test';

/** One execution with a prompt, a model response (text and two tool calls, one failed) and usage, settled. */
async function runExecution(g: TestGateway, host: Host, sessionID: string, opts: { status?: string; prompt?: string } = {}) {
  const e = await begin(g, host, sessionID);
  const append = (input: Record<string, unknown>) => ok(g, `mutation($input: AppendMessageInput!) { appendMessage(input: $input) {
    __typename ... on Message { id parts { id } } ... on Error { message } } }`, { input: { sessionID, executionID: e.id, ...input } }, host.token);
  const t0 = Date.now();
  const user = await append({ role: 'USER', origin: 'PROMPT', parts: [{ type: 'TEXT', text: opts.prompt ?? 'fix the bug, key sk-secret' }] });
  const reply = await append({
    role: 'ASSISTANT', origin: 'MODEL', externalID: `msg_ext_${e.id}`, parts: [
      { type: 'TEXT', text: 'Looking at it.' },
      { type: 'TOOL', tool: 'bash', input: { command: 'cat .env' }, output: 'SECRET=1', status: 'completed', externalID: `call_ok_${e.id}`,
        startedAt: new Date(t0).toISOString(), endedAt: new Date(t0 + 5).toISOString() },
      { type: 'TOOL', tool: 'edit', input: { path: 'a.ts' }, output: 'no such file', status: 'error', externalID: `call_err_${e.id}` },
    ],
  });
  expect(reply.__typename).toBe('Message');
  const status = opts.status ?? 'SUCCEEDED';
  await settle(g, host, e.id, status, {
    ...(status === 'FAILED' ? { error: 'model refused: sk-secret', errorName: 'APIError' } : {}),
    usage: { inputTokens: 120, outputTokens: 30, reasoningTokens: 7, cacheReadTokens: 50, cacheWriteTokens: 5, cost: 0.0125 },
    model: { providerID: 'anthropic', modelID: 'claude-sonnet-4' }, agent: 'build', finishReason: 'tool-calls',
  });
  return { id: e.id as string, user, reply };
}

/**
 * Whether the export's cursor has passed the settlements of these executions: each is positioned and the cursor
 * is at or after the last (two reads one after the other: positions never change once given and the cursor only
 * moves on; one statement's subqueries are not one snapshot on a Citus cluster). The cursor moves in the
 * transaction that sent the traces, so they have been received, and none of them is sent again.
 */
async function exportedPast(sql: Sql, executionIDs: string[]): Promise<boolean> {
  const rows = await sql<{ pos: number | null }[]>`SELECT pos FROM settlements WHERE execution_id = ANY(${executionIDs})`;
  if (rows.length !== executionIDs.length || rows.some((r) => r.pos == null)) return false;
  const [cursor] = await sql<{ pos: number }[]>`SELECT pos FROM export_cursors WHERE name = 'otel'`;
  return !!cursor && Number(cursor.pos) >= Math.max(...rows.map((r) => Number(r.pos)));
}

const byTrace = (spans: ReceivedSpan[]) => {
  const m = new Map<string, ReceivedSpan[]>();
  for (const s of spans) m.set(s.traceId, [...(m.get(s.traceId) ?? []), s]);
  return m;
};

/** Every span received once (a span ID twice would be a second copy of a trace). */
function expectOnce(spans: ReceivedSpan[]) {
  const ids = spans.map((s) => s.spanId);
  expect(new Set(ids).size).toBe(ids.length);
}

describe('OpenTelemetry export', () => {
  let receiver: OtlpReceiver;
  let g: TestGateway;
  let host: Host;
  let sessionID: string;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    g = await startTestGateway({ app: { otel: otel(receiver), metricsToken: METRICS_TOKEN } });
    host = await registerHost(g);
    sessionID = (await createSession(g, { directory: '/work/otel', title: 't' })).id;
  });
  afterAll(async () => {
    await g?.stop();
    await receiver?.close();
  });

  it('sends each settled execution as one trace: invoke_agent with a chat and an execute_tool per tool call; no content by default', async () => {
    const a = await runExecution(g, host, sessionID);
    const b = await runExecution(g, host, sessionID, { status: 'FAILED' });
    await until('both exported', () => exportedPast(g.sql, [a.id, b.id]));
    const traces = byTrace(receiver.spans);
    expect([...traces.keys()].sort()).toEqual([traceIdOf(a.id), traceIdOf(b.id)].sort());
    expectOnce(receiver.spans);
    expect(receiver.requests.every((r) => r.contentType === 'application/x-protobuf' && r.headers['x-api-key'] === 'k1')).toBe(true);

    const spans = traces.get(traceIdOf(a.id))!;
    expect(spans.map((s) => s.name).sort()).toEqual(['chat claude-sonnet-4', 'execute_tool bash', 'execute_tool edit', 'invoke_agent build']);
    const root = spans.find((s) => s.name.startsWith('invoke_agent'))!;
    expect(root.spanId).toBe(spanIdOf(a.id, 'execution'));
    expect(root.parentSpanId).toBe('');
    expect(root.kind).toBe(1); // INTERNAL
    expect(root.status).toEqual({ code: 1, message: '' });
    expect(root.resource['service.name']).toBe('gw-test');
    expect(root.scope.name).toBe('agent-history-gateway');
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'build', 'gen_ai.conversation.id': sessionID,
      'gen_ai.provider.name': 'anthropic', 'gen_ai.request.model': 'claude-sonnet-4',
      'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 50, 'gen_ai.usage.cache_creation.input_tokens': 5,
      'agent_history.usage.reasoning_tokens': 7, 'agent_history.usage.cost': 0.0125,
      'agent_history.execution.id': a.id, 'agent_history.execution.status': 'SUCCEEDED', 'agent_history.execution.sequence': 1,
      'agent_history.changeset.coverage': 'UNAVAILABLE', 'agent_history.changeset.file_count': 0,
      'gen_ai.response.finish_reasons': ['tool-calls'],
    });
    for (const s of spans.filter((x) => x !== root)) {
      expect(s.parentSpanId).toBe(root.spanId);
      expect(s.startNs).toBeGreaterThanOrEqual(root.startNs);
      expect(s.endNs).toBeLessThanOrEqual(root.endNs);
    }
    const chat = spans.find((s) => s.name.startsWith('chat'))!;
    expect(chat.spanId).toBe(spanIdOf(a.id, a.reply.id));
    expect(chat.kind).toBe(3); // CLIENT
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'claude-sonnet-4', 'gen_ai.response.id': `msg_ext_${a.id}`,
      'gen_ai.usage.input_tokens': 120, 'gen_ai.response.finish_reasons': ['tool-calls'],
    });
    const bash = spans.find((s) => s.name === 'execute_tool bash')!;
    expect(bash.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'bash', 'gen_ai.tool.call.id': `call_ok_${a.id}` });
    expect(bash.endNs - bash.startNs).toBe(5_000_000n);
    expect(bash.status.code).toBe(0);
    const edit = spans.find((s) => s.name === 'execute_tool edit')!;
    expect(edit.status.code).toBe(2);
    expect(edit.attributes['error.type']).toBe('tool_error');

    // Content is off: no message text, tool arguments or results, no error text anywhere.
    const all = JSON.stringify(receiver.spans.map((s) => [s.attributes, s.status]), (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    for (const secret of ['sk-secret', 'cat .env', 'SECRET=1', 'Looking at it', 'no such file']) expect(all).not.toContain(secret);
    expect(all).not.toContain('gen_ai.input.messages');

    const failed = traces.get(traceIdOf(b.id))!.find((s) => s.parentSpanId === '')!;
    expect(failed.status).toEqual({ code: 2, message: 'FAILED' });
    expect(failed.attributes['error.type']).toBe('APIError');
    expect(failed.attributes['agent_history.execution.sequence']).toBe(2);
  });

  it('says in /metrics what it exported, and its lag', async () => {
    const metric = async (name: string) => {
      const r = await fetch(g.url.replace('/graphql', '/metrics'), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(await r.text());
      return m ? Number(m[1]) : null;
    };
    expect(await metric('gateway_otel_exported_executions')).toBe(2);
    expect(await metric('gateway_otel_export_lag')).toBe(0);
    expect(await metric('gateway_otel_export_failing_passes')).toBe(0);
  });

  it('resumes after a restart from its durable cursor: what settled while it was down is sent, nothing twice', async () => {
    const before = receiver.spans.length;
    const tracesBefore = byTrace(receiver.spans).size;
    // An execution that runs when the gateway stops and settles while no gateway runs (its host's settle,
    // here the domain function: as a request to another instance would).
    const x = await begin(g, host, sessionID);
    await g.restart(async () => {
      await settleExecution(g.sql, SYSTEM, { executionID: x.id, status: 'SUCCEEDED', agent: 'plan' });
    });
    const c = await runExecution(g, host, sessionID);
    await until('both exported', () => exportedPast(g.sql, [x.id, c.id]));
    const traces = byTrace(receiver.spans);
    expect(traces.size).toBe(tracesBefore + 2);
    expect(traces.get(traceIdOf(x.id))!.map((sp) => sp.name)).toEqual(['invoke_agent plan']);
    expect(traces.get(traceIdOf(c.id))!.length).toBe(4);
    expect(receiver.spans.length).toBe(before + 5);
    expectOnce(receiver.spans);
  });

  it('two instances export each execution once', async () => {
    const second = await g.startInstance();
    expect(second.otel).not.toBeNull();
    const tracesBefore = byTrace(receiver.spans).size;
    const sessions = await Promise.all([0, 1, 2, 3].map((i) => createSession(g, { directory: `/work/otel/${i}` })));
    const ids: string[] = [];
    await Promise.all(sessions.map(async (s) => {
      for (let i = 0; i < 3; i++) ids.push((await runExecution(g, host, s.id)).id);
    }));
    // Both instances are woken by every settlement; a pass of either may send, never both.
    await Promise.all([g.app.otel!.drain(), second.otel!.drain()]);
    await until('all exported', () => exportedPast(g.sql, ids));
    const traces = byTrace(receiver.spans);
    expect(traces.size).toBe(tracesBefore + 12);
    for (const id of ids) expect(traces.get(traceIdOf(id))?.length).toBe(4);
    expectOnce(receiver.spans);
    const [cursor] = await g.sql`SELECT exported FROM export_cursors WHERE name = 'otel'`;
    expect(Number(cursor.exported)).toBe(traces.size);
  });

  it('carries the frozen changeset\'s coverage and file count', async () => {
    const refHost = new ReferenceHost({ url: g.url, token: await g.token('host'), leaseMs: 600_000 });
    await refHost.start();
    const dirs: string[] = [];
    try {
      const kit = changesetKit(() => ({ g, host: refHost }), dirs);
      const root = kit.worktree({ 'a.txt': 'one\n', 'b.txt': 'two\n' });
      const s = await kit.newSession();
      const e = await kit.runExecution(s, root, new WorktreeCapturer(), () => {
        rmSync(`${root}/b.txt`);
        writeFileSync(`${root}/a.txt`, 'one\nmore\n');
      });
      await until('exported', () => exportedPast(g.sql, [e.id]));
      const root2 = byTrace(receiver.spans).get(traceIdOf(e.id))!.find((sp) => sp.parentSpanId === '')!;
      expect(root2.attributes).toMatchObject({
        'agent_history.changeset.coverage': 'COMPLETE', 'agent_history.changeset.file_count': 2,
        'agent_history.changeset.additions': 1, 'agent_history.changeset.deletions': 1,
        'gen_ai.agent.name': 'reference-host',
      });
      expectOnce(receiver.spans);
    } finally {
      await refHost.stop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });

  it('a refused export is tried again: the cursor stays until the receiver accepts', async () => {
    receiver.failNext(1, 400);
    const before = byTrace(receiver.spans).size;
    const d = await runExecution(g, host, sessionID);
    await until('exported after the retry', () => exportedPast(g.sql, [d.id]));
    expect(byTrace(receiver.spans).size).toBe(before + 1);
    expect(byTrace(receiver.spans).get(traceIdOf(d.id))!.length).toBe(4);
    expectOnce(receiver.spans);
  });
});

describe('OpenTelemetry export of content (opt-in)', () => {
  let receiver: OtlpReceiver;
  let g: TestGateway;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    g = await startTestGateway();
  });
  afterAll(async () => {
    await g?.stop();
    await receiver?.close();
  });

  it('carries corrected text, the placeholder for a retracted message, tool arguments and results; over OTLP/JSON', async () => {
    const host = await registerHost(g);
    const sessionID = (await createSession(g, { directory: '/work/content' })).id;
    const a = await runExecution(g, host, sessionID, { prompt: 'my password is hunter2' });
    const b = await runExecution(g, host, sessionID, { prompt: 'second prompt' });
    // Before any export (this gateway exports nothing): correct the first prompt, retract the second answer.
    const corrected = await ok(g, `mutation($input: CorrectMessagePartInput!) { correctMessagePart(input: $input) { __typename } }`,
      { input: { messageID: a.user.id, partID: a.user.parts[0].id, text: 'my password is [redacted]' } });
    expect(corrected.__typename).toBe('MessagePartCorrected');
    const retracted = await ok(g, `mutation($input: RetractMessageInput!) { retractMessage(input: $input) { __typename } }`,
      { input: { messageID: b.reply.id, reason: 'leaked' } });
    expect(retracted.__typename).toBe('MessageRetracted');

    const exporter = buildApp({ sql: g.sql, otel: otel(receiver, { captureContent: true, protocol: 'http/json' }) });
    await exporter.start();
    try {
      await until('both exported', () => exportedPast(g.sql, [a.id, b.id]));
    } finally {
      await exporter.stop();
    }
    expect(receiver.requests.every((r) => r.contentType === 'application/json')).toBe(true);
    const traces = byTrace(receiver.spans);
    expect(traces.size).toBe(2);
    const chatA = traces.get(traceIdOf(a.id))!.find((s) => s.name.startsWith('chat'))!;
    const input = JSON.parse(chatA.attributes['gen_ai.input.messages'] as string);
    expect(input).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'my password is [redacted]' }] }]);
    const output = JSON.parse(chatA.attributes['gen_ai.output.messages'] as string);
    expect(output[0]).toMatchObject({ role: 'assistant', finish_reason: 'tool-calls' });
    expect(output[0].parts[0]).toEqual({ type: 'text', content: 'Looking at it.' });
    expect(output[0].parts[1]).toMatchObject({ type: 'tool_call', name: 'bash', arguments: { command: 'cat .env' } });
    const bashA = traces.get(traceIdOf(a.id))!.find((s) => s.name === 'execute_tool bash')!;
    expect(bashA.attributes['gen_ai.tool.call.arguments']).toBe('{"command":"cat .env"}');
    expect(bashA.attributes['gen_ai.tool.call.result']).toBe('SECRET=1');
    expect(JSON.stringify(receiver.spans.map((s) => s.attributes))).not.toContain('hunter2');

    const spansB = traces.get(traceIdOf(b.id))!;
    const chatB = spansB.find((s) => s.name.startsWith('chat'))!;
    expect(JSON.parse(chatB.attributes['gen_ai.output.messages'] as string)[0].parts).toEqual([{ type: 'text', content: RETRACTION_PLACEHOLDER }]);
    expect(chatB.attributes['agent_history.message.retracted']).toBe(true);
    // A retracted response's parts are not read any more: its tool calls are gone from the trace with its text.
    expect(spansB.map((s) => s.name).sort()).toEqual(['chat claude-sonnet-4', 'invoke_agent build']);
  });
});

describe('OpenTelemetry configuration', () => {
  const fail = (m: string) => new Error(m);
  it('reads the standard variables; off without an endpoint', () => {
    expect(loadOtelConfig({}, fail)).toBeNull();
    expect(loadOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }, fail)).toBeNull();
    const c = loadOtelConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%3Db,x-team=t1',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
    }, fail)!;
    expect(c).toMatchObject({
      url: 'http://collector:4318/v1/traces', protocol: 'http/json', headers: { 'api-key': 'a=b', 'x-team': 't1' },
      captureContent: false, serviceName: 'agent-history-gateway', resourceAttributes: { 'deployment.environment': 'prod' },
    });
    expect(loadOtelConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://x/otlp/traces', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'TRUE' }, fail))
      .toMatchObject({ url: 'https://x/otlp/traces', protocol: 'http/protobuf', captureContent: true });
  });
  it('names the variable of a bad value', () => {
    expect(() => loadOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, fail)).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, fail)).toThrow(/grpc is not supported/);
    expect(() => loadOtelConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }, fail)).toThrow(/OTEL_EXPORTER_OTLP_HEADERS/);
  });
});
