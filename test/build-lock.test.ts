import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_DIR } from '../db/index.js';

/**
 * One build at a time per checkout (bin/build-state.mjs): two `npm start`s of a fresh clone, or two
 * test files starting the gateway at once, both found dist/ stale and rebuilt it over each other (CI
 * failed with EEXIST in the middle of one build). Builders run one after another, and a lock left by a
 * build that was killed does not block the next start.
 */
const state = pathToFileURL(path.join(PROJECT_DIR, 'bin', 'build-state.mjs')).href;

function holder(lockFile: string, log: string, name: string) {
  const code = `
    const { appendFileSync } = await import('node:fs');
    const { withBuildLock } = await import(${JSON.stringify(state)});
    withBuildLock(() => {
      appendFileSync(${JSON.stringify(log)}, 'start ${name}\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60); // a build's work
      appendFileSync(${JSON.stringify(log)}, 'end ${name}\\n');
    }, { lockFile: ${JSON.stringify(lockFile)} });`;
  const p = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  p.stderr.on('data', (d) => { stderr += d; });
  return new Promise<{ code: number | null; stderr: string }>((resolve) => p.on('exit', (code) => resolve({ code, stderr })));
}

describe('the build lock', () => {
  it('runs concurrent builders one after another, each once', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'build-lock-'));
    try {
      const lockFile = path.join(dir, '.build.lock');
      const log = path.join(dir, 'log');
      writeFileSync(log, '');
      const names = ['a', 'b', 'c', 'd', 'e', 'f'];
      const results = await Promise.all(names.map((n) => holder(lockFile, log, n)));
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      const lines = readFileSync(log, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(names.length * 2);
      for (let i = 0; i < lines.length; i += 2) {
        const [s, n] = lines[i]!.split(' ');
        expect(s).toBe('start');
        expect(lines[i + 1]).toBe(`end ${n}`); // nobody started inside another's build
      }
      expect(new Set(lines.filter((l) => l.startsWith('start')))).toHaveProperty('size', names.length);
      expect(existsSync(lockFile)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes over a lock whose builder was killed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'build-lock-'));
    try {
      const lockFile = path.join(dir, '.build.lock');
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
      writeFileSync(lockFile, gone.stdout); // its PID, no longer running
      const log = path.join(dir, 'log');
      writeFileSync(log, '');
      const r = await holder(lockFile, log, 'next');
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(log, 'utf8')).toBe('start next\nend next\n');
      expect(existsSync(lockFile)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
