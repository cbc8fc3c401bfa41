import type { DocumentNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { recordOf, reportUnexpected, type Logger, type RequestRecord } from './logging.js';
import { isAsyncIterable, mapAsyncIterator } from 'graphql-yoga';
import { operationOf as operationNode } from './access.js';

/** The operation's name and type, for the request's log line and metrics (the operation: server/access.ts). */
export function operationOf(document: DocumentNode, operationName?: string | null): { name: string | null; type: string | undefined } {
  const op = operationNode(document, operationName);
  return { name: op?.name?.value ?? operationName ?? null, type: op?.operation };
}

/**
 * Fills the record of the request (server/logging.ts) a GraphQL operation runs in, found in its
 * context, with what its log line and metrics need: operation name and type, the caller's role and
 * token ID (never the secret), the count of GraphQL errors. Over HTTP through Yoga it also logs the
 * unexpected errors of the result (masked by then) with the request to `log` (WebSocket operations
 * do that where they send the result).
 */
export function useOperationRecord(log: Logger): Plugin {
  const fill = (args: { document: DocumentNode; operationName?: string | null; contextValue: any }) => {
    const rec = recordOf(args.contextValue);
    if (!rec) return;
    const op = operationOf(args.document, args.operationName);
    rec.operationName = op.name;
    rec.operationType = op.type;
    rec.role = args.contextValue?.actor?.role;
    rec.tokenID = args.contextValue?.actor?.tokenID;
  };
  const count = (result: unknown, rec: RequestRecord | undefined) => {
    const errors = (result as { errors?: unknown[] } | undefined)?.errors;
    if (rec && errors?.length) rec.errors = (rec.errors ?? 0) + errors.length;
  };
  return {
    onValidate({ params, context }) {
      const rec = recordOf(context);
      if (rec && !rec.operationName) rec.operationName = (context as { params?: { operationName?: string } }).params?.operationName ?? null;
      return ({ result }) => {
        if (rec && result.length) rec.errors = (rec.errors ?? 0) + result.length;
        void params;
      };
    },
    onExecute({ args }) {
      fill(args);
      const rec = recordOf(args.contextValue);
      return { onExecuteDone: ({ result }) => { if (!(Symbol.asyncIterator in Object(result))) count(result, rec); } };
    },
    onSubscribe({ args }) {
      fill(args);
    },
    // Yoga's own HTTP path: the result as it is sent (masked), with the server context holding the record.
    onExecutionResult({ result, setResult, context }) {
      const rec = recordOf(context);
      if (!rec) return;
      if (isAsyncIterable(result)) {
        setResult(mapAsyncIterator(result, (r) => { reportUnexpected(log, r, rec, 'graphql'); return r; }) as typeof result);
      } else if (Array.isArray(result)) {
        for (const r of result) reportUnexpected(log, r, rec, 'graphql');
      } else reportUnexpected(log, result, rec, 'graphql');
    },
  };
}
