import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

describe('smoke', () => {
  it('creates and lists a session', async () => {
    const r = await g.gql(`mutation { createSession(input: { title: "t", directory: "/w/a" }) { __typename ... on Session { id status } } }`);
    expect(r.data.createSession.__typename).toBe('Session');
    const l = await g.gql(`{ sessions { edges { node { id title } } } }`);
    expect(l.data.sessions.edges).toHaveLength(1);
  });
});
