import { builder } from './builder.js';
import { NodeRef } from './refs.js';
import { kindOf } from '../domain/ids.js';

builder.queryField('node', (t) =>
  t.field({
    type: NodeRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => {
      const s = String(id);
      switch (kindOf(s)) {
        case 'session': return ctx.loaders.session.load(s);
        case 'execution': return ctx.loaders.execution.load(s);
        case 'message': return ctx.loaders.message.load(s);
        case 'job': return ctx.loaders.job.load(s);
        default: return null;
      }
    },
  }),
);
