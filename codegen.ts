import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { isInterfaceType, isObjectType, print, type DocumentNode } from 'graphql';
import type { CodegenConfig } from '@graphql-codegen/cli';
import { printGatewaySchema, schema } from './schema/index.js';

/**
 * `npm run codegen`: prints the Pothos schema to the committed schema.graphql, and generates typed
 * documents (client/generated.ts) for the operations in client/operations, used by the typed client,
 * the reference host and the tests. test/schema.test.ts fails when schema.graphql is stale.
 *
 * Two more outputs of the same run:
 * - `GatewayErrorName` (appended to client/generated.ts): the schema's error types, every type that
 *   implements `Error`, the `_tag`s a `GatewayCallError` can carry. The client tells an error member by
 *   its name ending in `Error` (client/index.ts, at run time and in its types), so the schema must
 *   keep that naming: checked here.
 * - The persisted documents (trusted documents): each operation document the typed-document-node plugin
 *   emits gets `__meta__: { hash }` (the SHA-256 of its printed text; the client sends it instead of the
 *   text), and client/persisted-documents.json maps each hash to that text, the list a gateway with
 *   TRUSTED_DOCUMENTS_ONLY=1 runs (server/trusted-documents.ts). The plugin's
 *   `unstable_onExecutableDocumentNode` hook is the one the client preset's `persistedDocuments` uses.
 */
const errorInterface = schema.getType('Error');
if (!isInterfaceType(errorInterface)) throw new Error('codegen: the schema has no interface Error');
const errorNames = schema.getImplementations(errorInterface).objects.map((t) => t.name).sort();
const misnamed = [
  ...errorNames.filter((n) => !n.endsWith('Error')),
  ...Object.values(schema.getTypeMap()).filter((t) => isObjectType(t) && t.name.endsWith('Error') && !errorNames.includes(t.name)).map((t) => t.name),
];
if (misnamed.length) throw new Error(`codegen: a type is an error exactly when its name ends in "Error"; these break it: ${misnamed.join(', ')}`);

/** The documents the client sends by hash: hash → document text. */
const persisted = new Map<string, string>();
const persistedDocumentsFile = 'client/persisted-documents.json';
function onExecutableDocumentNode(document: DocumentNode): { hash: string } {
  const text = print(document);
  const hash = createHash('sha256').update(text).digest('hex');
  persisted.set(hash, text);
  return { hash };
}

const config: CodegenConfig = {
  schema: printGatewaySchema(),
  documents: ['client/operations/**/*.graphql'],
  generates: {
    'schema.graphql': { plugins: ['schema-ast'], config: { sort: true } },
    'client/generated.ts': {
      plugins: [
        'typescript-operations',
        'typed-document-node',
        {
          add: {
            placement: 'append',
            content: [
              '',
              '/** The schema\'s error types (each implements `Error`): the `_tag` of a `GatewayCallError`. */',
              `export type GatewayErrorName =\n${errorNames.map((n) => `  | '${n}'`).join('\n')};`,
              '',
            ].join('\n'),
          },
        },
      ],
      config: {
        scalars: { JSON: 'unknown', DateTime: 'string', ID: 'string' },
        enumsAsTypes: true,
        avoidOptionals: { field: true, inputValue: false, object: true },
        useTypeImports: true,
        unstable_onExecutableDocumentNode: onExecutableDocumentNode,
      },
    },
  },
  hooks: {
    // After the documents were generated (and hashed); sorted by hash, so a run that changes nothing
    // writes the same file.
    beforeDone: () => {
      if (!persisted.size) return;
      const sorted = Object.fromEntries([...persisted].sort(([a], [b]) => (a < b ? -1 : 1)));
      writeFileSync(persistedDocumentsFile, JSON.stringify(sorted, null, 2) + '\n');
    },
  },
};
export default config;
