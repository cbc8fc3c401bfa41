import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GraphQLError, Kind, parse, type DocumentNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { Actor } from '../domain/access.js';
import { PROJECT_DIR } from './version.js';

/**
 * Trusted documents (persisted operations): the documents the gateway knows by hash, and whether it runs
 * only those.
 *
 * The list is GraphQL Code Generator's output for the typed client's operations (`npm run codegen`:
 * client/persisted-documents.json, hash → document), plus any manifests of the same form given in
 * TRUSTED_DOCUMENTS. A request names a document by hash in Apollo's form,
 * `extensions: { persistedQuery: { version: 1, sha256Hash } }`, with no `query` (the typed client does
 * this for its own documents), or sends the document's text as usual.
 *
 * With `only` (TRUSTED_DOCUMENTS_ONLY=1) a document's text is refused (PERSISTED_QUERY_ONLY) unless the
 * token is an admin's, or the document only introspects the schema (every role may read the schema:
 * GraphiQL's Docs pane works with any token). Without it, any document runs, and a known hash is the
 * same as its text. Over HTTP this is Yoga's persisted-operations plugin; over WebSocket the same store,
 * rules and errors, in `documentFor` (graphql-ws messages do not pass Yoga's request hooks).
 */
export interface TrustedDocumentsConfig {
  /** Run only documents of the list (admins and introspection excepted). */
  only: boolean;
  /** More manifests (JSON: hash → document text), beside the client's own. */
  files: string[];
}

export const DEFAULT_TRUSTED_DOCUMENTS: TrustedDocumentsConfig = { only: false, files: [] };

/** The typed client's documents, written by `npm run codegen`. */
export const CLIENT_DOCUMENTS_FILE = path.join(PROJECT_DIR, 'client', 'persisted-documents.json');

/** A manifest that cannot be used: the message names the file and what is wrong with it. */
export class ManifestError extends Error {}

/** A hash as the list keys it: lowercase hex, without the `sha256:` prefix some tools write. */
function normalizeHash(hash: string): string {
  return hash.trim().replace(/^sha256:/i, '').toLowerCase();
}

export function readManifest(file: string): Map<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ManifestError(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ManifestError(`${file}: not a JSON object of hash → document`);
  const out = new Map<string, string>();
  for (const [hash, text] of Object.entries(raw)) {
    if (typeof text !== 'string' || !/^(sha256:)?[0-9a-f]{16,128}$/i.test(hash)) throw new ManifestError(`${file}: "${hash.slice(0, 80)}" is not a hash with a document's text`);
    out.set(normalizeHash(hash), text);
  }
  return out;
}

export class TrustedDocuments {
  private readonly documents = new Map<string, string>();
  readonly only: boolean;

  /** Reads the client's list and `config.files`; throws ManifestError for one that cannot be read. */
  constructor(config: TrustedDocumentsConfig = DEFAULT_TRUSTED_DOCUMENTS, clientFile = CLIENT_DOCUMENTS_FILE) {
    this.only = config.only;
    for (const file of [clientFile, ...config.files]) for (const [hash, text] of readManifest(file)) this.documents.set(hash, text);
  }

  get size(): number { return this.documents.size; }

  /** The text of the document with this hash, if the list has it. */
  get(hash: string): string | undefined {
    return this.documents.get(normalizeHash(hash));
  }

  /** Whether this caller may send a document's text (rather than a hash of the list). */
  mayRunText(actor: Pick<Actor, 'role'> | undefined, query: string, maxTokens: number): boolean {
    return !this.only || actor?.role === 'admin' || isIntrospectionOnly(query, maxTokens);
  }

  /**
   * The document text a graphql-ws `subscribe` payload asks for, under the same rules and with the same
   * errors as Yoga's plugin over HTTP.
   */
  documentFor(payload: { query?: unknown; extensions?: unknown }, actor: Pick<Actor, 'role'>, maxTokens: number): string {
    if (typeof payload.query === 'string' && payload.query !== '') {
      if (!this.mayRunText(actor, payload.query, maxTokens)) throw onlyTrustedDocuments();
      return payload.query;
    }
    const hash = persistedHash(payload.extensions);
    if (hash === null) throw hashRequired();
    const text = this.get(hash);
    if (text === undefined) throw notInList();
    return text;
  }
}

