import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { resolve } from 'node:path';

// Served by the service (server/src/http/dashboard.ts): the dashboard at /dashboard (index.html)
// and the partner portal at /portal (portal.html), two entries of one build sharing the hashed
// assets under /dashboard/assets/, cached for a year; the pages revalidated on every load.
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 600,
    rollupOptions: {
      input: {
        dashboard: resolve(import.meta.dirname, 'index.html'),
        portal: resolve(import.meta.dirname, 'portal.html'),
      },
    },
  },
  server: {
    proxy: { '/api': 'http://localhost:3000', '/auth': 'http://localhost:3000', '/partner': 'http://localhost:3000' },
  },
});
