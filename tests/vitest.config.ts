import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// One run for the whole repository: infrastructure and the service stack start once
// (global-setup.ts) and every test file, wherever it sits, shares them.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["packages/*/src/**/*.test.ts", "services/*/src/**/*.test.ts", "tests/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    globalSetup: [fileURLToPath(new URL("./global-setup.ts", import.meta.url))],
    reporters: ["default", fileURLToPath(new URL("./support/summary-reporter.ts", import.meta.url))],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
  },
});
