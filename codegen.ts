import type { CodegenConfig } from '@graphql-codegen/cli';
import { printGatewaySchema } from './schema/index.js';

/**
 * `npm run codegen`: prints the Pothos schema to the committed schema.graphql, and generates typed
 * documents (client/generated.ts) for the operations in client/operations, used by the typed client,
 * the reference host and the tests. test/schema.test.ts fails when schema.graphql is stale.
 */
const config: CodegenConfig = {
  schema: printGatewaySchema(),
  documents: ['client/operations/**/*.graphql'],
  generates: {
    'schema.graphql': { plugins: ['schema-ast'], config: { sort: true } },
    'client/generated.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        scalars: { JSON: 'unknown', DateTime: 'string', ID: 'string' },
        enumsAsTypes: true,
        avoidOptionals: { field: true, inputValue: false, object: true },
        useTypeImports: true,
      },
    },
  },
};
export default config;
