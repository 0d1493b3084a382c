#!/usr/bin/env node
// Runs the Prisma CLI of the current service without network access. Our services
// use the query compiler (engineType "client") and the JavaScript schema engine, so no
// native engine is needed; the CLI still insists on a query-engine file being present
// and would try to download one, which pointing it at any existing file prevents.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const env = { ...process.env, PRISMA_QUERY_ENGINE_LIBRARY: fileURLToPath(import.meta.url), PRISMA_HIDE_UPDATE_MESSAGE: "1" };
const result = spawnSync("prisma", process.argv.slice(2), { stdio: "inherit", env });
process.exit(result.status ?? 1);
