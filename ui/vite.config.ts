// Vite build and Vitest configuration for Kiln's web UI (no React plugin: esbuild handles JSX).
import { defineConfig } from "vitest/config";

// Optional: `KILN_SERVE_URL=http://127.0.0.1:PORT npm run dev` proxies /api to a running `kiln serve`.
const serveUrl = process.env.KILN_SERVE_URL;

export default defineConfig({
  base: "./",
  esbuild: { jsx: "automatic" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2021",
  },
  server: serveUrl ? { proxy: { "/api": { target: serveUrl, changeOrigin: true } } } : undefined,
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    css: false,
    // Generous for the same reason as the async timeout in src/test/setup.ts.
    testTimeout: 20_000,
  },
});
