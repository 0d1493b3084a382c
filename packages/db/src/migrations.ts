import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { poolConfigOf } from "./database-url.js";

export interface MigrationResult {
  applied: string[];
}

/**
 * Applies the SQL migrations that `prisma migrate diff` wrote under
 * prisma/migrations, in name order, each in its own transaction, recording them in
 * the schema's `_prisma_migrations` table in Prisma's own format (so
 * `prisma migrate status` agrees). Written here rather than calling `prisma migrate
 * deploy` because that needs the Prisma CLI and its schema engine in every image,
 * which cannot be downloaded on our build machines; the SQL is still Prisma's.
 * A session-level advisory lock keeps replicas starting together from racing.
 */
export async function applyMigrations(options: { databaseUrl: string; schema: string; migrationsDir: string }): Promise<MigrationResult> {
  const client = new pg.Client(poolConfigOf(options.databaseUrl, options.schema));
  await client.connect();
  const schema = client.escapeIdentifier(options.schema);
  try {
    await client.query("SELECT pg_advisory_lock(hashtext($1))", [`herald.migrate.${options.schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${schema}."_prisma_migrations" (
        id VARCHAR(36) PRIMARY KEY NOT NULL,
        checksum VARCHAR(64) NOT NULL,
        finished_at TIMESTAMPTZ,
        migration_name VARCHAR(255) NOT NULL,
        logs TEXT,
        rolled_back_at TIMESTAMPTZ,
        started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        applied_steps_count INTEGER NOT NULL DEFAULT 0
      )`);
    const done = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM ${schema}."_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const appliedChecksums = new Map(done.rows.map((row) => [row.migration_name, row.checksum]));
    const names = (await readdir(options.migrationsDir, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    const applied: string[] = [];
    for (const name of names) {
      const sql = await readFile(join(options.migrationsDir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      const previous = appliedChecksums.get(name);
      if (previous !== undefined) {
        if (previous !== checksum) {
          throw new Error(`migration ${name} in schema ${options.schema} was changed after it was applied`);
        }
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO ${schema}."_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES ($1, $2, now(), $3, 1)`,
          [randomUUID(), checksum, name],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${name} failed in schema ${options.schema}: ${(error as Error).message}`, { cause: error });
      }
      applied.push(name);
    }
    return { applied };
  } finally {
    await client.end();
  }
}
