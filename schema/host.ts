import { builder, allow } from './builder.js';
import { HostNotFoundError, InvalidRequestError } from './errors.js';
import { HostRef } from './refs.js';
import { registerHost, renewHostLease } from '../domain/hosts.js';

export const ModelRef = builder.objectRef<{ providerID: string; modelID: string }>('Model').implement({
  fields: (t) => ({ providerID: t.exposeString('providerID'), modelID: t.exposeString('modelID') }),
});

const CapabilitiesRef = builder.objectRef<{ cancel: boolean; compact: boolean; generate: boolean; prompt: boolean; exclusiveAdmission: boolean; sessions: boolean }>('HostCapabilities').implement({
  fields: (t) => ({
    cancel: t.exposeBoolean('cancel'), compact: t.exposeBoolean('compact'), generate: t.exposeBoolean('generate'), prompt: t.exposeBoolean('prompt'),
    exclusiveAdmission: t.exposeBoolean('exclusiveAdmission'), sessions: t.exposeBoolean('sessions'),
  }),
});

HostRef.implement({
  description: 'An agent runtime that does the work; it holds a lease it must renew.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    capabilities: t.field({
      type: CapabilitiesRef,
      resolve: (h) => ({ cancel: h.canCancel, compact: h.canCompact, generate: h.canGenerate, prompt: h.canPrompt, exclusiveAdmission: h.exclusiveAdmission, sessions: h.canManageSessions }),
    }),
    models: t.field({ type: [ModelRef], resolve: (h) => h.models as any }),
    leaseMs: t.exposeInt('leaseMs'),
    leaseExpiresAt: t.expose('leaseExpiresAt', { type: 'DateTime' }),
  }),
});

const CapabilitiesInput = builder.inputType('HostCapabilitiesInput', {
  fields: (t) => ({
    cancel: t.boolean({ required: false, description: 'The host obeys cancel-job and interrupt-execution commands.' }),
    compact: t.boolean({ required: false }),
    generate: t.boolean({ required: false }),
    prompt: t.boolean({ required: false, description: 'The host carries out PROMPT commands (sendReviewComments): it runs the prompt as a turn of its agent and begins that execution with the command\'s ID.' }),
    exclusiveAdmission: t.boolean({
      required: false,
      description: 'True (the default) when the host starts work only when the gateway admits it. False when its runtime can start work behind the gateway (e.g. an OpenCode server other clients also drive): a seal then cannot prove that nothing new starts.',
    }),
    sessions: t.boolean({
      required: false,
      description: 'The host mirrors sessions of its own runtime (e.g. the OpenCode bridge): createSession under one of its sessions, a rename and a removal are applied there first (host commands CREATE_SESSION, RENAME_SESSION, REMOVE_SESSION).',
    }),
  }),
});
export const ModelInput = builder.inputType('ModelInput', {
  fields: (t) => ({ providerID: t.string({ required: true }), modelID: t.string({ required: true }) }),
});
const RegisterHostInput = builder.inputType('RegisterHostInput', {
  fields: (t) => ({
    hostID: t.id({ required: false, description: 'The previous ID of a host back from a restart: it takes its work back.' }),
    name: t.string({ required: true }),
    capabilities: t.field({ type: CapabilitiesInput, required: false }),
    models: t.field({ type: [ModelInput], required: false }),
    leaseMs: t.int({ required: false, description: 'From 1000 to 600000 (default 30000).' }),
  }),
});
const RenewHostLeaseInput = builder.inputType('RenewHostLeaseInput', { fields: (t) => ({ hostID: t.id({ required: true }) }) });

builder.mutationFields((t) => ({
  registerHost: t.field({
    type: HostRef,
    extensions: allow('host'),
    errors: { types: [HostNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: RegisterHostInput, required: true }) },
    resolve: (_r, { input }, ctx) => registerHost(ctx.sql, ctx.actor, input),
  }),
  renewHostLease: t.field({
    type: HostRef,
    extensions: allow('host'),
    errors: { types: [HostNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: RenewHostLeaseInput, required: true }) },
    resolve: (_r, { input }, ctx) => renewHostLease(ctx.sql, ctx.actor, input),
  }),
}));
