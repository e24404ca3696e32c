// The dashboard's build: one bundle for the gateway to serve under /dashboard/ (services/api-gateway/src/http/
// dashboard-app.ts). Nothing is loaded from anywhere else: no CDN, no web fonts.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Inline nothing as data: URLs, so the page's Content-Security-Policy can stay 'self' only.
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: {
    // `npm run dev -w web/dashboard` against a running `npm start`: the API is on the gateway's port.
    proxy: { '^/(?!dashboard/)': { target: process.env.POSTLINE_API_URL ?? 'http://localhost:3000' } },
  },
});
