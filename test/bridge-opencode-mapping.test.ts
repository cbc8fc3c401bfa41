// The pure part of the OpenCode bridge's mapping (bridge/opencode/mapping.ts), without OpenCode or a gateway.
import { describe, expect, it } from 'vitest';
import { emptyState, jobEnd, stepFacts, toGatewayParts, toUsage, type PendingMessage } from '../bridge/opencode/mapping.js';
import { mapEvent, mapIdle, mapSessionInfo, messageNamed, type EventFacts, type Intent, type SessionView } from '../bridge/opencode/session-mapper.js';
import type { OcMessageInfo, OcPart, OcSyncEvent } from '../bridge/opencode/client.js';
import type { StoredMessage } from '../bridge/opencode/store.js';

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
  it('maps OpenCode tokens and cost in the one meaning (input with the cached, output with the reasoning), leaving out what is missing or not a count', () => {
    expect(toUsage({ tokens: { input: 10, output: 5, reasoning: 2, cache: { read: 3, write: 1 } }, cost: 0.25 }))
      .toEqual({ inputTokens: 14, outputTokens: 7, reasoningTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 1, cost: 0.25 });
    expect(toUsage({ tokens: { input: -1, output: Number.NaN } as any, cost: -2 }))
      .toEqual({ inputTokens: null, outputTokens: null, reasoningTokens: null, cacheReadTokens: null, cacheWriteTokens: null, cost: null });
    expect(toUsage({})).toBeNull();
    expect(toUsage(null)).toBeNull();
  });
  it('takes model, agent, mode and times of an assistant message', () => {
    const info = { id: 'msg_1', sessionID: 'ses_1', role: 'assistant', time: { created: 1 }, providerID: 'p', modelID: 'm', agent: 'build', mode: 'build' } as OcMessageInfo;
    expect(stepFacts(info)).toEqual({ model: { providerID: 'p', modelID: 'm' }, agent: 'build', mode: 'build', createdAt: 1, completedAt: null });
    expect(stepFacts({ ...info, providerID: undefined, time: { created: 1, completed: 2 } })).toEqual({ model: null, agent: 'build', mode: 'build', createdAt: 1, completedAt: 2 });
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

// The per-session mapper (bridge/opencode/session-mapper.ts): OpenCode events and the session's state
// in, intended gateway calls out. `answer` plays the gateway mirror's part (it records answers in the state).
describe('session mapper', () => {
  const S = 'ses_1';
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>): OcSyncEvent => ({ id: `evt_${seq}`, sessionID: S, seq: seq++, type: `${type}.1`, data: { sessionID: S, ...data } });
  const info = (id: string, role: 'user' | 'assistant', more: Partial<OcMessageInfo> = {}): OcMessageInfo =>
    ({ id, sessionID: S, role, time: { created: 1 }, ...(role === 'assistant' ? { parentID: 'msg_u', providerID: 'fake', modelID: 'fake-model', agent: 'build', mode: 'build' } : {}), ...more });
  const msg = (i: OcMessageInfo) => ev('message.updated', { info: i });
  const prt = (p: Partial<OcPart> & { id: string; type: string; messageID: string }) => ev('message.part.updated', { part: { sessionID: S, ...p }, time: 5 });
  const none: EventFacts = { mirrored: null };
  const kinds = (xs: Intent[]) => xs.map((x) => x.kind);
  const mirroredSession = (): SessionView => ({ ocSessionID: S, sessionID: 'gw_s', st: emptyState() });
  /** What the mirror records of the answers: executions, jobs. */
  const answer = (s: SessionView, xs: Intent[]) => {
    for (const x of xs) {
      if (x.kind === 'beginExecution') s.st.steps[x.step].executionID = `exe_${x.step}`;
      if (x.kind === 'startJob') s.st.jobs[x.part] = { jobID: `job_${x.part}`, finished: false, ocMessageID: x.step };
      if (x.kind === 'finishJob' && s.st.jobs[x.part]) s.st.jobs[x.part][x.status === 'LOST' ? 'lost' : 'finished'] = true;
    }
    return xs;
  };
  const run = (s: SessionView, e: OcSyncEvent, facts = none) => answer(s, mapEvent(s, e, facts));

  /** A prompt with one step that started a shell, as far as `upTo` ('running': the shell still runs). */
  function turn(s: SessionView) {
    run(s, msg(info('msg_u', 'user')));
    run(s, prt({ id: 'prt_u', type: 'text', messageID: 'msg_u', text: 'do it' }));
    run(s, msg(info('msg_a', 'assistant')));
    run(s, prt({ id: 'prt_s', type: 'step-start', messageID: 'msg_a', snapshot: 'tree0' }));
    return run(s, prt({ id: 'prt_b', type: 'tool', tool: 'bash', messageID: 'msg_a', state: { status: 'running', input: { command: 'sleep 9', description: 'nap' } } }));
  }

  it('mirrors a session once, and a rename in OpenCode (not the echo of the gateway\'s own)', () => {
    const s: SessionView = { ocSessionID: S, sessionID: null, st: emptyState() };
    const created = ev('session.created', { info: { id: S, directory: '/p', title: 'one' } });
    expect(mapEvent(s, created, none)).toEqual([{ kind: 'createSession', info: { id: S, directory: '/p', title: 'one' }, metadata: {} }]);
    expect(s.st).toMatchObject({ title: 'one', directory: '/p', parentOc: null });
    // Nothing else of an unmirrored session becomes a call.
    expect(mapEvent(s, msg(info('msg_u', 'user')), none)).toEqual([]);
    s.sessionID = 'gw_s';
    expect(mapEvent(s, ev('session.updated', { info: { id: S, directory: '/p', title: 'one' } }), none)).toEqual([]);
    expect(mapEvent(s, ev('session.updated', { info: { id: S, directory: '/p', title: 'two' } }), none)).toEqual([{ kind: 'renameSession', title: 'two' }]);
    expect(mapSessionInfo({ ...s, st: { ...emptyState(), hidden: true }, sessionID: null }, { id: S, directory: '/p' })).toEqual([]);
  });

  it('one step: the prompt, an execution, its shell job, the answer and the settlement with usage, in this order', () => {
    const s = mirroredSession();
    expect(run(s, msg(info('msg_u', 'user')))).toEqual([]);
    expect(run(s, prt({ id: 'prt_u', type: 'text', messageID: 'msg_u', text: 'do it' }))).toEqual([]);
    // The assistant message: the prompt is complete, flushed.
    expect(run(s, msg(info('msg_a', 'assistant')))).toEqual([
      { kind: 'appendMessage', message: 'msg_u', role: 'USER', executionID: null, ocSessionID: S, ocPartIDs: ['prt_u'],
        parts: [{ type: 'TEXT', text: 'do it', externalID: 'prt_u', startedAt: null, endedAt: null }] }]);
    expect(run(s, prt({ id: 'prt_s', type: 'step-start', messageID: 'msg_a', snapshot: 'tree0' }))).toEqual([{ kind: 'beginExecution', step: 'msg_a', startTree: 'tree0' }]);
    // Replayed (a restart): already begun, nothing again.
    expect(run(s, prt({ id: 'prt_s', type: 'step-start', messageID: 'msg_a', snapshot: 'tree0' }))).toEqual([]);
    const bash = { id: 'prt_b', type: 'tool', tool: 'bash', messageID: 'msg_a' };
    expect(run(s, prt({ ...bash, state: { status: 'pending' } }))).toEqual([]);
    expect(run(s, prt({ ...bash, state: { status: 'running', input: { command: 'ls', description: 'list' } } }))).toEqual([
      { kind: 'startJob', step: 'msg_a', executionID: 'exe_msg_a', part: 'prt_b', jobKind: 'SHELL', title: 'list', command: 'ls' }]);
    expect(run(s, prt({ ...bash, state: { status: 'completed', input: { command: 'ls' }, output: 'a', metadata: { exit: 0 } } }))).toEqual([
      { kind: 'finishJob', part: 'prt_b', status: 'COMPLETED', exitCode: 0 }]);
    expect(run(s, prt({ id: 'prt_t', type: 'text', messageID: 'msg_a', text: 'done' }))).toEqual([]);
    const fin = run(s, prt({ id: 'prt_f', type: 'step-finish', messageID: 'msg_a', snapshot: 'tree1', reason: 'stop', cost: 0.5, tokens: { input: 3, output: 2 } }));
    expect(kinds(fin)).toEqual(['appendMessage', 'settleExecution', 'retryPending']);
    expect(fin[0]).toMatchObject({ role: 'ASSISTANT', executionID: 'exe_msg_a', ocPartIDs: ['prt_b', 'prt_t'] });
    expect(fin[1]).toEqual({
      kind: 'settleExecution', step: 'msg_a', executionID: 'exe_msg_a', status: 'SUCCEEDED', reason: null, endTree: 'tree1', error: null, errorName: null,
      usage: { inputTokens: 3, outputTokens: 2, reasoningTokens: null, cacheReadTokens: null, cacheWriteTokens: null, cost: 0.5 }, finish: 'stop',
      model: { providerID: 'fake', modelID: 'fake-model' }, agent: 'build', mode: 'build', createdAt: 1, completedAt: null,
    });
    // The message completing afterwards, and the session going idle, change nothing more.
    expect(run(s, msg(info('msg_a', 'assistant', { time: { created: 1, completed: 2 }, finish: 'stop' })))).toEqual([]);
    expect(kinds(answer(s, mapIdle(s)))).toEqual(['retryPending']);
    expect(s.st.steps).toEqual({});
  });

  it('a PROMPT command\'s message (the same text) links the first step answering it to the command, and only that one; a turn without any step fails the command', () => {
    const s = mirroredSession();
    s.st.prompting = { cmd_1: { text: 'Review comments on your changes (1):\n\n1. (whole changeset):\n   Again.\n' } };
    // Another client's prompt first: not the command's.
    run(s, msg(info('msg_x', 'user')));
    run(s, prt({ id: 'prt_x', type: 'text', messageID: 'msg_x', text: 'something else' }));
    run(s, msg(info('msg_xa', 'assistant', { parentID: 'msg_x' })));
    expect(run(s, prt({ id: 'prt_xs', type: 'step-start', messageID: 'msg_xa', snapshot: 't0' }))).toEqual([{ kind: 'beginExecution', step: 'msg_xa', startTree: 't0' }]);
    run(s, prt({ id: 'prt_xf', type: 'step-finish', messageID: 'msg_xa', snapshot: 't1', reason: 'stop' }));
    // The command's message: its first step carries the command, the next one does not.
    run(s, msg(info('msg_u', 'user')));
    run(s, prt({ id: 'prt_u', type: 'text', messageID: 'msg_u', text: 'Review comments on your changes (1):\n\n1. (whole changeset):\n   Again.\n' }));
    run(s, msg(info('msg_a', 'assistant')));
    expect(s.st.prompting).toEqual({});
    expect(s.st.promptOf).toEqual({ msg_u: 'cmd_1' });
    expect(run(s, prt({ id: 'prt_s', type: 'step-start', messageID: 'msg_a', snapshot: 't1' }))).toEqual([{ kind: 'beginExecution', step: 'msg_a', startTree: 't1', commandID: 'cmd_1' }]);
    run(s, prt({ id: 'prt_f', type: 'step-finish', messageID: 'msg_a', snapshot: 't2', reason: 'tool-calls' }));
    run(s, msg(info('msg_a2', 'assistant')));
    expect(run(s, prt({ id: 'prt_s2', type: 'step-start', messageID: 'msg_a2', snapshot: 't2' }))).toEqual([{ kind: 'beginExecution', step: 'msg_a2', startTree: 't2' }]);
    expect(s.st.promptOf).toEqual({});
    // A command whose message got no step at all (OpenCode failed before the model answered): the command fails at idle.
    s.st.prompting = { cmd_2: { text: 'second' } };
    run(s, msg(info('msg_v', 'user')));
    run(s, prt({ id: 'prt_v', type: 'text', messageID: 'msg_v', text: 'second' }));
    const idle = answer(s, mapIdle(s));
    expect(idle.filter((x) => x.kind === 'promptFailed')).toEqual([{ kind: 'promptFailed', commandID: 'cmd_2', error: expect.stringContaining('without any step') }]);
    expect(s.st.promptOf).toEqual({});
  });

  it('a shell nobody saw end is LOST when OpenCode stopped, CANCELLED when the seal\'s abort stopped it; the step INTERRUPTED', () => {
    const restarted = mirroredSession();
    turn(restarted);
    const idle = mapIdle(restarted);
    expect(kinds(idle)).toEqual(['finishJob', 'appendMessage', 'settleExecution', 'retryPending', 'retryPending']);
    expect(idle[0]).toEqual({ kind: 'finishJob', part: 'prt_b', status: 'LOST', exitCode: null });
    expect(idle[2]).toMatchObject({ status: 'INTERRUPTED', reason: 'SHUTDOWN', endTree: null });

    const sealed = mirroredSession();
    turn(sealed);
    sealed.st.sealing = true;
    const seal = mapIdle(sealed);
    // SessionSealed only once OpenCode reports the session idle: the wait comes before the settlement.
    expect(kinds(seal)).toEqual(['awaitIdle', 'finishJob', 'appendMessage', 'settleExecution', 'retryPending', 'retryPending']);
    expect(seal[1]).toMatchObject({ status: 'CANCELLED' });
    expect(seal[3]).toMatchObject({ status: 'INTERRUPTED', reason: 'SEAL' });

    // OpenCode's own abort (another client): MessageAbortedError, the job CANCELLED, reason USER.
    const aborted = mirroredSession();
    turn(aborted);
    const out = run(aborted, msg(info('msg_a', 'assistant', { time: { created: 1, completed: 3 }, error: { name: 'MessageAbortedError' } })));
    expect(out.find((x) => x.kind === 'finishJob')).toMatchObject({ status: 'CANCELLED' });
    expect(out.find((x) => x.kind === 'settleExecution')).toMatchObject({ status: 'INTERRUPTED', reason: 'USER', errorName: 'MessageAbortedError', error: null });
    // Another error: FAILED with OpenCode's error.
    const failed = mirroredSession();
    turn(failed);
    const f = run(failed, msg(info('msg_a', 'assistant', { time: { created: 1, completed: 3 }, error: { name: 'APIError', data: { message: 'boom' } } })));
    expect(f.find((x) => x.kind === 'settleExecution')).toMatchObject({ status: 'FAILED', reason: null, error: 'APIError: boom', errorName: 'APIError' });
    expect(f.find((x) => x.kind === 'finishJob')).toMatchObject({ status: 'LOST' });
    // A LOST job still gets its real end when OpenCode reports it later.
    expect(run(failed, prt({ id: 'prt_b', type: 'tool', tool: 'bash', messageID: 'msg_a', state: { status: 'completed', metadata: { exit: 0 } } }), {
      mirrored: { messageID: 'gw_m', sessionID: 'gw_s', ocSessionID: S, ocMessageID: 'msg_a', parts: {} } })).toEqual([]);
  });

  it('a step the gateway refused starts no job; a step left RUNNING is settled before the next one begins', () => {
    const s = mirroredSession();
    run(s, msg(info('msg_a', 'assistant')));
    const begin = mapEvent(s, prt({ id: 'prt_s', type: 'step-start', messageID: 'msg_a', snapshot: 't' }), none);
    expect(kinds(begin)).toEqual(['beginExecution']);
    s.st.steps.msg_a.refused = true; // the mirror's answer: SessionSealedError
    expect(run(s, prt({ id: 'prt_b', type: 'tool', tool: 'bash', messageID: 'msg_a', state: { status: 'completed', metadata: { exit: 0 } } }))).toEqual([]);
    const t = mirroredSession();
    run(t, msg(info('msg_a', 'assistant')));
    run(t, prt({ id: 'prt_s', type: 'step-start', messageID: 'msg_a', snapshot: 't0' }));
    run(t, msg(info('msg_b', 'assistant')));
    const next = run(t, prt({ id: 'prt_s2', type: 'step-start', messageID: 'msg_b', snapshot: 't1' }));
    expect(next.filter((x) => x.kind !== 'appendMessage' && x.kind !== 'retryPending')).toEqual([
      expect.objectContaining({ kind: 'settleExecution', step: 'msg_a', status: 'INTERRUPTED', reason: 'USER' }),
      { kind: 'beginExecution', step: 'msg_b', startTree: 't1' }]);
  });

  it('edits and deletions in OpenCode of mirrored messages: a correction, the echo of the bridge\'s own PATCH ignored, a retraction', () => {
    const s = mirroredSession();
    const mirrored: StoredMessage = { messageID: 'gw_m', sessionID: 'gw_s', ocSessionID: S, ocMessageID: 'msg_u', parts: { gw_p: 'prt_u', gw_q: 'prt_v' } };
    const facts = { mirrored };
    const edit = (text: string) => prt({ id: 'prt_u', type: 'text', messageID: 'msg_u', text });
    expect(run(s, edit('fixed'), facts)).toEqual([{ kind: 'correctPart', correction: { messageID: 'gw_m', partID: 'gw_p', ocPartID: 'prt_u', text: 'fixed' } }]);
    // The bridge PATCHed "from the gateway" into OpenCode: its echo is consumed, once.
    s.st.echoes = { prt_u: ['from the gateway'] };
    expect(run(s, edit('from the gateway'), facts)).toEqual([]);
    expect(s.st.echoes).toEqual({});
    expect(kinds(run(s, edit('from the gateway'), facts))).toEqual(['correctPart']);
    // A part of the message that has no gateway part, a non-text part: nothing.
    expect(run(s, prt({ id: 'prt_x', type: 'text', messageID: 'msg_u', text: 'late' }), facts)).toEqual([]);
    expect(run(s, prt({ id: 'prt_u', type: 'patch', messageID: 'msg_u' }), facts)).toEqual([]);
    // A part removed: retracted once none of its mirrored parts is left (the mirror reads OpenCode).
    expect(run(s, ev('message.part.removed', { messageID: 'msg_u', partID: 'prt_u' }), facts)).toEqual([{ kind: 'retractIfEmptied', mirrored, partID: 'prt_u' }]);
    expect(run(s, ev('message.part.removed', { messageID: 'msg_u', partID: 'prt_zz' }), facts)).toEqual([]);
    expect(run(s, ev('message.removed', { messageID: 'msg_u' }), facts)).toEqual([{ kind: 'retractMessage', messageID: 'gw_m', reason: 'deleted in OpenCode' }]);
    // Deleted by the bridge itself for a gateway retraction: not retracted back.
    s.st.deletedByGateway = ['msg_u'];
    expect(run(s, ev('message.removed', { messageID: 'msg_u' }), facts)).toEqual([]);
    // A message never mirrored: nothing.
    expect(run(s, ev('message.removed', { messageID: 'msg_q' }), none)).toEqual([]);
  });

  it('a session deleted in OpenCode: its running step INTERRUPTED, the mirror removed, nothing followed afterwards', () => {
    const s = mirroredSession();
    turn(s);
    const out = run(s, ev('session.deleted', { info: { id: S } }));
    expect(kinds(out)).toEqual(['finishJob', 'appendMessage', 'settleExecution', 'retryPending', 'removeSession']);
    expect(out[2]).toMatchObject({ status: 'INTERRUPTED', reason: 'USER' });
    expect(run(s, msg(info('msg_z', 'user')))).toEqual([]);
    expect(mapIdle(s)).toEqual([]);
  });

  it('the summary of a compaction the bridge ran is not mirrored as a step', () => {
    const s = mirroredSession();
    s.st.compacting = true;
    expect(run(s, msg(info('msg_c', 'assistant')))).toEqual([]);
    expect(run(s, prt({ id: 'prt_c', type: 'step-start', messageID: 'msg_c', snapshot: 't' }))).toEqual([]);
    expect(s.st.compactionMessages).toEqual(['msg_c']);
    s.st.compacting = false;
    expect(run(s, msg(info('msg_c', 'assistant', { time: { created: 1, completed: 2 } })))).toEqual([]);
    expect(run(s, msg(info('msg_d', 'assistant', { summary: true })))).toEqual([]);
  });

  it('names the message whose mirror an event needs', () => {
    expect(messageNamed(msg(info('msg_u', 'user')))).toBe('msg_u');
    expect(messageNamed(prt({ id: 'p', type: 'text', messageID: 'msg_v' }))).toBe('msg_v');
    expect(messageNamed(ev('message.removed', { messageID: 'msg_w' }))).toBe('msg_w');
    expect(messageNamed(ev('session.updated', { info: { id: S } }))).toBeNull();
  });
});
