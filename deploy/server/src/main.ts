#!/usr/bin/env node
// `herald <command>`: the image's entrypoint. One command per service, plus `migrate` for the chart's
// migration Job. The service's own main module does everything else (config, listen, SIGTERM).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { exitOnStartupError } from "@herald/platform";
import { migrateAll } from "./migrate.js";
import { packageDirOf, type ServiceName, serviceNames } from "./services.js";

const command = process.argv[2] ?? "";
const usage = `usage: herald <${[...serviceNames, "migrate"].join("|")}>`;

if (command === "migrate") {
  try {
    await migrateAll();
  } catch (error) {
    exitOnStartupError("migrate", error);
  }
} else if ((serviceNames as readonly string[]).includes(command)) {
  await import(pathToFileURL(join(packageDirOf(command as ServiceName), "dist", "main.js")).href);
} else {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}
