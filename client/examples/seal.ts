// A plugin's seal, every error of the operation handled: the switch on `_tag` compiles only while it
// covers each member of SealSession's error union, so a member added to the schema breaks this build.
// Run: GATEWAY_URL=… GATEWAY_TOKEN=<plugin token> npx tsx seal.ts <sessionID>
import { GatewayCallError, GatewayClient, SealSessionDocument, unhandled, type CallError } from '@agent-history/client';

const gw = new GatewayClient({ url: process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', token: process.env.GATEWAY_TOKEN ?? '' });

/** Seals the session; answers what happened, in words. Anything but the operation's errors is thrown. */
export async function seal(sessionID: string): Promise<string> {
  try {
    const sealed = await gw.call(SealSessionDocument, { input: { sessionID, timeoutMs: 30_000 } });
    return `sealed at ${sealed.sealedAt}; ${sealed.cancelledJobs.length === 1 ? '1 job' : `${sealed.cancelledJobs.length} jobs`} cancelled`;
  } catch (e) {
    // Narrows `e.error` to SealSession's errors; network failures and GraphQL errors are not among them.
    if (!GatewayCallError.is(e, SealSessionDocument)) throw e;
    return explain(e.error);
  }
}

function explain(error: CallError<typeof SealSessionDocument>): string {
  switch (error._tag) {
    case 'SealTimeoutError':
      // Admissions stay closed: calling again waits for what is still running.
      return `still running after ${error.timeoutMs} ms: ${error.pendingJobs.map((j) => j.id).join(', ') || error.pendingExecution?.id}`;
    case 'SealUnsupportedError':
      return `the host cannot stop this session's work (${error.reason})`;
    case 'SessionNotFoundError':
      return `no session ${error.sessionID} (or not in this token's directory)`;
    case 'InvalidRequestError':
      return `bad input: ${error.field}: ${error.message}`;
    default:
      return unhandled(error);
  }
}

const sessionID = process.argv[2];
if (sessionID) console.log(await seal(sessionID));
