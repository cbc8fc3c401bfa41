import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { killProcessTree } from '../bridge/claude-code/processes.js';
import { processesWith } from './support/processes.js';
import { until } from './support/until.js';

/**
 * What the Claude Code host's seal kills (bridge/claude-code/processes.ts killProcessTree): Claude Code and
 * every process it started, including those in process groups of their own (GNU `timeout` puts itself in
 * one) and those started while the kill is under way; the seal goes on only once they are all gone.
 */

describe('killing a process tree', () => {
  it('kills a shell that keeps starting processes in groups of their own, and every one it started, before it resolves', async () => {
    // A duration no other process of the machine has: the mark of this test's processes.
    for (let round = 0; round < 5; round++) {
      const marker = `timeout 90.${process.pid}${round}${Math.floor(Math.random() * 1e6)}`;
      // As Claude Code (the root) with a shell of its (the subshell) that starts a process every 5 ms (300 in
      // all), each in a process group of its own, as a background shell's would be.
      const shell = spawn('bash', ['-c', `(for i in $(seq 1 300); do ${marker} tail -f /dev/null & sleep 0.005; done; wait) & wait`],
        { detached: true, stdio: 'ignore' });
      const exited = new Promise((r) => shell.once('exit', r));
      await until('the tree started', () => processesWith(marker).length >= 10, 10_000);
      await killProcessTree(shell.pid!);
      expect(processesWith(marker)).toEqual([]);
      await exited;
      // Nothing left that could start another one later.
      expect(processesWith(marker)).toEqual([]);
    }
  });
});
