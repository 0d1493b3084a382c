#!/usr/bin/env node
// Writes the next migration of the service in the current folder:
//   pnpm --filter @herald/<service> migration:new <name>
// It diffs prisma/schema.prisma against the schema snapshot kept beside the last
// migration (or against nothing, for the first), so no database state is involved.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const name = (process.argv[2] ?? "").replace(/[^a-z0-9_]/gi, "_").toLowerCase();
if (!name) {
  console.error("usage: migration:new <name>");
  process.exit(2);
}
const migrationsDir = join(process.cwd(), "prisma", "migrations");
const previous = existsSync(migrationsDir)
  ? readdirSync(migrationsDir)
      .filter((entry) => entry.match(/^\d{14}_/))
      .sort()
      .at(-1)
  : undefined;
const from = previous ? ["--from-schema-datamodel", join(migrationsDir, previous, "schema.prisma")] : ["--from-empty"];
const prismaOffline = fileURLToPath(new URL("./prisma-offline.mjs", import.meta.url));
const result = spawnSync(
  process.execPath,
  [prismaOffline, "migrate", "diff", ...from, "--to-schema-datamodel", "prisma/schema.prisma", "--script"],
  { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
);
if (result.status !== 0) process.exit(result.status ?? 1);
// Tables are created unqualified, in the schema the service is given at run time.
const sql = result.stdout.replace(/-- CreateSchema\nCREATE SCHEMA IF NOT EXISTS "public";\n\n/, "");
if (sql.includes("This is an empty migration")) {
  console.log("schema.prisma matches the last migration: nothing to write");
  process.exit(0);
}
const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
const dir = join(migrationsDir, `${stamp}_${name}`);
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, "migration.sql"), sql);
copyFileSync(join("prisma", "schema.prisma"), join(dir, "schema.prisma"));
console.log(`wrote ${dir}`);
