import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Served by the service at /dashboard (server/src/http/dashboard.ts): hashed assets under
// /dashboard/assets/, cached for a year; index.html revalidated on every load.
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  plugins: [react()],
  build: { outDir: 'dist', assetsDir: 'assets', emptyOutDir: true, sourcemap: false, target: 'es2022', chunkSizeWarningLimit: 600 },
  server: { proxy: { '/api': 'http://localhost:3000', '/auth': 'http://localhost:3000' } },
});
