import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { begin, createSession, ok, settle, startJob } from './fixtures.js';
import { newId } from '../domain/ids.js';
import { parseTranscript, turnOf as claudeTurnOf } from '../bridge/claude-code/transcript.js';
import { parseRollout, turnOf as codexTurnOf } from '../bridge/codex/rollout.js';
import { toUsage as openCodeUsage } from '../bridge/opencode/mapping.js';

/**
 * `usage` against answers computed by hand from a seeded history. The executions are made through the host
 * protocol; their start and settlement instants are then set to fixed values, so that the days and hours of
 * the time zones below are known:
 *
 *   E1  S1 /team/a        opencode     anthropic/sonnet  SUCCEEDED    2026-11-30 22:00:00Z +10 s  bash ok, bash error, read ok; job COMPLETED
 *   E2  S1                opencode     anthropic/sonnet  FAILED       2026-11-30 23:30:00Z +20 s  bash ok; job ERROR
 *   E3  S2 /team/a/child  claude-code  openai/gpt-5      SUCCEEDED    2026-12-01 00:30:00Z +30 s  edit error; job CANCELLED     (S2 is S1's child)
 *   E4  S3 /other/b       claude-code  openai/gpt-5      INTERRUPTED  2026-12-01 10:00:00Z +40 s  job LOST
 *   E5  S3                opencode     (no model)        SUCCEEDED    2026-12-02 12:00:00Z         (after the range)
 *   E6  S2                claude-code                    RUNNING                                   (not settled)
 *
 * Tokens (input, output, reasoning, cache read, cache write; cost): E1 100 10 1 50 5 $0.10; E2 200 20 0 0 0 $0.20;
 * E3 300 30, no cost; E4 400 40, $0.40.
 */

const RANGE = { from: '2026-11-30T00:00:00Z', to: '2026-12-02T00:00:00Z' };

const GROUP = `
  key { model { providerID modelID } providerID modelID agent hostID sessionID status period periodStart }
  executions { total succeeded failed interrupted abandoned }
  tokens { input output reasoning cacheRead cacheWrite }
  cost { total reportedExecutions }
  toolCalls { total failed byTool { tool calls failed } }
  jobs { total completed error cancelled lost unfinished }
  duration { p50Ms p95Ms }`;

const QUERY = `query($input: UsageInput!) { usage(input: $input) {
  __typename
  ... on UsageReport { groups { ${GROUP} } pageInfo { hasNextPage endCursor } }
  ... on InvalidRequestError { field message code }
  ... on SessionNotFoundError { sessionID code } } }`;

interface Fig {
  executions: Record<string, number>;
  tokens: Record<string, number>;
  cost: { total: number | null; reportedExecutions: number };
  toolCalls: { total: number; failed: number; byTool: { tool: string; calls: number; failed: number }[] };
  jobs: Record<string, number>;
  duration: { p50Ms: number | null; p95Ms: number | null };
}
const zero: Fig = {
  executions: { total: 0, succeeded: 0, failed: 0, interrupted: 0, abandoned: 0 },
  tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  cost: { total: null, reportedExecutions: 0 },
  toolCalls: { total: 0, failed: 0, byTool: [] },
  jobs: { total: 0, completed: 0, error: 0, cancelled: 0, lost: 0, unfinished: 0 },
  duration: { p50Ms: null, p95Ms: null },
};
const noKey = { model: null, providerID: null, modelID: null, agent: null, hostID: null, sessionID: null, status: null, period: null, periodStart: null };

