#!/usr/bin/env node
// `npx gateway …`: the checkout's bin/gateway.mjs. It is linked into node_modules/.bin by this workspace:
// with a `bin` in the root package.json instead, `npx` would install the project into its own cache and
// read the whole dependency tree on every call (4-7 s; still so with npm 11: libnpmexec looks for a local
// package's own bin before node_modules/.bin); through node_modules/.bin it starts at once. The installable
// package (`npm run package`, bin/package.mjs) gets its `bin` in a package.json of its own.
import '../gateway.mjs';
