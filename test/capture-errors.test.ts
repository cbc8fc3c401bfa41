// A host that could not capture a boundary says why (beginExecution.startCaptureError,
// settleExecution.endCaptureError): the boundary reads START_/END_NOT_CAPTURED with that reason as its
// detail, never "the host did not capture"; bad input is a typed error that writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { createSession, ok, registerHost, result } from './fixtures.js';

const BEGIN = `mutation($input: BeginExecutionInput!) { beginExecution(input: $input) { ${result('InvalidRequestError', 'SessionBusyError')} ... on Execution { id } } }`;
const SETTLE = `mutation($input: SettleExecutionInput!) { settleExecution(input: $input) { ${result('InvalidRequestError')} ... on Execution { id status } } }`;
const BOUNDARY = `query($id: ID!) { execution(id: $id) { boundary { __typename ... on BoundaryUnavailable { reason detail } }
  changeset { coverage { __typename ... on CoverageUnavailable { reason detail } } } } }`;
const SNAP = `mutation($input: CreateSnapshotInput!) { createSnapshot(input: $input) { ${result('InvalidRequestError')} ... on Snapshot { id } } }`;

describe('capture errors', () => {
  let g: TestGateway;
  beforeAll(async () => { g = await startTestGateway(); });
  afterAll(async () => { await g?.stop(); });

  it('the boundary detail says why the start or the end could not be captured', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/repo', title: 't' });
    const why = 'object 1234567890123456789012345678901234567890 not found in /data/opencode/snapshot/p/h/objects nor in its alternates /repo/.git/objects';
    const e1 = await ok(g, BEGIN, { input: { sessionID: s.id, hostID: host.hostID, trigger: 'PROMPT', startCaptureError: why } }, host.token);
    expect(e1.__typename).toBe('Execution');
    expect((await ok(g, SETTLE, { input: { executionID: e1.id, status: 'SUCCEEDED' } }, host.token)).status).toBe('SUCCEEDED');
    const b1 = await ok(g, BOUNDARY, { id: e1.id });
    expect(b1.boundary).toEqual({ __typename: 'BoundaryUnavailable', reason: 'START_NOT_CAPTURED', detail: `The host could not capture a snapshot when the execution began: ${why}` });

    const snap = await ok(g, SNAP, { input: { sessionID: s.id, hostID: host.hostID, files: [], unscanned: [] } }, host.token);
    const e2 = await ok(g, BEGIN, { input: { sessionID: s.id, hostID: host.hostID, trigger: 'PROMPT', startSnapshot: snap.id } }, host.token);
    await ok(g, SETTLE, { input: { executionID: e2.id, status: 'SUCCEEDED', endCaptureError: 'no OpenCode snapshot directory for /repo' } }, host.token);
    expect((await ok(g, BOUNDARY, { id: e2.id })).boundary).toEqual({ __typename: 'BoundaryUnavailable', reason: 'END_NOT_CAPTURED',
      detail: 'The host could not capture a snapshot when the execution settled: no OpenCode snapshot directory for /repo' });

    // Without a reason: as before.
    const e3 = await ok(g, BEGIN, { input: { sessionID: s.id, hostID: host.hostID, trigger: 'PROMPT' } }, host.token);
    await ok(g, SETTLE, { input: { executionID: e3.id, status: 'SUCCEEDED' } }, host.token);
    expect((await ok(g, BOUNDARY, { id: e3.id })).boundary.detail).toBe('The host did not capture a snapshot when the execution began.');
  });

  it('refuses a capture error next to the snapshot it would explain, or an empty one, writing nothing', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/repo2', title: 't' });
    const snap = await ok(g, SNAP, { input: { sessionID: s.id, hostID: host.hostID, files: [], unscanned: [] } }, host.token);
    const count = async () => Number((await g.sql`SELECT count(*)::int AS n FROM executions WHERE session_id = ${s.id}`)[0].n);
    for (const input of [{ startSnapshot: snap.id, startCaptureError: 'why' }, { startCaptureError: '  ' }, { startCaptureError: 'x'.repeat(2_001) }]) {
      const r = await ok(g, BEGIN, { input: { sessionID: s.id, hostID: host.hostID, trigger: 'PROMPT', ...input } }, host.token);
      expect(r).toMatchObject({ __typename: 'InvalidRequestError', field: 'startCaptureError', code: 400 });
    }
    expect(await count()).toBe(0);
    const e = await ok(g, BEGIN, { input: { sessionID: s.id, hostID: host.hostID, trigger: 'PROMPT', startSnapshot: snap.id } }, host.token);
    const bad = await ok(g, SETTLE, { input: { executionID: e.id, status: 'SUCCEEDED', endSnapshot: snap.id, endCaptureError: 'why' } }, host.token);
    expect(bad).toMatchObject({ __typename: 'InvalidRequestError', field: 'endCaptureError' });
    const [row] = await g.sql`SELECT status FROM executions WHERE id = ${e.id}`;
    expect(row.status).toBe('RUNNING');
  });
});
