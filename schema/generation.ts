import { builder, allow } from './builder.js';
import {
  CommandTimeoutError, HostUnavailableError, InvalidRequestError, ModelNotFoundError, SessionNotFoundError, UnsupportedError,
} from './errors.js';
import { hostRequestOptions } from './compaction.js';
import { generate, type Generation } from '../domain/generation.js';

const GenerationRef = builder.objectRef<Generation>('Generation').implement({
  description: 'A hidden completion: nothing of it is stored in the session.',
  fields: (t) => ({
    text: t.exposeString('text'),
    providerID: t.exposeString('providerID'),
    modelID: t.exposeString('modelID'),
    inputTokens: t.exposeInt('inputTokens', { description: 'Every input token, the cached ones included (the meaning of ExecutionUsage.inputTokens).' }),
    outputTokens: t.exposeInt('outputTokens'),
  }),
});

const GenerateModelInput = builder.inputType('GenerateModelInput', {
  fields: (t) => ({ providerID: t.string({ required: true }), modelID: t.string({ required: true }) }),
});

const GenerateInput = builder.inputType('GenerateInput', {
  fields: (t) => ({
    sessionID: t.id({ required: true }),
    prompt: t.string({ required: true, description: 'Sent after the session\'s context as a user message (at most 256 KiB).' }),
    model: t.field({ type: GenerateModelInput, required: true, description: 'One of the models the session\'s host declared; never replaced by another.' }),
    timeoutMs: t.int({ required: false, description: 'How long to wait for the host (default 30000, capped by the gateway\'s configuration).' }),
  }),
});

builder.mutationField('generate', (t) =>
  t.field({
    type: GenerationRef,
    description: 'Runs a hidden completion on the session\'s host with the given model and the session\'s context. Nothing is added to the transcript.',
    extensions: allow('plugin'),
    errors: { types: [ModelNotFoundError, SessionNotFoundError, HostUnavailableError, UnsupportedError, CommandTimeoutError, InvalidRequestError] },
    args: { input: t.arg({ type: GenerateInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      generate(ctx.sql, ctx.actor, input, hostRequestOptions(ctx)),
  }),
);
