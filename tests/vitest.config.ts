import { globSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Unit tests: pure code that needs no database, broker, Redis or running service (docs/development.md, Tests).
 * A service's `src/domain/` holds business rules with no I/O, and these packages do no I/O.
 */
const unitTests = [
  "services/*/src/domain/**/*.test.ts",
  "packages/conditions/src/**/*.test.ts",
  "packages/errors/src/**/*.test.ts",
  "packages/rendering/src/**/*.test.ts",
];
const excluded = ["**/node_modules/**", "**/dist/**"];
const unitTestFiles = globSync(unitTests, { cwd: root, exclude: excluded });

// One run for the whole repository (npm test) with two projects, and every file in exactly one of them:
// "unit" starts nothing (npm run test:unit); "stack" starts infrastructure and the service stack once
// (global-setup.ts) and every other test file, wherever it sits, shares them.
export default defineConfig({
  test: {
    root,
    reporters: ["default", fileURLToPath(new URL("./support/summary-reporter.ts", import.meta.url))],
    pool: "forks",
    maxWorkers: 2,
    teardownTimeout: 60_000,
    projects: [
      {
        // Workspace packages from their sources, so that unit tests need no build, only the generated proto types.
        resolve: {
          alias: [
            { find: /^@herald\/proto\/(.*)$/, replacement: `${root}packages/proto/src/gen/$1.ts` },
            { find: /^@herald\/([a-z-]+)$/, replacement: `${root}packages/$1/src/index.ts` },
          ],
        },
        test: {
          name: "unit",
          pool: "threads",
          root,
          include: unitTestFiles,
          exclude: excluded,
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "stack",
          root,
          // Each worker loads the modules once for all its files rather than once per file (docs/development.md, Tests).
          isolate: false,
          include: ["packages/*/src/**/*.test.ts", "services/*/src/**/*.test.ts", "tests/**/*.test.ts"],
          exclude: [...excluded, ...unitTestFiles],
          globalSetup: [fileURLToPath(new URL("./global-setup.ts", import.meta.url))],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
