import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The image proof alone (deploy/images/prove.sh): it runs every service from the container image and
// needs none of the checkout's services, so there is no global set-up.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    include: ["tests/images.prove.ts"],
    pool: "forks",
    maxWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 600_000,
    teardownTimeout: 120_000,
  },
});
