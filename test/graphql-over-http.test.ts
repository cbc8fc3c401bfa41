// The official GraphQL-over-HTTP audit (graphql-http's `serverAudits`) against a real gateway, with an admin
// token (every request needs one): every audit passes, the SHOULDs and MAYs included, so a change that breaks
// one fails here. Apart from auth, the requests are the audit's own.
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './harness.js';

let g: TestGateway;
beforeAll(async () => { g = await startTestGateway(); });
afterAll(async () => { await g?.stop(); });

/** fetch, with the admin token added to each request's headers. */
const authenticated: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${g.admin}`);
  return fetch(input, { ...init, headers });
};

const audits = serverAudits({ url: () => g.url, fetchFn: authenticated });

describe('graphql-http serverAudits', () => {
  it('has the 61 audits of graphql-http 1.23.1', () => {
    expect(audits).toHaveLength(61);
  });

  for (const audit of audits) {
    it(audit.name, async () => {
      const result = await audit.fn();
      expect(result.status, result.status === 'ok' ? '' : `${result.reason} ${JSON.stringify(result.response ? { status: result.response.status } : {})}`).toBe('ok');
    });
  }
});
