#!/usr/bin/env node
// herald-infra up | down [--root <dir>]
//   up:   ensure PostgreSQL, Redis and Kafka (see ensureInfrastructure), print their
//         settings as KEY=value lines, and exit; local servers keep running.
//   down: stop the local servers recorded in pid files under <root>/.herald.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ensureInfrastructure, stopLocalInfrastructure } from "./index.js";

function workspaceRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "pnpm-workspace.yaml"))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

let command: string | undefined;
let root = workspaceRoot(process.cwd());
for (let args = process.argv.slice(2); args.length > 0; ) {
  const arg = args.shift();
  if (arg === "--root") root = resolve(args.shift() ?? ".");
  else command ??= arg;
}
const log = (message: string) => console.error(message);

try {
  if (command === "up") {
    const infrastructure = await ensureInfrastructure({ root, log });
    console.log(`DATABASE_URL=${infrastructure.databaseUrl}`);
    console.log(`REDIS_URL=${infrastructure.redisUrl}`);
    console.log(`KAFKA_BROKERS=${infrastructure.kafkaBrokers.join(",")}`);
  } else if (command === "down") {
    const stopped = await stopLocalInfrastructure({ root, log });
    log(stopped.length > 0 ? `stopped ${stopped.join(", ")}` : `nothing was running under ${join(root, ".herald")}`);
  } else {
    log("usage: herald-infra up|down [--root <dir>]");
    process.exitCode = 2;
  }
} catch (err) {
  log(`herald-infra ${command}: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
