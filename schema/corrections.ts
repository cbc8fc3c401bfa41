import { builder, allow } from './builder.js';
import { InvalidRequestError, MessageNotFoundError, PartNotFoundError, SessionBusyError } from './errors.js';
import { MessageRef } from './refs.js';
import { TextPartRef } from './message.js';
import { correctMessagePart, retractMessage } from '../domain/corrections.js';
import type { MessageRow, PartRow } from '../domain/rows.js';

const CorrectMessagePartInput = builder.inputType('CorrectMessagePartInput', {
  fields: (t) => ({
    messageID: t.id({ required: true }),
    partID: t.id({ required: true, description: 'A TEXT part of the message.' }),
    text: t.string({ required: true, description: 'The replacement text: not empty, at most 1 MiB.' }),
  }),
});

const RetractMessageInput = builder.inputType('RetractMessageInput', {
  fields: (t) => ({
    messageID: t.id({ required: true }),
    reason: t.string({ required: false, description: 'Kept for readers of Message.retraction; never shown to the model.' }),
  }),
});

const MessagePartCorrected = builder.objectRef<{ message: MessageRow; part: PartRow }>('MessagePartCorrected').implement({
  description: 'The part\'s text was replaced; the message and part kept their IDs and their revisions increased.',
  fields: (t) => ({
    message: t.field({ type: MessageRef, resolve: (r) => r.message }),
    part: t.expose('part', { type: TextPartRef }),
  }),
});

const MessageRetracted = builder.objectRef<{ message: MessageRow }>('MessageRetracted').implement({
  description: 'The message kept its ID and now reads as the gateway-owned placeholder.',
  fields: (t) => ({ message: t.field({ type: MessageRef, resolve: (r) => r.message }) }),
});

builder.mutationFields((t) => ({
  correctMessagePart: t.field({
    type: MessagePartCorrected,
    description: 'Replaces the text of a stored TEXT part between executions (busy while one runs).',
    extensions: allow('plugin'),
    errors: { types: [SessionBusyError, MessageNotFoundError, PartNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: CorrectMessagePartInput, required: true }) },
    resolve: (_r, { input }, ctx) =>
      correctMessagePart(ctx.sql, ctx.actor, input),
  }),
  retractMessage: t.field({
    type: MessageRetracted,
    description: 'Retracts a stored message between executions (busy while one runs). Not erasure: the journal keeps the original.',
    extensions: allow('plugin'),
    errors: { types: [SessionBusyError, MessageNotFoundError, InvalidRequestError] },
    args: { input: t.arg({ type: RetractMessageInput, required: true }) },
    resolve: (_r, { input }, ctx) => retractMessage(ctx.sql, ctx.actor, input),
  }),
}));
