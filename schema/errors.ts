import { builder } from './builder.js';
import {
  ExecutionNotFoundError, GatewayError, HostNotFoundError, InvalidRequestError, JobNotFoundError, MessageNotFoundError,
  PartNotFoundError, SessionBusyError, SessionNotFoundError, SessionSealedError,
} from '../domain/errors.js';

/** `interface Error { message, code }`: every expected failure, with an HTTP-like code. */
export const ErrorInterface = builder.interfaceRef<GatewayError>('Error').implement({
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.int({ resolve: (e) => e.code }),
  }),
});

function errorType<T extends GatewayError>(cls: abstract new (...args: any[]) => T, name: string, fields: (t: any) => Record<string, any>) {
  builder.objectType(cls as any, {
    name,
    interfaces: [ErrorInterface],
    isTypeOf: (v: unknown) => v instanceof cls,
    fields,
  });
}

// Same-named fields of error types share one type (`sessionID: ID` everywhere), so a client can select
// them side by side in one result union without a field-merge conflict.
errorType(SessionNotFoundError, 'SessionNotFoundError', (t) => ({ sessionID: t.exposeID('sessionID', { nullable: true }) }));
errorType(MessageNotFoundError, 'MessageNotFoundError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  messageID: t.exposeID('messageID'),
}));
errorType(PartNotFoundError, 'PartNotFoundError', (t) => ({ messageID: t.exposeID('messageID'), partID: t.exposeID('partID') }));
errorType(ExecutionNotFoundError, 'ExecutionNotFoundError', (t) => ({ executionID: t.exposeID('executionID') }));
errorType(JobNotFoundError, 'JobNotFoundError', (t) => ({ jobID: t.exposeID('jobID') }));
errorType(HostNotFoundError, 'HostNotFoundError', (t) => ({ hostID: t.exposeID('hostID') }));
errorType(SessionBusyError, 'SessionBusyError', (t) => ({
  sessionID: t.exposeID('sessionID', { nullable: true }),
  executionID: t.exposeID('executionID'),
}));
errorType(SessionSealedError, 'SessionSealedError', (t) => ({ sessionID: t.exposeID('sessionID', { nullable: true }) }));
errorType(InvalidRequestError, 'InvalidRequestError', (t) => ({ field: t.exposeString('field') }));

export {
  ExecutionNotFoundError, HostNotFoundError, InvalidRequestError, JobNotFoundError, MessageNotFoundError,
  PartNotFoundError, SessionBusyError, SessionNotFoundError, SessionSealedError,
};
