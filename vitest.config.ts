import { createRequire } from 'node:module';
import { configDefaults, defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/**
 * Files whose subject is not the database server: the agents' real binaries (OpenCode, Claude Code) and the
 * hosts around them, processes, packaging and installing, the command line, browsers. They use a database
 * like every test, but nothing of theirs depends on which PostgreSQL serves it. `npm test` runs them; with
 * TEST_DATABASE_FILES_ONLY=1 they are left out (CI's second leg, against the machine's PostgreSQL, after the
 * first ran everything against the embedded one).
 */
const DATABASE_INDEPENDENT = [
  'bridge-opencode', 'bridge-opencode-cli', 'bridge-opencode-crash', 'bridge-opencode-mapping', 'bridge-opencode-mirror', 'bridge-opencode-repos',
  'opencode-proxy', 'opencode-proxy-spellings', 'opencode-plugins', 'opencode-snapshot-reader', 'opencode-local-channels',
  'bridge-gateway-retries', 'claude-code-host', 'codex-host', 'gemini-host', 'review-loop-opencode', 'review-loop-claude-code', 'review-loop-codex', 'process-tree', 'capture-watch', 'capture-errors', 'build-lock',
  'install', 'client-pack', 'client-package', 'client-types', 'client-examples', 'client-connection',
  'data-dir', 'credentials', 'cli-first-hour', 'cli-help', 'production',
  'graphiql-browser', 'graphiql-headers', 'review', 'review-truth', 'review-turns', 'review-comments-page', 'review-patch', 'review-documents', 'demo',
  'docs-links',
].map((f) => `test/${f}.test.ts`);

export default defineConfig({
  resolve: {
    // One graphql module instance: Node loads graphql's CommonJS build for the dependencies
    // (graphql-yoga, graphql-ws), so our sources must get the same one, not the .mjs build Vite
    // would pick (two GraphQLError classes would make every expected error look unexpected).
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(process.env.TEST_DATABASE_FILES_ONLY === '1' ? DATABASE_INDEPENDENT : [])],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // A worker runs its files one after another in one module graph (vitest's `isolate: false`): the sources
    // (graphql, Pothos' schema build, postgres.js, the OpenTelemetry SDK) are imported once per worker instead
    // of once per file, which was half of the suite's CPU time. Each file still gets its own database and
    // servers, and a file that changes process-wide state (an environment variable, fake timers) puts it back
    // in a `finally`.
    isolate: false,
    // A test file's database on a Citus cluster is made and distributed on every node: slower to set up.
    testTimeout: process.env.CITUS_URL ? 120_000 : 60_000,
    hookTimeout: process.env.CITUS_URL ? 180_000 : 60_000,
    // Files run two at a time against a server we share (DATABASE_URL, CITUS_URL: about 40 connections of its
    // 100), three against the run's own embedded PostgreSQL (300 connections): the files of the agents' binaries
    // and browsers wait on those processes, and a third file keeps the two cores busy meanwhile (the embedded
    // leg took 401 s instead of 508 s; a fourth file gained nothing, 419 s).
    maxWorkers: process.env.DATABASE_URL || process.env.CITUS_URL ? 2 : 3,
    // `expect.poll` waits for what another party makes true (a log line, a browser's render, a row): vitest's
    // default bound of 1 s is too short on a CI machine whose two cores are busy, and a poll returns as soon
    // as its condition holds, so the longer bound costs a passing test nothing.
    expect: { poll: { timeout: 10_000 } },
    reporters: ['default'],
  },
});
