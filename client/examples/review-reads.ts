// A review UI's reads: the newest sessions, one session's executions, an execution's frozen changeset.
// Run: GATEWAY_URL=http://127.0.0.1:4000/graphql GATEWAY_TOKEN=<reader token> npx tsx review-reads.ts
import { ExecutionChangesetDocument, GatewayClient, ListSessionsDocument, SessionWithExecutionsDocument } from '@agent-history/client';

const gw = new GatewayClient({ url: process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', token: process.env.GATEWAY_TOKEN ?? '' });

// Sessions, newest first, 20 a page (at most 100); `after` pages on.
const { sessions } = await gw.request(ListSessionsDocument, { first: 20 });
for (const { node } of sessions.edges) {
  console.log(`${node.id} ${node.status} ${node.title} (${node.directory})`);
  // Its executions, newest first, each with its changeset's size and coverage.
  const { session } = await gw.request(SessionWithExecutionsDocument, { id: node.id, first: 5 });
  for (const { node: execution } of session?.executions.edges ?? []) {
    console.log(`  #${execution.sequence} ${execution.status}: ${changes(execution.changeset)}`);
    if (!execution.changeset?.fileCount) continue;
    // The frozen changeset: every file with its patch (null for a binary file or one over the patch budget).
    const { execution: full } = await gw.request(ExecutionChangesetDocument, { id: execution.id });
    for (const f of full?.changeset?.files ?? []) console.log(`    ${f.status} ${f.path}${f.binary ? ' (binary)' : ''}`);
  }
}
if (sessions.pageInfo.hasNextPage) console.log(`more: after ${sessions.pageInfo.endCursor}`);

/** A changeset in words. Its counts mean something only when its coverage is known: an execution whose boundaries
 *  were not captured changed files nobody knows, which is not "0 files". */
function changes(c: { fileCount: number; additions: number; deletions: number; coverage: { __typename: string; reason?: string } } | null): string {
  if (!c) return 'not settled';
  if (c.coverage.__typename === 'CoverageUnavailable') return `changes unknown (${c.coverage.reason})`;
  const files = c.fileCount === 0 ? 'no files changed' : `${c.fileCount} file${c.fileCount === 1 ? '' : 's'} +${c.additions} -${c.deletions}`;
  return c.coverage.__typename === 'CoverageOmitted' ? `${files}, some paths left out (coverage omitted)` : files;
}