/** Apollo's `extensions.persistedQuery.sha256Hash` (version 1), which Yoga's plugin reads by default. */
function persistedHash(extensions: unknown): string | null {
  const pq = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null | undefined)?.persistedQuery;
  return pq && pq.version === 1 && typeof pq.sha256Hash === 'string' ? pq.sha256Hash : null;
}

function notInList(): GraphQLError {
  return new GraphQLError('The gateway does not know this document (PERSISTED_QUERY_NOT_IN_LIST): send its text, or a document of its list by hash (client/persisted-documents.json, TRUSTED_DOCUMENTS).', {
    extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' },
  });
}

function hashRequired(): GraphQLError {
  return new GraphQLError('No document: send `query`, or a document\'s hash as extensions.persistedQuery = { version: 1, sha256Hash }.', {
    extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED' },
  });
}

function onlyTrustedDocuments(): GraphQLError {
  return new GraphQLError('This gateway runs only trusted documents (TRUSTED_DOCUMENTS_ONLY=1): send a document of its list by hash, as @agent-history/client does for its own; only an admin token may send any document.', {
    extensions: { code: 'PERSISTED_QUERY_ONLY', http: { status: 403 } },
  });
}

const INTROSPECTION_FIELDS = new Set(['__schema', '__type', '__typename']);

/** Whether every operation of the document reads only the schema (`__schema`, `__type`, `__typename` at its root). */
export function isIntrospectionOnly(query: string, maxTokens: number): boolean {
  let doc: DocumentNode;
  try { doc = parse(query, { maxTokens, noLocation: true }); } catch { return false; }
  const fragments = new Map(doc.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
  const onlySchema = (sel: SelectionSetNode, seen: Set<string>): boolean => sel.selections.every((s) => {
    if (s.kind === Kind.FIELD) return INTROSPECTION_FIELDS.has(s.name.value);
    if (s.kind === Kind.INLINE_FRAGMENT) return onlySchema(s.selectionSet, seen);
    const f = fragments.get(s.name.value);
    if (!f || seen.has(s.name.value)) return !!f;
    return onlySchema(f, new Set([...seen, s.name.value]));
  });
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return ops.length > 0 && ops.every((op) => op.operation === 'query' && onlySchema(op.selectionSet, new Set()));
}

/**
 * The HTTP side: Yoga's persisted-operations plugin over `store`; `actorOf` gives the request's
 * authenticated caller (the gateway's auth hook runs first). The plugin sees only the requests that name a
 * document by hash, and, with `only`, those that send a text: a request with neither (no `query`, or one
 * that is not a string) gets Yoga's own answer (400), as the GraphQL-over-HTTP audit expects.
 */
export function useTrustedDocuments(store: TrustedDocuments, actorOf: (request: Request) => Actor | undefined, maxTokens: number): Plugin {
  /** Requests whose text the caller may send (decided where the parameters are at hand). */
  const textAllowed = new WeakSet<Request>();
  const plugin = usePersistedOperations({
    getPersistedOperation: (hash) => store.get(hash) ?? null,
    allowArbitraryOperations: (request) => textAllowed.has(request),
    customErrors: { notFound: notInList, keyNotFound: hashRequired, persistedQueryOnly: onlyTrustedDocuments },
  }) as Plugin;
  const { onParams } = plugin;
  return {
    ...plugin,
    onParams(payload) {
      const { params, request } = payload;
      const text = typeof params.query === 'string' && params.query !== '';
      if (text ? !store.only : persistedHash(params.extensions) === null) return;
      if (text && store.mayRunText(actorOf(request), params.query!, maxTokens)) textAllowed.add(request);
      return onParams!(payload);
    },
  };
}
