// The pure part of the OpenCode bridge's mapping (bridge/opencode/mapping.ts), without OpenCode or a gateway.
import { describe, expect, it } from 'vitest';
import { jobEnd, stepFacts, toGatewayParts, toUsage, type PendingMessage } from '../bridge/opencode/mapping.js';
import type { OcMessageInfo, OcPart } from '../bridge/opencode/client.js';

const part = (p: Partial<OcPart> & { id: string; type: string }): OcPart => ({ sessionID: 'ses_1', messageID: 'msg_1', ...p });

describe('toGatewayParts', () => {
  it('keeps text, reasoning, tool and file parts in order with their OpenCode IDs, details and timing; drops structural parts', () => {
    const m: PendingMessage = { role: 'assistant', parts: {}, order: [] };
    const add = (p: OcPart) => { m.parts[p.id] = p; m.order.push(p.id); };
    add(part({ id: 'prt_a', type: 'step-start', snapshot: 'abc' }));
    add(part({ id: 'prt_b', type: 'reasoning', text: 'hmm', time: { start: 1_700_000_000_000, end: 1_700_000_000_500 } }));
    add(part({ id: 'prt_c', type: 'tool', tool: 'bash', state: {
      status: 'completed', input: { command: 'ls' }, output: 'a', title: 'List', metadata: { exit: 0 }, time: { start: 1_700_000_001_000, end: 1_700_000_001_100 } } }));
    add(part({ id: 'prt_d', type: 'text', text: '' }));
    add(part({ id: 'prt_e', type: 'text', text: 'done' }));
    add(part({ id: 'prt_f', type: 'file', filename: 'a.png', mime: 'image/png' }));
    add(part({ id: 'prt_g', type: 'step-finish', reason: 'stop' }));
    const { parts, ocPartIDs } = toGatewayParts(m);
    expect(ocPartIDs).toEqual(['prt_b', 'prt_c', 'prt_e', 'prt_f']);
    expect(parts).toEqual([
      { type: 'REASONING', text: 'hmm', externalID: 'prt_b', startedAt: '2023-11-14T22:13:20.000Z', endedAt: '2023-11-14T22:13:20.500Z' },
      { type: 'TOOL', tool: 'bash', input: { command: 'ls' }, output: 'a', status: 'completed', externalID: 'prt_c', title: 'List',
        metadata: { exit: 0 }, startedAt: '2023-11-14T22:13:21.000Z', endedAt: '2023-11-14T22:13:21.100Z' },
      { type: 'TEXT', text: 'done', externalID: 'prt_e', startedAt: null, endedAt: null },
      { type: 'FILE', path: 'a.png', mime: 'image/png', externalID: 'prt_f' },
    ]);
  });
});

describe('toUsage and stepFacts', () => {
  it('maps OpenCode tokens and cost, leaving out what is missing or not a count', () => {
    expect(toUsage({ tokens: { input: 10, output: 5, reasoning: 2, cache: { read: 3, write: 1 } }, cost: 0.25 }))
      .toEqual({ inputTokens: 10, outputTokens: 5, reasoningTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 1, cost: 0.25 });
    expect(toUsage({ tokens: { input: -1, output: Number.NaN } as any, cost: -2 }))
      .toEqual({ inputTokens: null, outputTokens: null, reasoningTokens: null, cacheReadTokens: null, cacheWriteTokens: null, cost: null });
    expect(toUsage({})).toBeNull();
    expect(toUsage(null)).toBeNull();
  });
  it('takes model, agent and mode of an assistant message', () => {
    const info = { id: 'msg_1', sessionID: 'ses_1', role: 'assistant', time: { created: 1 }, providerID: 'p', modelID: 'm', agent: 'build', mode: 'build' } as OcMessageInfo;
    expect(stepFacts(info)).toEqual({ model: { providerID: 'p', modelID: 'm' }, agent: 'build', mode: 'build' });
    expect(stepFacts({ ...info, providerID: undefined })).toEqual({ model: null, agent: 'build', mode: 'build' });
  });
});

describe('jobEnd', () => {
  it('reads a tool part\'s end: exit 0 COMPLETED, other exits ERROR, an abort CANCELLED, a running tool no end', () => {
    expect(jobEnd(part({ id: 'p', type: 'tool', state: { status: 'completed', metadata: { exit: 0 } } }))).toEqual({ status: 'COMPLETED', exitCode: 0 });
    expect(jobEnd(part({ id: 'p', type: 'tool', state: { status: 'completed', metadata: { exit: 2 } } }))).toEqual({ status: 'ERROR', exitCode: 2 });
    expect(jobEnd(part({ id: 'p', type: 'tool', state: { status: 'completed', output: 'User aborted the command', metadata: { exit: null } } })))
      .toEqual({ status: 'CANCELLED', exitCode: null });
    expect(jobEnd(part({ id: 'p', type: 'tool', state: { status: 'running' } }))).toBeNull();
  });
});
