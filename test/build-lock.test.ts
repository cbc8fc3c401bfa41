import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_DIR } from '../db/index.js';
import { until } from './support/until.js';

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

/**
 * The patched @parcel/watcher is compiled on first use (bin/build-watcher.mjs), in the background: every process
 * that wants the watcher before the build is in place may start it, and exactly one compiles; the build lands
 * whole (renamed into place), and one that failed is not started again on its own. Run in a package root of its
 * own (the two scripts of bin/, a patch, @parcel/watcher's sources) with a node-gyp that records each run, named
 * as npm names it to scripts (npm_config_node_gyp).
 */
describe('the patched @parcel/watcher, compiled on first use', () => {
  function packageRoot() {
    const root = mkdtempSync(path.join(tmpdir(), 'watcher-build-'));
    for (const f of ['build-watcher.mjs', 'build-state.mjs']) cpSync(path.join(PROJECT_DIR, 'bin', f), path.join(root, 'bin', f));
    mkdirSync(path.join(root, 'patches'));
    writeFileSync(path.join(root, 'patches', '@parcel+watcher+2.6.0.patch'), 'the fixes\n');
    const watcher = path.join(root, 'node_modules', '@parcel', 'watcher');
    mkdirSync(path.join(watcher, 'src'), { recursive: true });
    for (const f of ['binding.gyp', 'package.json', 'src/binding.cc']) writeFileSync(path.join(watcher, f), f);
    const runs = path.join(root, 'gyp-runs');
    const gyp = path.join(root, 'node-gyp.cjs');
    // A compile that takes a moment, in the scratch copy it is run in (cwd), then fails or writes its output.
    writeFileSync(gyp, `
      const fs = require('node:fs');
      fs.appendFileSync(${JSON.stringify(runs)}, process.cwd() + '\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      if (!fs.existsSync('src/binding.cc')) process.exit(3);
      if (fs.existsSync(${JSON.stringify(path.join(root, 'fail'))})) { console.error('g++: command not found'); process.exit(1); }
      fs.mkdirSync('build/Release', { recursive: true });
      fs.writeFileSync('build/Release/watcher.node', 'compiled');`);
    const env = { ...process.env, npm_config_node_gyp: gyp };
    const module = pathToFileURL(path.join(root, 'bin', 'build-watcher.mjs')).href;
    /** A process that wants the watcher: what startPatchedWatcherBuild answers it (the process then exits). */
    const firstUse = () => new Promise<{ ready: boolean; why: string }>((resolve, reject) => {
      const p = spawn(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(module)}); console.log(JSON.stringify(m.startPatchedWatcherBuild()));`],
        { env, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.on('data', (d) => { out += d; });
      p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}`))));
    });
    /** `node bin/build-watcher.mjs`: a build now, waiting for one under way. */
    const buildNow = () => new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [path.join(root, 'bin', 'build-watcher.mjs')], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      p.stderr.on('data', (d) => { stderr += d; });
      p.on('exit', (code) => resolve({ code, stderr }));
    });
    const build = path.join(watcher, 'build');
    return {
      root, firstUse, buildNow, build,
      runs: () => (existsSync(runs) ? readFileSync(runs, 'utf8').trim().split('\n') : []),
      built: () => (existsSync(path.join(build, 'Release', 'watcher.node')) ? readFileSync(path.join(build, 'Release', 'watcher.node'), 'utf8') : null),
      log: () => readFileSync(path.join(build, 'patched-build.log'), 'utf8'),
    };
  }

  it('concurrent first uses start one build in the background, which lands whole; later uses find it in place', async () => {
    const r = packageRoot();
    try {
      const uses = await Promise.all([1, 2, 3, 4, 5, 6].map(() => r.firstUse()));
      for (const u of uses) {
        expect(u.ready).toBe(false);
        expect(u.why).toContain(`the patched @parcel/watcher is being built in the background (log: ${path.join(r.build, 'patched-build.log')})`);
      }
      // Built by one of the builders the first uses started (they exited long before), in a scratch copy.
      const waited = await r.buildNow(); // waits for the build under way, and finds it done
      expect(waited.code, waited.stderr).toBe(0);
      expect(r.built()).toBe('compiled');
      expect(r.runs()).toHaveLength(1);
      expect(r.runs()[0]).toMatch(new RegExp(`^${r.build}/scratch-`));
      expect(readdirSync(r.build).filter((e) => e.startsWith('scratch-') || e.includes('.tmp-'))).toEqual([]);
      expect(r.log()).toMatch(/compiles @parcel\/watcher from its patched source \(@parcel\+watcher\+2\.6\.0\.patch\)\n[^]*built from its patched source in \d+ s\n$/);
      expect(await r.firstUse()).toEqual({ ready: true, why: null });
      expect(r.runs()).toHaveLength(1);
      // A new patch is a new build.
      writeFileSync(path.join(r.root, 'patches', '@parcel+watcher+2.6.0.patch'), 'the fixes, and one more\n');
      expect((await r.firstUse()).ready).toBe(false);
      await until('the new patch to be built', async () => (await r.firstUse()).ready);
      expect(r.runs()).toHaveLength(2);
    } finally {
      rmSync(r.root, { recursive: true, force: true });
    }
  });

  it('a build that failed is not started again on its own; running the script tries again', async () => {
    const r = packageRoot();
    try {
      writeFileSync(path.join(r.root, 'fail'), '');
      expect((await r.firstUse()).ready).toBe(false);
      const failed = await until('the background build to fail', async () => {
        const u = await r.firstUse();
        return /could not be built/.test(u.why) && u;
      });
      expect(failed.why).toBe(`the patched @parcel/watcher could not be built (log: ${path.join(r.build, 'patched-build.log')}; ` +
        `\`node ${path.join(r.root, 'bin', 'build-watcher.mjs')}\` tries again); captures walk the worktree`);
      expect(r.log()).toContain('g++: command not found');
      expect(r.runs()).toHaveLength(1);
      expect(r.built()).toBe(null);
      // Asked again, it answers the same without starting a build (it would say "being built").
      expect((await r.firstUse()).why).toBe(failed.why);
      const again = await r.buildNow();
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^build-watcher: could not build @parcel\/watcher from its patched source \(node-gyp exited with 1: .*g\+\+: command not found\)/);
      expect(r.runs()).toHaveLength(2);
      rmSync(path.join(r.root, 'fail'));
      const fixed = await r.buildNow();
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(r.built()).toBe('compiled');
      expect(await r.firstUse()).toEqual({ ready: true, why: null });
    } finally {
      rmSync(r.root, { recursive: true, force: true });
    }
  });
});
