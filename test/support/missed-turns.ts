// Nothing missed while a hooks-driven host was down (issue 59, item 3), the same check for every agent: a turn the
// agent runs on a session the host already mirrors, while the host is down (its hooks failing open) or without
// its hooks at all, is imported once, in order, with its messages and honest boundaries. Each host's test file
// (codex-host, claude-code-host) gives the rig: its real binary against its scripted model, its host restarted.
import { expect } from 'vitest';
import type { TestGateway } from '../harness.js';

export interface MissedTurnsRig {
  gw: TestGateway;
  /**
   * One turn of the agent on the rig's session (the first turn creates it): a shell writes `file` (`echo <answer>
   * > <file>`; a model response with the call and no text), then the model answers `answer`; the prompt holds
   * `answer` too. `hooks`: with the host's hooks in
   * the agent's own configuration (observed; they fail open while the host is down); `bare`: without any.
   * `whileRunning`: run while the model holds the answer (the shell has run), the turn ending after it.
   */
  turn(how: 'hooks' | 'bare', file: string, answer: string, whileRunning?: () => Promise<void>): Promise<void>;
  /** The gateway session the host mirrors the rig's session as. */
  sessionID(): string;
  stopHost(): Promise<void>;
  /** A new host on the same folder, started, with its start's work done (`settled`). */
  startHost(): Promise<void>;
}

const SESSION_Q = `query($id: ID!) { session(id: $id) {
  executions(first: 20) { edges { node { id sequence status
    boundary { __typename ... on BoundaryUnavailable { reason detail } }
    changeset { coverage { __typename ... on CoverageUnavailable { reason } } files { path } }
    driftBefore { coverage { __typename ... on CoverageUnavailable { reason } } files { path } }
    jobs(first: 5) { edges { node { kind status exitCode } } } } } }
  messages(first: 100) { edges { node { role execution { id } parts { __typename ... on TextPart { text } } } } } } }`;

const CHANGES_Q = `query($id: ID!, $from: ID!, $to: ID!) { session(id: $id) { changes(from: $from, to: $to) { __typename
  ... on Changeset { files { path } coverage { __typename
    ... on CoverageComplete { incompleteExecutions { id } } ... on CoverageOmitted { incompleteExecutions { id } } ... on CoverageUnavailable { reason incompleteExecutions { id } } } } } } }`;

/** The turns' words, in the order they run (and are expected in the session). */
const WORDS = ['ONE', 'DOWN', 'BARE', 'THREE', 'MID'];
const expected = (w: string) => ['USER:' + w, 'ASSISTANT:', 'ASSISTANT:' + w];

