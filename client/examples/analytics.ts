// An analytics tool: every settled execution, once, in order, across restarts of this process. The cursor
// of the last event handled is saved; the next run subscribes after it (the first run after the log's
// head), so the gateway replays what settled meanwhile. While the process runs the client reconnects by
// itself and resumes from the cursor too; `error` is reached only when it gives up (the gateway stayed
// unreachable for `retryForMs`, or the token was refused), and the next start goes on from the file.
// Run: GATEWAY_URL=… GATEWAY_TOKEN=<reader token> CURSOR_FILE=settled.cursor npx tsx analytics.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { ExecutionSettledDocument, GatewayClient, LatestSettlementCursorDocument } from '@agent-history/client';

const gw = new GatewayClient({ url: process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', token: process.env.GATEWAY_TOKEN ?? '' });
const cursorFile = process.env.CURSOR_FILE ?? 'settled.cursor';

let after: string | null = null;
try { after = readFileSync(cursorFile, 'utf8').trim() || null; } catch { /* the first run */ }
after ??= (await gw.request(LatestSettlementCursorDocument, {})).latestSettlementCursor;

const stop = gw.subscribe(ExecutionSettledDocument, { after }, {
  next: ({ executionSettled: s }) => {
    console.log(JSON.stringify({ executionID: s.executionID, sessionID: s.sessionID, status: s.status }));
    writeFileSync(cursorFile, s.cursor); // handled: the next run starts after it
  },
  error: (e) => { console.error(`settlements: ${e instanceof Error ? e.message : JSON.stringify(e)}`); process.exitCode = 1; void gw.close(); },
});
process.once('SIGTERM', () => { stop(); void gw.close(); });
