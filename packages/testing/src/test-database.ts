import { createHash, randomBytes } from "node:crypto";
import pg from "pg";

/**
 * Named after this checkout, so that test runs of two checkouts on one server (a CI
 * clone beside a working tree, two worktrees) never drop each other's template.
 */
export const templateDatabaseName = `herald_test_template_${createHash("sha256")
  .update(new URL("..", import.meta.url).href)
  .digest("hex")
  .slice(0, 10)}`;

function withDatabase(databaseUrl: string, database: string): string {
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  url.searchParams.delete("schema");
  return url.toString();
}

async function withAdmin<T>(databaseUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(databaseUrl, "postgres") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Builds the template every test database is cloned from: created anew once per
 * run and migrated by the given function, so that each test file gets a fully
 * migrated database in a few milliseconds instead of migrating its own.
 */
export async function prepareTemplateDatabase(options: {
  databaseUrl: string;
  migrate: (templateUrl: string) => Promise<void>;
}): Promise<void> {
  const name = templateDatabaseName;
  await withAdmin(options.databaseUrl, async (client) => {
    await client.query(`ALTER DATABASE ${name} WITH is_template false`).catch(() => {});
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  });
  await options.migrate(withDatabase(options.databaseUrl, name));
  await withAdmin(options.databaseUrl, (client) => client.query(`ALTER DATABASE ${name} WITH is_template true`));
}

export interface TestDatabase {
  /** URL of the new database, without a schema: each service adds its own. */
  databaseUrl: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file, cloned from the template. */
export async function createTestDatabase(databaseUrl: string): Promise<TestDatabase> {
  const name = `herald_test_${randomBytes(6).toString("hex")}`;
  await withAdmin(databaseUrl, async (client) => {
    // Two clones of one template at the same instant can collide; the second waits and tries again.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${name} TEMPLATE ${templateDatabaseName}`);
        return;
      } catch (error) {
        if (attempt >= 20 || !String((error as Error).message).includes("being accessed by other users")) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 100));
      }
    }
  });
  return {
    databaseUrl: withDatabase(databaseUrl, name),
    drop: () => withAdmin(databaseUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
