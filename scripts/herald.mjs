#!/usr/bin/env node
// Entry point of `npm start|test|test:unit|lint|typecheck|bench`. Plain JavaScript with no
// dependencies, so it runs on whatever Node a fresh machine has (20+): it installs
// pnpm and the workspace, then hands over to Node 24 from node_modules.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const command = process.argv[2] ?? "start";
const extraArgs = process.argv.slice(3);

function run(file, args, options = {}) {
  const result = spawnSync(file, args, { cwd: root, stdio: "inherit", ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function must(file, args, options) {
  const status = run(file, args, options);
  if (status !== 0) process.exit(status);
}

function ensurePnpm() {
  const wanted = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).packageManager.split("@")[1];
  const toolsDir = join(root, ".herald", "tools");
  const pnpm = join(toolsDir, "node_modules", ".bin", "pnpm");
  const installed = existsSync(pnpm) ? spawnSync(pnpm, ["--version"], { encoding: "utf8" }).stdout.trim() : "";
  if (installed !== wanted) {
    console.log(`herald: installing pnpm ${wanted} into .herald/tools`);
    must("npm", ["install", "--prefix", toolsDir, "--no-save", "--no-audit", "--no-fund", `pnpm@${wanted}`]);
  }
  return pnpm;
}

const pnpm = ensurePnpm();
const frozen = existsSync(join(root, "pnpm-lock.yaml")) ? ["--frozen-lockfile"] : [];
must(pnpm, ["install", ...frozen, "--reporter=append-only"]);

// From here on every tool runs on the Node 24 that the workspace installed.
const binDir = join(root, "node_modules", ".bin");
const env = { ...process.env, PATH: `${binDir}:${dirname(pnpm)}:${process.env.PATH}` };
const node = join(binDir, "node");

switch (command) {
  case "start":
    must("turbo", ["run", "build", "--output-logs=errors-only"], { env });
    process.exit(run(node, ["scripts/start-stack.ts", ...extraArgs], { env }));
    break;
  case "test":
    process.exit(
      run("turbo", ["run", "test", "--filter=@herald/tests", "--output-logs=new-only", "--log-prefix=none", "--", ...extraArgs], { env }),
    );
    break;
  case "test:unit":
    // No build and no infrastructure: the unit project reads the workspace's sources, and needs only the proto types.
    must("turbo", ["run", "generate", "--filter=@herald/proto", "--output-logs=errors-only"], { env });
    process.exit(run("vitest", ["run", "--config", "tests/vitest.config.ts", "--project", "unit", ...extraArgs], { env }));
    break;
  case "lint":
    must("biome", ["check", "."], { env });
    process.exit(run("buf", ["lint"], { env, cwd: join(root, "proto") }));
    break;
  case "typecheck":
    process.exit(run("turbo", ["run", "typecheck", "--output-logs=errors-only"], { env }));
    break;
  case "bench":
    must("turbo", ["run", "build", "--output-logs=errors-only"], { env });
    process.exit(run(node, ["bench/run.ts", ...extraArgs], { env }));
    break;
  default:
    console.error(`herald: unknown command "${command}" (start, test, test:unit, lint, typecheck, bench)`);
    process.exit(2);
}
