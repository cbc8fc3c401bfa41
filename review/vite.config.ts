import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The review page (`npm run build:review`): built into review/dist and served by the gateway at
 * /review (server/review.ts). Everything it loads is bundled from npm packages: no CDN at run time.
 */
export default defineConfig({
  root,
  base: '/review/',
  logLevel: 'warn',
  build: {
    outDir: process.env.REVIEW_OUT_DIR ?? 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    chunkSizeWarningLimit: 1500,
  },
});
