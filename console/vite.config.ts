import preact from '@preact/preset-vite';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console is served by the gateway at /console (modules/console/console-assets.controller.ts) from
// dist/console: hashed file names under assets/ are cached for a year, index.html never.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [preact({ prerender: { enabled: false } })],
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline assets: the Content-Security-Policy allows images from 'self' and data:, but keeping every
    // asset a file keeps the policy's reasoning simple.
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    // The gateway answers /console/* itself; a modulepreload polyfill is an inline-free module either way.
    modulePreload: { polyfill: false },
  },
  server: {
    // `npm run console:dev`: the API and sign-in answered by a gateway started with `npm start`.
    proxy: { '/admin': 'http://127.0.0.1:8080', '/console/api': 'http://127.0.0.1:8080', '/v1': 'http://127.0.0.1:8080' },
  },
});
