import { applyMigrations, schemaOf } from "@herald/db";
import { createLogger, logLevel, parseConfig, serviceEnvironment } from "@herald/platform";
import { z } from "zod";
import { dataServiceNames, migrationsDirOf } from "./services.js";

const configSchema = z.object({ DATABASE_URL: serviceEnvironment.DATABASE_URL, LOG_LEVEL: logLevel });

/**
 * Applies every service's migrations to the schema that service uses (schemaOf, as the service
 * itself does at start), then returns. Run by the Helm chart's pre-install/pre-upgrade Job, so that
 * services can start with MIGRATE_ON_START=false and never race a migration.
 */
export async function migrateAll(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseConfig(configSchema, env);
  const logger = createLogger({ name: "migrate", level: config.LOG_LEVEL });
  for (const name of dataServiceNames) {
    const schema = schemaOf(config.DATABASE_URL, name);
    const { applied } = await applyMigrations({ databaseUrl: config.DATABASE_URL, schema, migrationsDir: migrationsDirOf(name) });
    logger.info({ service: name, schema, applied }, applied.length > 0 ? `applied ${applied.length} migrations` : "up to date");
  }
}
