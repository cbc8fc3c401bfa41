import DataLoader from 'dataloader';
import { builder } from './builder.js';
import { MessageRoleEnum } from './enums.js';
import { SessionRef } from './refs.js';
import { sessionContexts, type ContextMessage } from '../domain/corrections.js';
import type { Context } from '../resolvers/context.js';

const ContextMessageRef = builder.objectRef<ContextMessage>('ContextMessage').implement({
  description: 'One message as the next model request would see it.',
  fields: (t) => ({
    messageID: t.exposeID('messageID'),
    role: t.field({ type: MessageRoleEnum, resolve: (m) => m.role }),
    text: t.exposeString('text', { description: 'The TEXT parts (corrected text), or the placeholder of a retraction.' }),
  }),
});

// Batching only (no cache): a subscription keeps its context across events, and context must be current.
const loaders = new WeakMap<Context, DataLoader<string, ContextMessage[]>>();
function contextLoader(ctx: Context) {
  let l = loaders.get(ctx);
  if (!l) {
    l = new DataLoader((ids) => sessionContexts(ctx.sql, ids), { cache: false });
    loaders.set(ctx, l);
  }
  return l;
}

builder.objectField(SessionRef, 'context', (t) =>
  t.field({
    type: [ContextMessageRef],
    description: 'What the next model request would see, oldest first: corrected text, placeholders for retractions.',
    resolve: (s, _a, ctx) => contextLoader(ctx).load(s.id),
  }),
);
