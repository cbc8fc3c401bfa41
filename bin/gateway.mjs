#!/usr/bin/env node
// Runs the TypeScript CLI in this very process: tsx's loader is registered in-process (no spawned
// tsx/node child), so the PID a supervisor starts is the one that serves and gets its signals.
import { register } from 'tsx/esm/api';
register();
await import('../cli/main.ts');
