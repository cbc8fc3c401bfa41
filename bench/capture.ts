/**
 * Capture benchmark: a warm capture of a worktree with up to 100 changed files
 * against `git status --porcelain` on the same worktree, in the same run.
 *
 *   npx tsx bench/capture.ts                 (or: npm run bench -- capture)
 *   FILES=10000 IGNORED=50000 ROUNDS=7 npx tsx bench/capture.ts
 *
 * A worktree of FILES tracked files (20 lines each, 100 per directory) and a node_modules of IGNORED
 * files that .gitignore excludes, committed (git compares against its index). For CHANGED = 0, 1, 10,
 * 100 files, each round rewrites CHANGED random tracked files, then times, in alternating order:
 * - `git status --porcelain` (GIT_OPTIONAL_LOCKS=0: it does not refresh the index on disk, so every
 *   round it re-checks the changed files, as the capture does);
 * - the watching capturer's `scan` (host/capture.ts, `watch: true`): the sync cookie, then only the
 *   paths the watcher reported re-read; the figure includes waiting for the watcher;
 * - the walking capturer's warm `capture` (same stat cache, every path visited), for comparison.
 * Two timings of the edits: "immediate" (the capture starts right after the edits: the watcher's
 * batching delay is part of it) and "settled" (both start 0.6 s after the edits).
 * Every watching capture is checked against the walking one (same entries), and must have used the
 * watcher (mode 'watch'). Medians; ratios against git status measured in the same rounds.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { WorktreeCapturer } from '../host/capture.js';
import { buildPatchedWatcher } from '../host/worktree-watch.js';

const FILES = Number(process.env.FILES ?? 10_000);
const IGNORED = Number(process.env.IGNORED ?? 50_000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const line = (i: number, j: number) => `export const value_${i}_${j} = ${JSON.stringify(randomBytes(12).toString('hex'))};\n`;
const fileOf = (root: string, i: number) => path.join(root, 'src', `m${Math.floor(i / 100)}`, `f${i}.ts`);

function generate(root: string) {
  for (let i = 0; i < FILES; i++) {
    if (i % 100 === 0) mkdirSync(path.dirname(fileOf(root, i)), { recursive: true });
    writeFileSync(fileOf(root, i), Array.from({ length: 20 }, (_, j) => line(i, j)).join(''));
  }
  for (let i = 0; i < IGNORED; i++) {
    const dir = path.join(root, 'node_modules', `pkg${Math.floor(i / 50)}`, 'lib');
    if (i % 50 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `m${i}.js`), `module.exports = ${i};\n`);
  }
  writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n');
}

async function main() {
  // The patched watcher is compiled on first use: built (or waited for) before anything is timed.
  await buildPatchedWatcher();
  const root = mkdtempSync(path.join(tmpdir(), 'gw-bench-capture-'));
  const watching = new WorktreeCapturer({ watch: true });
  try {
    console.log(`load average at start (1/5/15 min): ${load()}`);
    let t = performance.now();
    generate(root);
    console.log(`generated ${FILES} files + ${IGNORED} ignored in node_modules: ${fmt(performance.now() - t)}`);
    const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b', GIT_OPTIONAL_LOCKS: '0' };
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, env, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 26 }).toString();
    git('init', '-q'); git('add', '-A'); git('commit', '-q', '--no-verify', '-m', 'init');
    await sleep(2_100); // cached hashes of files modified within 2 s of caching are not trusted (racy clean)

    const walking = new WorktreeCapturer();
    t = performance.now();
    walking.capture(root);
    console.log(`cold walk capture (every file read and hashed): ${fmt(performance.now() - t)}`);
    t = performance.now();
    const first = await watching.scan(root);
    console.log(`first watching capture (watcher started, then a walk): ${fmt(performance.now() - t)}, mode ${first.stats.mode}`);

    let n = 0;
    const summary: string[] = [];
    for (const timing of ['immediate', 'settled'] as const) {
      for (const changed of [0, 1, 10, 100]) {
        const gitMs: number[] = [], scanMs: number[] = [], walkMs: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          for (let k = 0; k < changed; k++) {
            const i = Math.floor(Math.random() * FILES);
            writeFileSync(fileOf(root, i), Array.from({ length: 20 }, (_, j) => line(i, j)).join(''));
          }
          if (timing === 'settled') await sleep(600);
          const runGit = () => { const t0 = performance.now(); const out = git('status', '--porcelain'); gitMs.push(performance.now() - t0); return out; };
          const runScan = async () => { const t0 = performance.now(); const c = await watching.scan(root); scanMs.push(performance.now() - t0); return c; };
          let scan;
          if (n++ % 2 === 0) { scan = await runScan(); runGit(); } else { runGit(); scan = await runScan(); }
          const t0 = performance.now();
          const walk = walking.capture(root);
          walkMs.push(performance.now() - t0);
          if (scan.stats.mode !== 'watch') throw new Error(`bench: the watching capture walked (${scan.stats.walkReason})`);
          if (!isDeepStrictEqual(scan.files, walk.files)) throw new Error('bench: the watching capture differs from a walk');
        }
        const ratio = median(scanMs) / median(gitMs);
        console.log(`${timing.padEnd(9)} ${String(changed).padStart(3)} changed: git status ${fmt(median(gitMs))}, watching capture ${fmt(median(scanMs))}, ` +
          `walking capture ${fmt(median(walkMs))}; ratio watching/git ${ratio.toFixed(2)}x, walking/git ${(median(walkMs) / median(gitMs)).toFixed(1)}x`);
        summary.push(`${timing} ${changed}: ${ratio.toFixed(2)}x`);
      }
    }
    console.log(`ratio warm watching capture / git status --porcelain (medians of ${ROUNDS}): ${summary.join(', ')}`);
    console.log(`load average at end (1/5/15 min): ${load()}`);
  } finally {
    await watching.close();
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
