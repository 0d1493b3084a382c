import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Served by the gateway under /app/ (services/gateway/src/routes/dashboard.ts), same origin as the API.
export default defineConfig({
  base: "/app/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 300 },
});
