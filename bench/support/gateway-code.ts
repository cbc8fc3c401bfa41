/**
 * Which code of the gateway a benchmark runs. By default the code `npm start` runs: dist/, compiled
 * by tsc (`ensureBuilt` builds it first when it is older than the sources, as `npm start` does).
 * BENCH_GATEWAY_CODE=tsx runs the sources through tsx instead, whose esbuild transform (keepNames)
 * names every function it creates at run time: more work per closure than the deployed code does.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const gatewaySources = process.env.BENCH_GATEWAY_CODE === 'tsx';

/** The URL of one of the gateway's modules (`server/app.js`), compiled or source as chosen above. */
export function gatewayModule(path: string): string {
  return new URL(`../../${gatewaySources ? '' : 'dist/'}${path}`, import.meta.url).href;
}

/** Builds dist/ when it is stale (nothing to do otherwise, or when the sources are run). */
export function ensureBuilt(): void {
  if (gatewaySources) return;
  const built = spawnSync(process.execPath, [fileURLToPath(new URL('../../bin/build.mjs', import.meta.url)), '--if-stale'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed: the benchmark runs the gateway from dist/');
}
