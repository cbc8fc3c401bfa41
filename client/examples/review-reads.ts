// A review UI's reads: the newest sessions, one session's executions, an execution's frozen changeset.
// Run: GATEWAY_URL=http://127.0.0.1:4000/graphql GATEWAY_TOKEN=<reader token> node review-reads.js
import { ExecutionChangesetDocument, GatewayClient, ListSessionsDocument, SessionWithExecutionsDocument } from '@agent-history/client';

const gw = new GatewayClient({ url: process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', token: process.env.GATEWAY_TOKEN ?? '' });

// Sessions, newest first, 20 a page (at most 100); `after` pages on.
const { sessions } = await gw.request(ListSessionsDocument, { first: 20 });
for (const { node } of sessions.edges) {
  console.log(`${node.id} ${node.status} ${node.title} (${node.directory})`);
  // Its executions, newest first, each with its changeset's size and coverage.
  const { session } = await gw.request(SessionWithExecutionsDocument, { id: node.id, first: 5 });
  for (const { node: execution } of session?.executions.edges ?? []) {
    const c = execution.changeset;
    console.log(`  #${execution.sequence} ${execution.status}: ${c ? `${c.fileCount} files +${c.additions} -${c.deletions} ${c.coverage.__typename}` : 'not settled'}`);
    if (!c?.fileCount) continue;
    // The frozen changeset: every file with its patch (null for a binary file or one over the patch budget).
    const { execution: full } = await gw.request(ExecutionChangesetDocument, { id: execution.id });
    for (const f of full?.changeset?.files ?? []) console.log(`    ${f.status} ${f.path}${f.binary ? ' (binary)' : ''}`);
  }
}
if (sessions.pageInfo.hasNextPage) console.log(`more: after ${sessions.pageInfo.endCursor}`);