export async function missedTurnsImportedOnce(rig: MissedTurnsRig): Promise<void> {
  const read = async () => {
    const r = await rig.gw.gql(SESSION_Q, { id: rig.sessionID() });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const s = r.data.session;
    const ex = s.executions.edges.map((e: any) => e.node).sort((a: any, b: any) => a.sequence - b.sequence);
    // Each execution's messages, in order, with the turn's word where their text says it (the prompt, the answer;
    // not the shell's call).
    const said = ex.map((e: any, i: number) => s.messages.edges.map((m: any) => m.node).filter((m: any) => m.execution?.id === e.id)
      .map((m: any) => `${m.role}:${m.parts.some((p: any) => p.__typename === 'TextPart' && p.text.includes(WORDS[i])) ? WORDS[i] : ''}`));
    return { ex, said, json: JSON.stringify(s) };
  };
  const honest = (e: any) => {
    expect(e.boundary).toMatchObject({ __typename: 'BoundaryUnavailable', reason: 'START_NOT_CAPTURED' });
    expect(e.boundary.detail).toContain('imported');
    expect(e.changeset.coverage).toMatchObject({ __typename: 'CoverageUnavailable', reason: 'BOUNDARY_UNAVAILABLE' });
    expect(e.jobs.edges.map((j: any) => j.node)).toMatchObject([{ kind: 'SHELL', status: 'COMPLETED', exitCode: 0 }]);
  };

  // Host up: a turn mirrored as it runs.
  await rig.turn('hooks', 'missed-one.txt', 'ONE');
  // Host down: the agent runs a turn on the same session, its hooks finding nobody (they fail open).
  await rig.stopHost();
  await rig.turn('hooks', 'missed-down.txt', 'DOWN');
  // Host up again: the missed turn is imported at its start, after the first, with its messages.
  await rig.startHost();
  const first = await read();
  expect(first.ex.map((e: any) => [e.sequence, e.status, e.boundary.__typename])).toEqual([[1, 'SUCCEEDED', 'SnapshotBoundary'], [2, 'SUCCEEDED', 'BoundaryUnavailable']]);
  honest(first.ex[1]);
  expect(first.said).toEqual([expected('ONE'), expected('DOWN')]);
  // Once: another restart imports nothing again.
  await rig.stopHost();
  await rig.startHost();
  expect((await read()).json).toBe(first.json);

  // Host up, the agent run without any hooks: the next hook of the session imports it before its own turn.
  await rig.turn('bare', 'missed-bare.txt', 'BARE');
  await rig.turn('hooks', 'missed-three.txt', 'THREE');
  const s = await read();
  expect(s.ex.map((e: any) => [e.sequence, e.status, e.boundary.__typename])).toEqual([
    [1, 'SUCCEEDED', 'SnapshotBoundary'], [2, 'SUCCEEDED', 'BoundaryUnavailable'], [3, 'SUCCEEDED', 'BoundaryUnavailable'], [4, 'SUCCEEDED', 'SnapshotBoundary']]);
  honest(s.ex[2]);
  expect(s.said).toEqual(WORDS.slice(0, 4).map(expected));
  expect(s.ex[0].changeset.files.map((f: any) => f.path)).toEqual(['missed-one.txt']);
  expect(s.ex[3].changeset.files.map((f: any) => f.path)).toEqual(['missed-three.txt']);
  // The turn after an imported one does not count its edits as changes made outside any turn: its previous
  // boundary is unknown. The range holds them, naming the imported turns as incomplete.
  expect(s.ex[3].driftBefore).toMatchObject({ coverage: { __typename: 'CoverageUnavailable', reason: 'BOUNDARY_UNAVAILABLE' }, files: [] });
  const r = await rig.gw.gql(CHANGES_Q, { id: rig.sessionID(), from: s.ex[0].id, to: s.ex[3].id });
  const range = r.data.session.changes;
  expect(range.files.map((f: any) => f.path).sort()).toEqual(['missed-bare.txt', 'missed-down.txt', 'missed-one.txt', 'missed-three.txt']);
  expect(range.coverage.incompleteExecutions.map((e: any) => e.id)).toEqual([s.ex[1].id, s.ex[2].id]);

  // The host goes down while a turn it admitted runs, and the turn ends meanwhile (its end hook finds nobody): back
  // up, the host settles it from the transcript, with its messages; its start was captured, its end was not.
  await rig.turn('hooks', 'missed-mid.txt', 'MID', () => rig.stopHost());
  await rig.startHost();
  const m = await read();
  expect(m.ex.map((e: any) => [e.sequence, e.status])).toEqual([[1, 'SUCCEEDED'], [2, 'SUCCEEDED'], [3, 'SUCCEEDED'], [4, 'SUCCEEDED'], [5, 'SUCCEEDED']]);
  expect(m.ex[4].boundary).toMatchObject({ __typename: 'BoundaryUnavailable', reason: 'END_NOT_CAPTURED' });
  expect(m.ex[4].boundary.detail).toContain('did not see this turn end');
  expect(m.ex[4].jobs.edges.map((j: any) => j.node)).toMatchObject([{ kind: 'SHELL', status: 'COMPLETED', exitCode: 0 }]);
  expect(m.said).toEqual(WORDS.map(expected));
  await rig.stopHost();
  await rig.startHost();
  expect((await read()).json).toBe(m.json);
}
