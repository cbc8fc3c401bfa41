import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { currentRequest } from './logging.js';
import { operationOf as operationNode } from './access.js';

/** The operation's name and type, for the request's log line and metrics (the operation: server/access.ts). */
export function operationOf(document: DocumentNode, operationName?: string | null): { name: string | null; type: string | undefined } {
  const op = operationNode(document, operationName);
  return { name: op?.name?.value ?? operationName ?? null, type: op?.operation };
}

/**
 * Fills the running request's record (server/logging.ts) with what its log line and metrics need:
 * operation name and type, the caller's role and token ID (never the secret), the count of GraphQL errors.
 */
export function useOperationRecord(): Plugin {
  const fill = (args: { document: DocumentNode; operationName?: string | null; contextValue: any }) => {
    const rec = currentRequest();
    if (!rec) return;
    const op = operationOf(args.document, args.operationName);
    rec.operationName = op.name;
    rec.operationType = op.type;
    rec.role = args.contextValue?.actor?.role;
    rec.tokenID = args.contextValue?.actor?.tokenID;
  };
  const count = (result: unknown) => {
    const rec = currentRequest();
    const errors = (result as { errors?: unknown[] } | undefined)?.errors;
    if (rec && errors?.length) rec.errors = (rec.errors ?? 0) + errors.length;
  };
  return {
    onValidate({ params, context }) {
      const rec = currentRequest();
      if (rec && !rec.operationName) rec.operationName = (context as { params?: { operationName?: string } }).params?.operationName ?? null;
      return ({ result }) => {
        if (rec && result.length) rec.errors = (rec.errors ?? 0) + result.length;
        void params;
      };
    },
    onExecute({ args }) {
      fill(args);
      return { onExecuteDone: ({ result }) => { if (!(Symbol.asyncIterator in Object(result))) count(result); } };
    },
    onSubscribe({ args }) {
      fill(args);
    },
  };
}
