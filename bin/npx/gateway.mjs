#!/usr/bin/env node
// `npx gateway …`: the checkout's bin/gateway.mjs. It is linked into node_modules/.bin by this workspace:
// with a `bin` in the root package.json instead, `npx` would install the project into its own cache and
// read the whole dependency tree on every call (4-7 s); through node_modules/.bin it starts at once.
import '../gateway.mjs';
