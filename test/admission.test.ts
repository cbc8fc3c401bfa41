import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, subscribe, type TestGateway } from './harness.js';
import { sealKit } from './seal-fixtures.js';

// admitWork (the admission of a host's front, e.g. the OpenCode proxy) and the seal's
// CLOSE_ADMISSIONS round trip, against the real gateway over HTTP and WebSocket.
let g: TestGateway;
let kit: Awaited<ReturnType<typeof sealKit>>;
beforeAll(async () => {
  g = await startTestGateway();
  kit = await sealKit(g);
});
afterAll(async () => {
  await kit?.dispose();
  await g?.stop();
});

const ADMIT = `mutation($i: AdmitWorkInput!) { admitWork(input: $i) { __typename
  ... on Error { message code } ... on Admission { id sessionID hostID route admittedAt }
  ... on SessionSealedError { sessionID } ... on SessionNotFoundError { sessionID } ... on InvalidRequestError { field } } }`;
const SUB = `subscription($h: ID!) { hostCommands(hostID: $h) { id kind reason sessionID } }`;
const ACK = `mutation($i: AcknowledgeHostCommandInput!) { acknowledgeHostCommand(input: $i) { __typename ... on HostCommand { id acknowledgedAt } } }`;

async function register(exclusiveAdmission = true) {
  const r = await g.gql(`mutation($i: RegisterHostInput!) { registerHost(input: $i) { ... on Host { id } } }`,
    { i: { name: 'front', capabilities: { cancel: true, exclusiveAdmission } } }, kit.hostToken);
  return r.data.registerHost.id as string;
}
async function admit(hostID: string, sessionID: string, route = 'POST /session/{id}/prompt_async') {
  const r = await g.gql(ADMIT, { i: { hostID, sessionID, route } }, kit.hostToken);
  if (!r.data) throw new Error(JSON.stringify(r.errors));
  return r.data.admitWork;
}

describe('admitWork', () => {
  it('admits until the seal begins; the seal is SessionSealed only after the host acknowledges CLOSE_ADMISSIONS', async () => {
    const hostID = await register();
    const s = await kit.session({ hostID });
    const a = await admit(hostID, s);
    expect(a).toMatchObject({ __typename: 'Admission', sessionID: s, hostID, route: 'POST /session/{id}/prompt_async' });
    // Nothing known runs, but an admitted request may still be on its way to the runtime: not sealed yet.
    const first = await kit.seal(s, 0);
    expect(first).toMatchObject({ __typename: 'SealTimeoutError', pendingJobs: [], pendingExecution: null });
    expect(await admit(hostID, s)).toMatchObject({ __typename: 'SessionSealedError', code: 409, sessionID: s });
    const cmds = subscribe(g.ws(kit.hostToken), SUB, { h: hostID });
    const [c] = await cmds.waitFor((e) => e.length > 0);
    expect(c.hostCommands).toMatchObject({ kind: 'CLOSE_ADMISSIONS', reason: 'SEAL', sessionID: s });
    // A waiting seal is woken by the acknowledgement (no polling).
    const waiting = kit.seal(s, 20_000);
    const ack = await g.gql(ACK, { i: { commandID: c.hostCommands.id } }, kit.hostToken);
    expect(ack.data.acknowledgeHostCommand.acknowledgedAt).toBeTruthy();
    expect(await waiting).toMatchObject({ __typename: 'SessionSealed', cancelledJobs: [], interruptedExecution: null });
    expect(await admit(hostID, s)).toMatchObject({ __typename: 'SessionSealedError' });
    // Acknowledged once: not delivered again on a new stream.
    cmds.unsubscribe();
    const again = subscribe(g.ws(kit.hostToken), SUB, { h: hostID });
    const other = await kit.session({ hostID });
    await admit(hostID, other);
    expect((await kit.seal(other, 0)).__typename).toBe('SealTimeoutError');
    const seen = await again.waitFor((e) => e.length > 0);
    expect(seen.map((e) => e.hostCommands.sessionID)).toEqual([other]);
    again.unsubscribe();
  });

  it('a session nobody admitted anything in seals at once; bad input gets typed errors', async () => {
    const hostID = await register();
    const s = await kit.session({ hostID });
    expect((await kit.seal(s, 0)).__typename).toBe('SessionSealed');
    const open = await register(false);
    const s2 = await kit.session();
    expect(await admit(open, s2)).toMatchObject({ __typename: 'InvalidRequestError', field: 'hostID' });
    expect(await admit(hostID, 'ses_00000000000000aaaaaaaaaaaa')).toMatchObject({ __typename: 'SessionNotFoundError', code: 404 });
    expect(await admit(hostID, 'not-an-id')).toMatchObject({ __typename: 'InvalidRequestError', field: 'sessionID' });
    expect(await admit(hostID, s2, '')).toMatchObject({ __typename: 'InvalidRequestError', field: 'route' });
    expect(await admit('hst_00000000000000aaaaaaaaaaaa', s2)).toMatchObject({ __typename: 'HostNotFoundError' });
    // A plugin token cannot admit work.
    const r = await g.gql(ADMIT, { i: { hostID, sessionID: s2, route: 'x' } }, kit.pluginToken);
    expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('races: an admission either commits before the seal (and the seal waits for its close) or is refused', async () => {
    const hostID = await register();
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 5 }), async (n, delay) => {
      const s = await kit.session({ hostID });
      const admits = Array.from({ length: n }, (_, i) => new Promise((r) => setTimeout(r, (i * delay) % 7)).then(() => admit(hostID, s)));
      const seal = new Promise((r) => setTimeout(r, delay)).then(() => kit.seal(s, 0));
      const [results, sealed] = await Promise.all([Promise.all(admits), seal]);
      const granted = results.filter((a: any) => a.__typename === 'Admission');
      for (const a of results as any[]) expect(['Admission', 'SessionSealedError']).toContain(a.__typename);
      const state = await kit.state(s);
      if (granted.length) {
        // Some admission committed before the seal: never sealed until the host closes it.
        expect(sealed.__typename).toBe('SealTimeoutError');
        expect(state.sealedAt).toBeNull();
      } else expect(sealed.__typename).toBe('SessionSealed');
      // Every admission granted was admitted before the seal's first commit.
      const [row] = await g.sql`SELECT seal_requested_at FROM sessions WHERE id = ${s}`;
      for (const a of granted as any[]) expect(new Date(a.admittedAt).getTime()).toBeLessThanOrEqual(new Date(row.sealRequestedAt).getTime());
      expect(await admit(hostID, s)).toMatchObject({ __typename: 'SessionSealedError' });
    }), { numRuns: 30 });
  });
});