// Figures of each execution, and of a group of several: sums, and p50/p95 by linear interpolation.
type Figures = Omit<Fig, 'duration'> & { durations: number[] };
const E: Record<string, Figures> = {
  E1: {
    executions: { ...zero.executions, total: 1, succeeded: 1 }, tokens: { input: 100, output: 10, reasoning: 1, cacheRead: 50, cacheWrite: 5 },
    cost: { total: 0.1, reportedExecutions: 1 }, toolCalls: { total: 3, failed: 1, byTool: [{ tool: 'bash', calls: 2, failed: 1 }, { tool: 'read', calls: 1, failed: 0 }] },
    jobs: { ...zero.jobs, total: 1, completed: 1 }, durations: [10_000],
  },
  E2: {
    executions: { ...zero.executions, total: 1, failed: 1 }, tokens: { input: 200, output: 20, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: { total: 0.2, reportedExecutions: 1 }, toolCalls: { total: 1, failed: 0, byTool: [{ tool: 'bash', calls: 1, failed: 0 }] },
    jobs: { ...zero.jobs, total: 1, error: 1 }, durations: [20_000],
  },
  E3: {
    executions: { ...zero.executions, total: 1, succeeded: 1 }, tokens: { input: 300, output: 30, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: { total: null, reportedExecutions: 0 }, toolCalls: { total: 1, failed: 1, byTool: [{ tool: 'edit', calls: 1, failed: 1 }] },
    jobs: { ...zero.jobs, total: 1, cancelled: 1 }, durations: [30_000],
  },
  E4: {
    executions: { ...zero.executions, total: 1, interrupted: 1 }, tokens: { input: 400, output: 40, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: { total: 0.4, reportedExecutions: 1 }, toolCalls: { total: 0, failed: 0, byTool: [] },
    jobs: { ...zero.jobs, total: 1, lost: 1 }, durations: [40_000],
  },
};

function percentile(sorted: number[], p: number): number {
  const r = p * (sorted.length - 1);
  const lo = Math.floor(r);
  return sorted[lo] + (r - lo) * ((sorted[lo + 1] ?? sorted[lo]) - sorted[lo]);
}

/** The expected figures of a group of these executions (tools merged by name, most called first). */
function figures(...names: string[]) {
  const fs = names.map((n) => E[n]);
  const sum = <T extends Record<string, number>>(pick: (f: Figures) => T): T => {
    const out = { ...pick(fs[0]) };
    for (const f of fs.slice(1)) for (const k of Object.keys(out)) (out as Record<string, number>)[k] += pick(f)[k];
    return out;
  };
  const tools = new Map<string, { tool: string; calls: number; failed: number }>();
  for (const f of fs) for (const t of f.toolCalls.byTool) {
    const cur = tools.get(t.tool) ?? { tool: t.tool, calls: 0, failed: 0 };
    tools.set(t.tool, { tool: t.tool, calls: cur.calls + t.calls, failed: cur.failed + t.failed });
  }
  const reported = fs.filter((f) => f.cost.total !== null);
  const durations = fs.flatMap((f) => f.durations).sort((a, b) => a - b);
  return {
    executions: sum((f) => f.executions),
    tokens: sum((f) => f.tokens),
    cost: { total: reported.length ? Math.round(reported.reduce((a, f) => a + f.cost.total!, 0) * 1e9) / 1e9 : null, reportedExecutions: reported.length },
    toolCalls: {
      total: fs.reduce((a, f) => a + f.toolCalls.total, 0), failed: fs.reduce((a, f) => a + f.toolCalls.failed, 0),
      byTool: [...tools.values()].sort((a, b) => b.calls - a.calls || (a.tool < b.tool ? -1 : 1)),
    },
    jobs: sum((f) => f.jobs),
    duration: { p50Ms: percentile(durations, 0.5), p95Ms: percentile(durations, 0.95) },
  };
}

/** A group as answered, with its cost rounded (sums of floats) for comparison. */
const norm = (g: any) => ({ ...g, cost: { ...g.cost, total: g.cost.total === null ? null : Math.round(g.cost.total * 1e9) / 1e9 } });

describe('usage', () => {
  let g: TestGateway;
  const ids: Record<string, string> = {};
  const hosts: Record<string, { hostID: string; token: string }> = {};

  async function q(input: Record<string, unknown>, token?: string) {
    return ok(g, QUERY, { input: { ...RANGE, ...input } }, token);
  }
  async function groups(input: Record<string, unknown>, token?: string) {
    const r = await q(input, token);
    expect(r.__typename).toBe('UsageReport');
    return r.groups.map(norm);
  }

  beforeAll(async () => {
    g = await startTestGateway();
    for (const [name, hostName] of [['oc', 'opencode http://127.0.0.1:4096'], ['cc', 'claude-code local /work']] as const) {
      const token = await g.token('host');
      const h = await ok(g, `mutation($input: RegisterHostInput!) { registerHost(input: $input) { ... on Host { id } } }`,
        { input: { name: hostName, leaseMs: 60_000, capabilities: { cancel: true } } }, token);
      hosts[name] = { hostID: h.id, token };
    }
    ids.S1 = (await createSession(g, { directory: '/team/a', title: 'parent' })).id;
    ids.S2 = (await createSession(g, { directory: '/team/a/child', parentID: ids.S1 })).id;
    ids.S3 = (await createSession(g, { directory: '/other/b' })).id;

    const run = async (name: string, session: string, host: 'oc' | 'cc', o: {
      status: string; model?: [string, string]; usage?: Record<string, number>; tools?: [string, string][]; job?: string;
      start?: string; seconds?: number; extra?: Record<string, unknown>;
    }) => {
      const h = hosts[host];
      const e = await begin(g, h, ids[session]);
      ids[name] = e.id;
      if (o.tools?.length) {
        const m = await ok(g, `mutation($input: AppendMessageInput!) { appendMessage(input: $input) { __typename } }`, {
          input: { sessionID: ids[session], executionID: e.id, role: 'ASSISTANT', origin: 'MODEL',
            parts: o.tools.map(([tool, status]) => ({ type: 'TOOL', tool, status, input: {} })) },
        }, h.token);
        expect(m.__typename).toBe('Message');
      }
      if (o.job) {
        const j = await startJob(g, h, ids[session], { executionID: e.id });
        const f = await ok(g, `mutation($input: FinishJobInput!) { finishJob(input: $input) { __typename } }`,
          { input: { jobID: j.id, status: o.job, exitCode: o.job === 'COMPLETED' ? 0 : null } }, h.token);
        expect(f.__typename).toBe('Job');
      }
      if (o.status === 'RUNNING') return;
      const s = await settle(g, h, e.id, o.status, {
        ...(o.status === 'INTERRUPTED' ? { interruptReason: 'USER' } : {}),
        ...(o.model ? { model: { providerID: o.model[0], modelID: o.model[1] } } : {}),
        ...(o.usage ? { usage: o.usage } : {}),
      });
      expect(s.status).toBe(o.status);
      const start = new Date(o.start!);
      await g.sql`UPDATE executions SET started_at = ${start}, settled_at = ${new Date(start.getTime() + (o.seconds ?? 0) * 1000)} WHERE id = ${e.id}`;
    };
    await run('E1', 'S1', 'oc', { status: 'SUCCEEDED', model: ['anthropic', 'sonnet'], usage: { inputTokens: 100, outputTokens: 10, reasoningTokens: 1, cacheReadTokens: 50, cacheWriteTokens: 5, cost: 0.1 },
      tools: [['bash', 'completed'], ['bash', 'error'], ['read', 'completed']], job: 'COMPLETED', start: '2026-11-30T22:00:00Z', seconds: 10 });
    await run('E2', 'S1', 'oc', { status: 'FAILED', model: ['anthropic', 'sonnet'], usage: { inputTokens: 200, outputTokens: 20, cost: 0.2 },
      tools: [['bash', 'completed']], job: 'ERROR', start: '2026-11-30T23:30:00Z', seconds: 20 });
    await run('E3', 'S2', 'cc', { status: 'SUCCEEDED', model: ['openai', 'gpt-5'], usage: { inputTokens: 300, outputTokens: 30 },
      tools: [['edit', 'error']], job: 'CANCELLED', start: '2026-12-01T00:30:00Z', seconds: 30 });
    await run('E4', 'S3', 'cc', { status: 'INTERRUPTED', model: ['openai', 'gpt-5'], usage: { inputTokens: 400, outputTokens: 40, cost: 0.4 },
      job: 'LOST', start: '2026-12-01T10:00:00Z', seconds: 40 });
    await run('E5', 'S3', 'oc', { status: 'SUCCEEDED', usage: { inputTokens: 1000 }, start: '2026-12-02T12:00:00Z', seconds: 50 });
    await run('E6', 'S2', 'cc', { status: 'RUNNING' });
  });
  afterAll(async () => { await g?.stop(); });

  it('everything in the range as one group (no dimension); E5 (after the range) and E6 (running) left out', async () => {
    expect(await groups({ groupBy: [] })).toEqual([{ key: noKey, ...figures('E1', 'E2', 'E3', 'E4') }]);
  });

  it('by model, provider, agent (host kind), host, status', async () => {
    const sonnet = { providerID: 'anthropic', modelID: 'sonnet' };
    const gpt = { providerID: 'openai', modelID: 'gpt-5' };
    expect(await groups({ groupBy: ['MODEL'] })).toEqual([
      { key: { ...noKey, ...sonnet, model: sonnet }, ...figures('E1', 'E2') },
      { key: { ...noKey, ...gpt, model: gpt }, ...figures('E3', 'E4') },
    ]);
    expect(await groups({ groupBy: ['PROVIDER'] })).toEqual([
      { key: { ...noKey, providerID: 'anthropic' }, ...figures('E1', 'E2') },
      { key: { ...noKey, providerID: 'openai' }, ...figures('E3', 'E4') },
    ]);
    expect(await groups({ groupBy: ['AGENT'] })).toEqual([
      { key: { ...noKey, agent: 'claude-code' }, ...figures('E3', 'E4') },
      { key: { ...noKey, agent: 'opencode' }, ...figures('E1', 'E2') },
    ]);
    const byHost = await groups({ groupBy: ['HOST'] });
    expect(byHost).toEqual([hosts.oc.hostID, hosts.cc.hostID].sort().map((h) => ({
      key: { ...noKey, hostID: h }, ...(h === hosts.oc.hostID ? figures('E1', 'E2') : figures('E3', 'E4')),
    })));
    expect(await groups({ groupBy: ['STATUS'] })).toEqual([
      { key: { ...noKey, status: 'FAILED' }, ...figures('E2') },
      { key: { ...noKey, status: 'INTERRUPTED' }, ...figures('E4') },
      { key: { ...noKey, status: 'SUCCEEDED' }, ...figures('E1', 'E3') },
    ]);
    // Two dimensions, in the order asked.
    expect((await groups({ groupBy: ['STATUS', 'AGENT'] })).map((x: any) => [x.key.status, x.key.agent, x.executions.total])).toEqual([
      ['FAILED', 'opencode', 1], ['INTERRUPTED', 'claude-code', 1], ['SUCCEEDED', 'claude-code', 1], ['SUCCEEDED', 'opencode', 1],
    ]);
  });

  it('adds numbers of one meaning across agents: the same model calls, as each agent records them and its host reads them', async () => {
    // Two model calls: 1,000 input tokens (600 of them read from the prompt cache) and 50 output tokens (20 of
    // them reasoning), then 500 (400 read) and 30. Anthropic's record (Claude Code's transcript) leaves the
    // cached tokens out of input_tokens, and its provider wrote 100 to the cache (5-minute) where OpenAI's did not;
    // OpenAI's (Codex's rollout) counts them in; OpenCode's step-finish subtracts them, and the reasoning from the output.
    const transcript = [
      { type: 'user', promptId: 'p1', uuid: 'u1', message: { role: 'user', content: 'go' } },
      { type: 'assistant', message: { id: 'm1', model: 'claude-x', content: [{ type: 'text', text: 'a' }], stop_reason: 'tool_use',
        usage: { input_tokens: 300, cache_read_input_tokens: 600, cache_creation_input_tokens: 100, output_tokens: 50,
          cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 0 } } } },
      { type: 'assistant', message: { id: 'm2', model: 'claude-x', content: [{ type: 'text', text: 'b' }], stop_reason: 'end_turn',
        usage: { input_tokens: 100, cache_read_input_tokens: 400, cache_creation_input_tokens: 0, output_tokens: 30,
          cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } } } },
    ];
    const rollout = [
      { type: 'event_msg', payload: { type: 'task_started', turn_id: 'T' } },
      { type: 'token_usage_record', payload: { turn_id: 'T', usage: { input_tokens: 1000, cached_input_tokens: 600, output_tokens: 50, reasoning_output_tokens: 20 } } },
      { type: 'token_usage_record', payload: { turn_id: 'T', usage: { input_tokens: 500, cached_input_tokens: 400, output_tokens: 30 } } },
      { type: 'event_msg', payload: { type: 'task_complete', turn_id: 'T' } },
    ];
    const jsonl = (ls: unknown[]) => ls.map((l) => JSON.stringify(l)).join('\n');
    const claude = claudeTurnOf(parseTranscript(jsonl(transcript)).lines, 'p1').usage!;
    const codex = codexTurnOf(parseRollout(jsonl(rollout)).lines, 'T').usage!;
    const openCode = [openCodeUsage({ tokens: { input: 300, output: 30, reasoning: 20, cache: { read: 600, write: 100 } }, cost: 0.01 })!,
      openCodeUsage({ tokens: { input: 100, output: 30, reasoning: 0, cache: { read: 400, write: 0 } }, cost: 0.002 })!];
    expect(claude).toEqual({ inputTokens: 1500, outputTokens: 80, cacheReadTokens: 1000, cacheWriteTokens: 100, cacheWrite5mTokens: 100, cacheWrite1hTokens: 0 });
    expect(codex).toEqual({ inputTokens: 1500, outputTokens: 80, cacheReadTokens: 1000, cacheWriteTokens: 0, reasoningTokens: 20 });
    expect(openCode.map((u) => [u.inputTokens, u.outputTokens])).toEqual([[1000, 50], [500, 30]]);

    const token = await g.token('host');
    const h = await ok(g, `mutation($input: RegisterHostInput!) { registerHost(input: $input) { ... on Host { id } } }`,
      { input: { name: 'codex host /work', leaseMs: 60_000, capabilities: { cancel: true } } }, token);
    const codexHost = { hostID: h.id, token };
    const session = (await createSession(g, { directory: '/team/agents' })).id;
    const at = new Date('2026-10-01T12:00:00Z');
    const one = async (host: { hostID: string; token: string }, usage: object) => {
      const e = await begin(g, host, session);
      expect((await settle(g, host, e.id, 'SUCCEEDED', { usage })).status).toBe('SUCCEEDED');
      await g.sql`UPDATE executions SET started_at = ${at}, settled_at = ${at} WHERE id = ${e.id}`;
    };
    await one(hosts.cc, claude);
    await one(codexHost, codex);
    for (const u of openCode) await one(hosts.oc, u);
    const october = { from: '2026-10-01T00:00:00Z', to: '2026-10-02T00:00:00Z' };
    const byAgent = (await groups({ ...october, groupBy: ['AGENT'] })).map((x: any) => [x.key.agent, x.tokens, x.cost]);
    expect(byAgent).toEqual([
      ['claude-code', { input: 1500, output: 80, reasoning: 0, cacheRead: 1000, cacheWrite: 100 }, { total: null, reportedExecutions: 0 }],
      ['codex', { input: 1500, output: 80, reasoning: 20, cacheRead: 1000, cacheWrite: 0 }, { total: null, reportedExecutions: 0 }],
      ['opencode', { input: 1500, output: 80, reasoning: 20, cacheRead: 1000, cacheWrite: 100 }, { total: 0.012, reportedExecutions: 2 }],
    ]);
    expect((await groups({ ...october, groupBy: [] }))[0].tokens).toEqual({ input: 4500, output: 240, reasoning: 40, cacheRead: 3000, cacheWrite: 200 });

    // A count against the meaning (Anthropic's input_tokens as they come: fewer than the cached ones) is refused.
    const e = await begin(g, hosts.cc, session);
    const bad = await ok(g, `mutation($input: SettleExecutionInput!) { settleExecution(input: $input) { __typename ... on InvalidRequestError { field message } } }`,
      { input: { executionID: e.id, status: 'SUCCEEDED', usage: { inputTokens: 300, cacheReadTokens: 600, cacheWriteTokens: 100 } } }, hosts.cc.token);
    expect(bad).toMatchObject({ __typename: 'InvalidRequestError', field: 'usage.inputTokens' });
    expect((await settle(g, hosts.cc, e.id, 'SUCCEEDED')).status).toBe('SUCCEEDED');
    await g.sql`UPDATE executions SET started_at = ${at}, settled_at = ${at} WHERE id = ${e.id}`;
  });

  it('by session, paged; one session, or a session with its subtree', async () => {
    const order = ['S1', 'S2', 'S3'].sort((a, b) => (ids[a] < ids[b] ? -1 : 1));
    const of: Record<string, string[]> = { S1: ['E1', 'E2'], S2: ['E3'], S3: ['E4'] };
    const p1 = await q({ groupBy: ['SESSION'], first: 2 });
    expect(p1.groups.map(norm)).toEqual(order.slice(0, 2).map((s) => ({ key: { ...noKey, sessionID: ids[s] }, ...figures(...of[s]) })));
    expect(p1.pageInfo.hasNextPage).toBe(true);
    const p2 = await q({ groupBy: ['SESSION'], first: 2, after: p1.pageInfo.endCursor });
    expect(p2.groups.map(norm)).toEqual([{ key: { ...noKey, sessionID: ids[order[2]] }, ...figures(...of[order[2]]) }]);
    expect(p2.pageInfo.hasNextPage).toBe(false);
    // A page counts sessions: grouped by session and day, a session's days stay on its page.
    const sd = await q({ groupBy: ['SESSION', 'DAY'], first: 1, after: null });
    expect(sd.groups.every((x: any) => x.key.sessionID === ids[order[0]])).toBe(true);

    expect(await groups({ groupBy: [], sessionID: ids.S1 })).toEqual([{ key: noKey, ...figures('E1', 'E2') }]);
    expect(await groups({ groupBy: [], sessionID: ids.S1, subtree: true })).toEqual([{ key: noKey, ...figures('E1', 'E2', 'E3') }]);
    expect(await groups({ groupBy: [], sessionID: ids.S2, subtree: true })).toEqual([{ key: noKey, ...figures('E3') }]);
  });

  it('by day in a time zone: a day is the time zone\'s, across midnight, with the range\'s empty days listed', async () => {
    const day = (period: string, startUtc: string, ...es: string[]) => ({ key: { ...noKey, period, periodStart: startUtc }, ...(es.length ? figures(...es) : zero) });
    expect(await groups({ groupBy: ['DAY'] })).toEqual([
      day('2026-11-30', '2026-11-30T00:00:00.000Z', 'E1', 'E2'),
      day('2026-12-01', '2026-12-01T00:00:00.000Z', 'E3', 'E4'),
    ]);
    // New York (UTC-5): E3 (00:30Z) is still the 30th there; the range starts on the 29th (19:00) and ends on the 1st.
    expect(await groups({ groupBy: ['DAY'], timeZone: 'America/New_York' })).toEqual([
      day('2026-11-29', '2026-11-29T05:00:00.000Z'),
      day('2026-11-30', '2026-11-30T05:00:00.000Z', 'E1', 'E2', 'E3'),
      day('2026-12-01', '2026-12-01T05:00:00.000Z', 'E4'),
    ]);
    // Tokyo (UTC+9): all four on the 1st; the 30th (from 09:00) and the 2nd (to 09:00) are empty.
    expect(await groups({ groupBy: ['DAY'], timeZone: 'Asia/Tokyo' })).toEqual([
      day('2026-11-30', '2026-11-29T15:00:00.000Z'),
      day('2026-12-01', '2026-11-30T15:00:00.000Z', 'E1', 'E2', 'E3', 'E4'),
      day('2026-12-02', '2026-12-01T15:00:00.000Z'),
    ]);
    // With another dimension, days without executions are not listed.
    expect((await groups({ groupBy: ['MODEL', 'DAY'], timeZone: 'America/New_York' })).map((x: any) => [x.key.modelID, x.key.period, x.executions.total])).toEqual([
      ['sonnet', '2026-11-30', 2], ['gpt-5', '2026-11-30', 1], ['gpt-5', '2026-12-01', 1],
    ]);
  });

  it('by hour, in a time zone half an hour off UTC (Kolkata, +05:30)', async () => {
    const range = { from: '2026-11-30T22:00:00Z', to: '2026-12-01T01:00:00Z' };
    const hour = (period: string, startUtc: string, ...es: string[]) => ({ key: { ...noKey, period, periodStart: startUtc }, ...(es.length ? figures(...es) : zero) });
    expect(await groups({ ...range, groupBy: ['HOUR'] })).toEqual([
      hour('2026-11-30T22:00', '2026-11-30T22:00:00.000Z', 'E1'),
      hour('2026-11-30T23:00', '2026-11-30T23:00:00.000Z', 'E2'),
      hour('2026-12-01T00:00', '2026-12-01T00:00:00.000Z', 'E3'),
    ]);
    expect(await groups({ ...range, groupBy: ['HOUR'], timeZone: 'Asia/Kolkata' })).toEqual([
      hour('2026-12-01T03:00', '2026-11-30T21:30:00.000Z', 'E1'),
      hour('2026-12-01T04:00', '2026-11-30T22:30:00.000Z'),
      hour('2026-12-01T05:00', '2026-11-30T23:30:00.000Z', 'E2'),
      hour('2026-12-01T06:00', '2026-12-01T00:30:00.000Z', 'E3'),
    ]);
  });

  it('scoped tokens count only their sessions; another\'s session reads as missing', async () => {
    const scoped = await g.token('reader', '/team/a');
    expect(await groups({ groupBy: [] }, scoped)).toEqual([{ key: noKey, ...figures('E1', 'E2', 'E3') }]);
    expect((await groups({ groupBy: ['SESSION'] }, scoped)).map((x: any) => x.key.sessionID).sort()).toEqual([ids.S1, ids.S2].sort());
    const other = await g.token('reader', '/other');
    expect(await groups({ groupBy: ['MODEL'] }, other)).toEqual([{ key: { ...noKey, providerID: 'openai', modelID: 'gpt-5', model: { providerID: 'openai', modelID: 'gpt-5' } }, ...figures('E4') }]);
    expect(await q({ groupBy: [], sessionID: ids.S3 }, scoped)).toEqual({ __typename: 'SessionNotFoundError', sessionID: ids.S3, code: 404 });
    // Nothing in scope: no groups (and zero-filled periods only).
    const nobody = await g.token('reader', '/nobody');
    expect(await groups({ groupBy: ['MODEL'] }, nobody)).toEqual([]);
    expect(await groups({ groupBy: ['DAY'] }, nobody)).toEqual([
      { key: { ...noKey, period: '2026-11-30', periodStart: '2026-11-30T00:00:00.000Z' }, ...zero },
      { key: { ...noKey, period: '2026-12-01', periodStart: '2026-12-01T00:00:00.000Z' }, ...zero },
    ]);
  });

  it('an empty range has no groups', async () => {
    expect(await groups({ from: '2020-01-01T00:00:00Z', to: '2020-02-01T00:00:00Z', groupBy: ['SESSION'] })).toEqual([]);
    expect(await groups({ from: '2020-01-01T00:00:00Z', to: '2020-02-01T00:00:00Z', groupBy: [] })).toEqual([]);
  });

  it('bad input is a typed error naming the field', async () => {
    const bad = async (input: Record<string, unknown>, field: string) => {
      const r = await q(input);
      expect(r).toMatchObject({ __typename: 'InvalidRequestError', field, code: 400 });
    };
    await bad({ groupBy: [], to: RANGE.from }, 'to');
    await bad({ groupBy: ['DAY', 'HOUR'] }, 'groupBy');
    await bad({ groupBy: ['MODEL', 'MODEL'] }, 'groupBy');
    await bad({ groupBy: ['DAY'], timeZone: 'Mars/Olympus_Mons' }, 'timeZone');
    await bad({ groupBy: ['DAY'], timeZone: "UTC'; DROP TABLE sessions; --" }, 'timeZone');
    await bad({ groupBy: ['SESSION'], after: 'not-a-cursor' }, 'after');
    await bad({ groupBy: ['MODEL'], after: 'x' }, 'after');
    await bad({ groupBy: ['SESSION'], first: 0 }, 'first');
    await bad({ groupBy: [], subtree: true }, 'subtree');
    await bad({ groupBy: [], sessionID: 'exe_123' }, 'sessionID');
    await bad({ groupBy: ['HOUR'], from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'to');
    const missing = newId('session');
    expect(await q({ groupBy: [], sessionID: missing })).toEqual({ __typename: 'SessionNotFoundError', sessionID: missing, code: 404 });
  });

  it('is one statement', async () => {
    g.queries.reset();
    await groups({ groupBy: ['MODEL', 'DAY', 'STATUS'], timeZone: 'Europe/Paris' });
    expect(g.queries.requestLog().filter((s) => /\bexecutions\b/.test(s))).toHaveLength(1);
  });
});
