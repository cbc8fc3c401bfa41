// GraphQL documents of the review-loop tests (test/review-loop-*.test.ts): a reviewer's comment on a line of an
// execution's changeset, the send to the agent, and what the reviewer reads back.
export const COMMENT_FIELDS = `id state body sentAt sentCommandID answeredBy { id }
  anchor { kind executionID path side line startLine quote }`;

export const ADD_COMMENT = `mutation($i: AddReviewCommentInput!) { addReviewComment(input: $i) { __typename
  ... on ReviewComment { ${COMMENT_FIELDS} } ... on Error { message } } }`;

export const SEND_COMMENTS = `mutation($i: SendReviewCommentsInput!) { sendReviewComments(input: $i) { __typename
  ... on ReviewCommentsSent { commandID prompt execution { id status } comments { id } } ... on Error { message } } }`;

export const COMMENT_Q = `query($id: ID!) { reviewComment(id: $id) { ${COMMENT_FIELDS} } }`;

export const EXECUTION_Q = `query($id: ID!) { execution(id: $id) { id status interruptReason
  changeset { files { path status patch } comments { id answeredBy { id } } } } }`;
