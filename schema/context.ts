import { builder } from './builder.js';
import { MessageRoleEnum } from './enums.js';
import { SessionRef } from './refs.js';
import type { ContextMessage } from '../domain/corrections.js';
import { contextOfSession } from '../resolvers/loaders.js';

const ContextMessageRef = builder.objectRef<ContextMessage>('ContextMessage').implement({
  description: 'One message as the next model request would see it.',
  fields: (t) => ({
    messageID: t.exposeID('messageID'),
    role: t.expose('role', { type: MessageRoleEnum }),
    text: t.exposeString('text', { description: 'The TEXT parts (corrected text), or the placeholder of a retraction.' }),
  }),
});

builder.objectField(SessionRef, 'context', (t) =>
  t.field({
    type: [ContextMessageRef],
    description: 'What the next model request would see, oldest first: corrected text, placeholders for retractions.',
    resolve: (s, _a, ctx) => contextOfSession(ctx).load(s.id),
  }),
);
