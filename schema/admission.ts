// Admission through a host's front (the OpenCode admission proxy). domain/admission.ts.
import { builder, allow } from './builder.js';
import { HostNotFoundError, InvalidRequestError, SessionBusyError, SessionNotFoundError, SessionSealedError } from './errors.js';
import { admitWork, type AdmissionRow } from '../domain/admission.js';

const AdmissionRef = builder.objectRef<AdmissionRow>('Admission').implement({
  description: 'A request a host\'s front may forward to its runtime: admitted under the session lock, before any seal. Open until the host quiesces the session for a seal.',
  fields: (t) => ({
    id: t.exposeID('id'),
    // Typed `ID` (nullable) like the error members' sessionID/hostID, so both can be selected together.
    sessionID: t.exposeID('sessionId', { nullable: true }),
    hostID: t.exposeID('hostId', { nullable: true }),
    route: t.exposeString('route'),
    admittedAt: t.expose('admittedAt', { type: 'DateTime' }),
  }),
});

const AdmitWorkInput = builder.inputType('AdmitWorkInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    hostID: t.id({ required: true, description: 'A live host that declared capabilities.exclusiveAdmission.' }),
    route: t.string({ required: true, description: 'What the front is about to forward (e.g. "POST /session/{id}/prompt_async"), for the record.' }),
    commandID: t.id({ required: false, description: 'The PROMPT host command (sendReviewComments) the request carries out: checked to be an open PROMPT of this session sent to this host, with the session idle (SessionBusyError). The execution it starts links it: beginExecution with the same commandID.' }),
  }),
});

builder.mutationField('admitWork', (t) =>
  t.field({
    type: AdmissionRef,
    description: 'Asks, before a host\'s front forwards a request that can start work in the session, whether the gateway admits it: the same session lock and seal check as beginExecution. SessionSealedError from the seal\'s first commit on.',
    extensions: allow('host'),
    errors: { types: [SessionSealedError, SessionBusyError, SessionNotFoundError, HostNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: AdmitWorkInput, required: true }) },
    resolve: (_r, { input }, ctx) => admitWork(ctx.sql, ctx.actor, input),
  }),
);
