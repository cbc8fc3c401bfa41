import { builder, allow } from './builder.js';
import { connectionOf, pageArgs } from './connection.js';
import { TokenRoleEnum } from './enums.js';
import { InvalidRequestError } from './errors.js';
import { createToken, listTokens, revokeToken, type CreatedToken, type TokenRow } from '../domain/tokens.js';
import { decodeCursor, encodeCursor } from '../resolvers/cursors.js';
import { pageSize, toPage } from '../resolvers/pagination.js';

const CreatedTokenRef = builder.objectRef<CreatedToken>('CreatedToken').implement({
  description: 'A new bearer token. `secret` is shown this once; only its hash is stored.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.expose('role', { type: TokenRoleEnum }),
    directory: t.exposeString('directory', { nullable: true }),
    label: t.exposeString('label'),
    secret: t.exposeString('secret'),
  }),
});

const TokenRef = builder.objectRef<TokenRow>('Token').implement({
  description: 'A bearer token as an admin sees it: never its secret or hash.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.expose('role', { type: TokenRoleEnum }),
    directory: t.exposeString('directory', { nullable: true, description: 'Its directory scope; null: unscoped.' }),
    label: t.exposeString('label'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
  }),
});
const TokenConnection = connectionOf('Token', TokenRef);

const CreateTokenInput = builder.inputType('CreateTokenInput', {
  fields: (t) => ({
    role: t.field({ type: TokenRoleEnum, required: true }),
    directory: t.string({
      required: false,
      description: 'Scope the token to sessions under this directory. A scoped admin creates only tokens at or below its own directory (without this: its own).',
    }),
    label: t.string({ required: false }),
  }),
});

builder.queryField('tokens', (t) =>
  t.field({
    type: TokenConnection,
    extensions: allow('admin'),
    description: 'Tokens, newest first (admin). A scoped admin lists only tokens scoped at or below its directory.',
    args: { ...pageArgs, includeRevoked: t.arg.boolean({ required: false, description: 'Also list revoked tokens (default false).' }) },
    resolve: async (_r, args, ctx) => {
      const limit = pageSize(args.first);
      const after = decodeCursor('token', args.after);
      const rows = await listTokens(ctx.sql, ctx.actor, { limit, after, includeRevoked: args.includeRevoked ?? false });
      return toPage(rows, limit, (r) => encodeCursor('token', r.id));
    },
  }),
);

builder.mutationFields((t) => ({
  createToken: t.field({
    type: CreatedTokenRef,
    extensions: allow('admin'),
    errors: { types: [InvalidRequestError] },
    args: { input: t.arg({ type: CreateTokenInput, required: true }) },
    resolve: (_r, { input }, ctx) => createToken(ctx.sql, input, ctx.actor),
  }),
  revokeToken: t.boolean({
    extensions: allow('admin'),
    description: 'True when an active token was revoked. False for an unknown token, one already revoked, and (for a scoped admin) one not scoped at or below its directory.',
    args: { tokenID: t.arg.id({ required: true }) },
    resolve: async (_r, { tokenID }, ctx) => {
      // This instance refuses the token at once; the others when the notification arrives.
      // (forget in finally: also when the answer is lost after the commit; dropping a cached entry is harmless).
      try { return await revokeToken(ctx.sql, tokenID, ctx.actor); } finally { ctx.tokens.forget(tokenID); }
    },
  }),
}));
