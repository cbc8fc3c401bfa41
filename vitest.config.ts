import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One graphql module instance: Node loads graphql's CommonJS build for the dependencies
    // (graphql-yoga, graphql-ws), so our sources must get the same one, not the .mjs build Vite
    // would pick (two GraphQLError classes would make every expected error look unexpected).
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // A test file's database on a Citus cluster is made and distributed on every node: slower to set up.
    testTimeout: process.env.CITUS_URL ? 120_000 : 60_000,
    hookTimeout: process.env.CITUS_URL ? 180_000 : 60_000,
    // Two cores: files run two at a time, each against its own database.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
