/**
 * Another commit's gateway, built to run beside this one in a benchmark (bench/reads.ts BASELINE_REF).
 *
 * The commit's files (`git archive`) go to a directory of their own under the system's temporary
 * directory, named by the commit, with this checkout's node_modules linked file by file (hard links:
 * the same versions, nothing copied) and compiled there with its own tsconfig.build.json, as
 * `npm run build` compiles (the gateway only: no client package, no review page). A package that the
 * commit patched and this checkout no longer does (its patches/ has a file that ours lacks) is copied
 * for real there and patched with that commit's patch, so the baseline runs the dependencies it ran
 * with. The directory is kept and reused by later runs (`BASELINE_REBUILD=1` builds it again).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);

export interface Baseline {
  /** The commit built (its abbreviated hash) and the ref it was named by. */
  commit: string;
  ref: string;
  /** The URL of one of the baseline's compiled modules (`server/app.js`). */
  module(file: string): string;
}

function step(cmd: string, args: string[], cwd: string) {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`baseline build: ${cmd} ${args.join(' ')} failed in ${cwd} (status ${r.status})`);
}

/** The package directory a patch-package file name names (`@scope+name+1.2.3.patch` -> `@scope/name`). */
function patchedPackage(file: string): string {
  const parts = file.replace(/\.patch$/, '').split('+');
  parts.pop(); // the version
  if (parts.some((p) => p === '')) throw new Error(`baseline build: nested patch ${file} is not supported`);
  return parts.join('/');
}

export function buildBaseline(ref: string): Baseline {
  const commit = execFileSync('git', ['rev-parse', '--short=12', `${ref}^{commit}`], { cwd: root, encoding: 'utf8' }).trim();
  const dir = path.join(tmpdir(), `gateway-baseline-${commit}`);
  const stamp = path.join(dir, 'dist', '.baseline-built');
  if (process.env.BASELINE_REBUILD === '1') rmSync(dir, { recursive: true, force: true });
  if (!existsSync(stamp)) {
    console.log(`building the baseline gateway (${ref} = ${commit}) in ${dir} ...`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const archive = execFileSync('git', ['archive', '--format=tar', commit], { cwd: root, maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
    // Hard links: the same files as this checkout's node_modules, so nothing may write to them (below).
    step('cp', ['-al', path.join(root, 'node_modules'), path.join(dir, 'node_modules')], root);
    const ours = new Set(existsSync(path.join(root, 'patches')) ? readdirSync(path.join(root, 'patches')) : []);
    const theirs = existsSync(path.join(dir, 'patches')) ? readdirSync(path.join(dir, 'patches')).filter((f) => f.endsWith('.patch')) : [];
    const only = theirs.filter((f) => !ours.has(f));
    if (only.length) {
      const patchDir = path.join(dir, '.baseline-patches');
      mkdirSync(patchDir);
      for (const f of only) {
        const pkg = patchedPackage(f);
        const target = path.join(dir, 'node_modules', pkg);
        // A real copy, so patching it leaves this checkout's files alone.
        rmSync(target, { recursive: true, force: true });
        cpSync(path.join(root, 'node_modules', pkg), target, { recursive: true });
        cpSync(path.join(dir, 'patches', f), path.join(patchDir, f));
      }
      step(process.execPath, [require.resolve('patch-package/index.js'), '--patch-dir', '.baseline-patches'], dir);
    }
    step(process.execPath, [path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], dir);
    cpSync(path.join(dir, 'db', 'migrations'), path.join(dir, 'dist', 'db', 'migrations'), { recursive: true });
    writeFileSync(stamp, `${commit} ${only.join(' ')}\n`);
  }
  return { commit, ref, module: (file) => pathToFileURL(path.join(dir, 'dist', file)).href };
}
