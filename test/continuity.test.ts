import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';
import { begin, createSession, lapseLease, ok, registerHost, settle } from './fixtures.js';

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway({ sweepIntervalMs: 100 }); });
afterAll(async () => { await g?.stop(); });

const Q = `query($id: ID!) { continuity(executionID: $id) { __typename
  ... on ContinuityContinuous { execution { id } }
  ... on ContinuityBroken { reason execution { id } cause { id sequence } }
  ... on ContinuityUnknown { reason detail } } }`;
const continuity = (id: string) => ok(g, Q, { id });

describe('continuity', () => {
  it('is continuous for the last successful execution, and survives a gateway restart', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/c1' });
    const e = await begin(g, host, s.id);
    expect(await continuity(e.id)).toMatchObject({ __typename: 'ContinuityUnknown', reason: 'NOT_SETTLED' });
    await settle(g, host, e.id);
    expect(await continuity(e.id)).toEqual({ __typename: 'ContinuityContinuous', execution: { id: e.id } });
    await g.restart();
    expect(await continuity(e.id)).toEqual({ __typename: 'ContinuityContinuous', execution: { id: e.id } });
  });

  it('stays continuous when the host crashes while the session is idle', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/c2' });
    const e = await begin(g, host, s.id);
    await settle(g, host, e.id);
    // The host stops renewing (crash); its lease lapses and the sweep runs.
    await lapseLease(g.sql, host.hostID);
    await g.app.gateway.sweep();
    expect(await continuity(e.id)).toMatchObject({ __typename: 'ContinuityContinuous' });
  });

  it('is unknown (SETTLEMENT_UNCERTAIN) when the host crashed before the terminal commit', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/c3' });
    const e = await begin(g, host, s.id);
    await lapseLease(g.sql, host.hostID); // the host crashed: no renewal
    await expect.poll(async () => (await continuity(e.id)).reason, { timeout: 5000 }).toBe('SETTLEMENT_UNCERTAIN');
    // A late settle attempt of the crashed host does not turn it into success.
    await registerHost(g, { hostID: host.hostID, token: host.token });
    expect((await settle(g, host, e.id)).__typename).toBe('InvalidRequestError');
    expect(await continuity(e.id)).toMatchObject({ __typename: 'ContinuityUnknown', reason: 'SETTLEMENT_UNCERTAIN' });
  });

  it('a host that lapsed long before any instance swept (all were down) is swept by the next instance\'s first sweep', async () => {
    const host = await registerHost(g, { leaseMs: 60_000 });
    const s = await createSession(g, { directory: '/work/c3b' });
    const e = await begin(g, host, s.id);
    await g.app.gateway.sweep(); // this instance has swept (every lapsed host, at its start)
    // Its lease lapsed an hour ago and no instance ran meanwhile: older than the window an instance
    // sweeps once it has swept every lapsed host at its start.
    await g.sql`UPDATE hosts SET lease_expires_at = now() - interval '1 hour' WHERE id = ${host.hostID}`;
    await g.app.gateway.sweep();
    expect(await continuity(e.id)).toMatchObject({ __typename: 'ContinuityUnknown', reason: 'NOT_SETTLED' });
    await g.restart();
    await expect.poll(async () => (await continuity(e.id)).reason, { timeout: 5000 }).toBe('SETTLEMENT_UNCERTAIN');
  });

  it('is broken by a later execution, by interruption and by failure', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/c4' });
    const e1 = await begin(g, host, s.id);
    await settle(g, host, e1.id);
    const e2 = await begin(g, host, s.id);
    expect(await continuity(e1.id)).toEqual({ __typename: 'ContinuityBroken', reason: 'LATER_EXECUTION', execution: { id: e1.id }, cause: { id: e2.id, sequence: 2 } });
    await settle(g, host, e2.id, 'INTERRUPTED', { interruptReason: 'USER' });
    expect(await continuity(e2.id)).toMatchObject({ __typename: 'ContinuityBroken', reason: 'INTERRUPTED', cause: null });
    const e3 = await begin(g, host, s.id);
    await settle(g, host, e3.id, 'FAILED', { error: 'boom' });
    expect(await continuity(e3.id)).toMatchObject({ __typename: 'ContinuityBroken', reason: 'FAILED' });
    expect(await continuity(e1.id)).toMatchObject({ reason: 'LATER_EXECUTION', cause: { id: e2.id } });
  });

  it('is broken when the session is sealed, and when it is removed (from a tombstone)', async () => {
    const host = await registerHost(g);
    const s = await createSession(g, { directory: '/work/c5' });
    const e = await begin(g, host, s.id);
    await settle(g, host, e.id);
    const sealed = await ok(g, `mutation($id: ID!) { sealSession(input: { sessionID: $id, timeoutMs: 5000 }) { __typename } }`, { id: s.id });
    expect(sealed.__typename).toBe('SessionSealed');
    expect(await continuity(e.id)).toMatchObject({ __typename: 'ContinuityBroken', reason: 'SESSION_SEALED' });
    const s2 = await createSession(g, { directory: '/work/c6' });
    const e2 = await begin(g, host, s2.id);
    await settle(g, host, e2.id);
    await ok(g, `mutation($id: ID!) { removeSession(input: { sessionID: $id }) { __typename } }`, { id: s2.id });
    expect(await continuity(e2.id)).toEqual({ __typename: 'ContinuityBroken', reason: 'SESSION_REMOVED', execution: null, cause: null });
    const [t] = await g.sql`SELECT kind FROM tombstones WHERE id = ${e2.id}`;
    expect(t.kind).toBe('execution');
  });

  it('is unknown for IDs it never saw, and the answer is typed for malformed IDs', async () => {
    expect(await continuity('exe_00000000000000000000000000')).toMatchObject({ __typename: 'ContinuityUnknown', reason: 'UNKNOWN_EXECUTION' });
    expect(await continuity('garbage')).toMatchObject({ __typename: 'ContinuityUnknown', reason: 'UNKNOWN_EXECUTION' });
  });
});
