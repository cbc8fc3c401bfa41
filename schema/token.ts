import { builder, allow } from './builder.js';
import { TokenRoleEnum } from './enums.js';
import { InvalidRequestError } from './errors.js';
import { createToken, revokeToken, type CreatedToken } from '../domain/tokens.js';

const CreatedTokenRef = builder.objectRef<CreatedToken>('CreatedToken').implement({
  description: 'A new bearer token. `secret` is shown this once; only its hash is stored.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.field({ type: TokenRoleEnum, resolve: (c) => c.role }),
    directory: t.exposeString('directory', { nullable: true }),
    label: t.exposeString('label'),
    secret: t.exposeString('secret'),
  }),
});

const CreateTokenInput = builder.inputType('CreateTokenInput', {
  fields: (t) => ({
    role: t.field({ type: TokenRoleEnum, required: true }),
    directory: t.string({ required: false, description: 'Scope the token to sessions under this directory.' }),
    label: t.string({ required: false }),
  }),
});

builder.mutationFields((t) => ({
  createToken: t.field({
    type: CreatedTokenRef,
    extensions: allow('admin'),
    errors: { types: [InvalidRequestError] },
    args: { input: t.arg({ type: CreateTokenInput, required: true }) },
    resolve: (_r, { input }, ctx) => createToken(ctx.sql, input),
  }),
  revokeToken: t.boolean({
    extensions: allow('admin'),
    description: 'True when an active token was revoked.',
    args: { tokenID: t.arg.id({ required: true }) },
    resolve: async (_r, { tokenID }, ctx) => {
      // This instance refuses the token at once; the others when the notification arrives.
      try { return await revokeToken(ctx.sql, String(tokenID)); } finally { ctx.tokens.forget(String(tokenID)); }
    },
  }),
}));
