// A plugin that reviews an execution's changes with a rule of its own and sends its comments back to the agent:
// each added line with a TODO gets a comment on that line (the gateway checks the line against the patch and keeps
// the quoted line), then the comments go to the session's agent as its next prompt, and the execution it starts
// answers them. Run: GATEWAY_URL=… GATEWAY_TOKEN=<plugin token> npx tsx review-comments.ts <executionID>
import {
  AddReviewCommentDocument, ExecutionToReviewDocument, GatewayCallError, GatewayClient, SendReviewCommentsDocument, unhandled, type CallError,
} from '@agent-history/client';

const gw = new GatewayClient({ url: process.env.GATEWAY_URL ?? 'http://127.0.0.1:4000/graphql', token: process.env.GATEWAY_TOKEN ?? '' });

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** The added lines of a unified diff, by their line number in the new file. */
function addedLines(patch: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let line = 0;
  for (const l of patch.split('\n')) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(l);
    if (hunk) line = Number(hunk[1]);
    else if (line && l.startsWith('+')) out.push({ line: line++, text: l.slice(1) });
    else if (line && l.startsWith(' ')) line++;
  }
  return out;
}

export async function review(executionID: string): Promise<string> {
  const { execution } = await gw.request(ExecutionToReviewDocument, { executionID });
  if (!execution) return `no execution ${executionID}`;
  const sessionID = execution.session.id;
  const commentIDs: string[] = [];
  for (const file of execution.changeset.files) {
    if (file.binary || file.patch === null) continue;
    for (const { line, text } of addedLines(file.patch)) {
      if (!text.includes('TODO')) continue;
      const comment = await gw.call(AddReviewCommentDocument, {
        input: { sessionID, changeset: { kind: 'EXECUTION', executionID }, path: file.path, side: 'NEW', line, body: 'Finish this TODO before we merge.' },
      });
      commentIDs.push(comment.id);
    }
  }
  if (!commentIDs.length) return 'nothing to say';
  try {
    const sent = await gw.call(SendReviewCommentsDocument, { input: { sessionID, commentIDs, timeoutMs: 30_000 } });
    return `sent ${count(sent.comments.length, 'comment')}; the agent answers in execution #${sent.execution.sequence} (${sent.execution.id})`;
  } catch (e) {
    if (!GatewayCallError.is(e, SendReviewCommentsDocument)) throw e;
    return `${count(commentIDs.length, 'comment')} kept open: ${explain(e.error)}`;
  }
}

function explain(error: CallError<typeof SendReviewCommentsDocument>): string {
  switch (error._tag) {
    case 'SessionBusyError':
      return `the agent is busy (execution ${error.executionID}): send them again when it is idle`;
    case 'SessionSealedError':
      return 'the session is sealed: it takes no more prompts';
    case 'UnsupportedError':
      return `the session's host cannot take a prompt (${error.capability})`;
    case 'HostUnavailableError':
      return `the session's host is not there (${error.reason})`;
    case 'CommandTimeoutError':
      return `the host did not start the prompt within ${error.timeoutMs} ms`;
    case 'CommentNotFoundError':
    case 'SessionNotFoundError':
      return error.message;
    case 'InvalidRequestError':
      return `bad input: ${error.field}: ${error.message}`;
    default:
      return unhandled(error);
  }
}

const executionID = process.argv[2];
if (executionID) console.log(await review(executionID));
