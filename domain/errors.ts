/**
 * The typed failures of CONTRACT section 6. Domain operations throw them; the GraphQL layer turns
 * each into a member of the field's result union (data, not GraphQL `errors`). Anything else thrown
 * is unexpected and masked.
 */
export abstract class GatewayError extends Error {
  abstract readonly code: number;
}

export class SessionNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly sessionID: string) { super(`Session ${sessionID} was not found.`); }
}
export class MessageNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly messageID: string, readonly sessionID: string | null = null) {
    super(`Message ${messageID} was not found.`);
  }
}
export class PartNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly messageID: string, readonly partID: string) {
    super(`Part ${partID} of message ${messageID} was not found.`);
  }
}
export class ExecutionNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly executionID: string) { super(`Execution ${executionID} was not found.`); }
}
export class JobNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly jobID: string) { super(`Job ${jobID} was not found.`); }
}
export class HostNotFoundError extends GatewayError {
  readonly code = 404;
  constructor(readonly hostID: string) { super(`Host ${hostID} was not found.`); }
}
export class SessionBusyError extends GatewayError {
  readonly code = 409;
  constructor(readonly sessionID: string, readonly executionID: string) {
    super(`Session ${sessionID} is busy: execution ${executionID} is running.`);
  }
}
export class SessionSealedError extends GatewayError {
  readonly code = 409;
  constructor(readonly sessionID: string) { super(`Session ${sessionID} is sealed: it admits no new work.`); }
}
export class InvalidRequestError extends GatewayError {
  readonly code = 400;
  constructor(readonly field: string, message: string) { super(message); }
}
