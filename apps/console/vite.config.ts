import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

// The API serves the build at /console/ (apps/api/src/plugins/console.ts); `scripts/build-console.mjs` runs this build.
export default defineConfig({
  base: '/console/',
  root: import.meta.dirname,
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 600 },
  logLevel: 'warn',
});
