import { randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations, createSqlPool } from "@herald/db";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const { stack } = inject("herald");
const root = new URL("..", import.meta.url).pathname;

/** A database of its own, empty: the migrations are applied here step by step, not cloned from the template. */
function databaseUrlOf(name: string): string {
  const url = new URL(stack.databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The service's migrations named before `firstOmitted`, copied to a folder of their own. */
function migrationsBefore(service: string, firstOmitted: string): string {
  const source = join(root, "services", service, "prisma", "migrations");
  const target = mkdtempSync(join(tmpdir(), `herald-${service}-migrations-`));
  for (const name of readdirSync(source).filter((entry) => entry < firstOmitted))
    cpSync(join(source, name), join(target, name), { recursive: true });
  return target;
}

const partitionOf = async (pool: pg.Pool, table: string, id: string) =>
  (await pool.query<{ partition: string }>(`SELECT tableoid::regclass::text AS partition FROM ${table} WHERE id = $1`, [id])).rows[0]
    ?.partition;

/** Partitioning a table that already holds rows keeps every row, each in its month, with the keys and indexes the services use. */
describe("the migrations that partition events and email_activity, on a database with data", () => {
  const database = `herald_partitioning_${randomUUID().slice(0, 8)}`;
  const admin = new pg.Pool({ connectionString: databaseUrlOf("postgres"), max: 1 });
  const folders: string[] = [];

  beforeAll(async () => {
    await admin.query(`CREATE DATABASE ${database}`);
  });

  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  it("moves contacts' events into monthly partitions, the long-past ones into the default partition", async () => {
    const databaseUrl = databaseUrlOf(database);
    const before = migrationsBefore("contacts", "20261129100000");
    folders.push(before);
    await applyMigrations({ databaseUrl, schema: "contacts", migrationsDir: before });
    const pool = createSqlPool(databaseUrl, "contacts", () => {});
    try {
      const projectId = randomUUID();
      const contactId = randomUUID();
      await pool.query("INSERT INTO contacts (id, project_id, email, subscribed) VALUES ($1, $2, 'kept@example.com', true)", [
        contactId,
        projectId,
      ]);
      const lastMonth = randomUUID();
      const now = randomUUID();
      const longAgo = randomUUID();
      await pool.query(
        `INSERT INTO events (id, project_id, contact_id, name, created_at) VALUES
           ($1, $4, $5, 'signup', now() - interval '35 days'), ($2, $4, $5, 'login', now()), ($3, $4, $5, 'ancient', now() - interval '5 years')`,
        [lastMonth, now, longAgo, projectId, contactId],
      );

      await applyMigrations({ databaseUrl, schema: "contacts", migrationsDir: join(root, "services/contacts/prisma/migrations") });

      const month = (offsetDays: number) => {
        const at = new Date(Date.now() - offsetDays * 86_400_000);
        return `events_p${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, "0")}`;
      };
      expect(await partitionOf(pool, "events", lastMonth)).toBe(month(35));
      expect(await partitionOf(pool, "events", now)).toBe(month(0));
      expect(await partitionOf(pool, "events", longAgo)).toBe("events_default");
      const { rows: keys } = await pool.query<{ definition: string }>(
        "SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conrelid = 'events'::regclass ORDER BY conname",
      );
      expect(keys.map((row) => row.definition)).toEqual([
        "FOREIGN KEY (project_id, contact_id) REFERENCES contacts(project_id, id) ON UPDATE CASCADE ON DELETE CASCADE",
        "PRIMARY KEY (project_id, created_at, id)",
      ]);
      const { rows: indexes } = await pool.query<{ indexname: string }>(
        "SELECT indexname FROM pg_indexes WHERE tablename = 'events' ORDER BY 1",
      );
      expect(indexes.map((row) => row.indexname)).toEqual([
        "events_contact_id_created_at_id_idx",
        "events_pkey",
        "events_project_id_name_created_at_id_idx",
      ]);
      // The contact's deletion still takes its events, in every partition.
      await pool.query("DELETE FROM contacts WHERE id = $1", [contactId]);
      expect(Number((await pool.query("SELECT count(*) AS n FROM events")).rows[0].n)).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it("moves delivery's activity into monthly partitions, keeping its CHECK constraints", async () => {
    const databaseUrl = databaseUrlOf(database);
    const before = migrationsBefore("delivery", "20261129100000");
    folders.push(before);
    await applyMigrations({ databaseUrl, schema: "delivery", migrationsDir: before });
    const pool = createSqlPool(databaseUrl, "delivery", () => {});
    try {
      const id = randomUUID();
      await pool.query(
        `INSERT INTO email_activity (id, project_id, email_id, type, recipient, category, occurred_at)
         VALUES ($1, $2, $3, 'email.open', 'kept@example.com', 'TRANSACTIONAL', now() - interval '40 days')`,
        [id, randomUUID(), randomUUID()],
      );

      await applyMigrations({ databaseUrl, schema: "delivery", migrationsDir: join(root, "services/delivery/prisma/migrations") });

      const at = new Date(Date.now() - 40 * 86_400_000);
      expect(await partitionOf(pool, "email_activity", id)).toBe(
        `email_activity_p${at.getUTCFullYear()}${String(at.getUTCMonth() + 1).padStart(2, "0")}`,
      );
      await expect(
        pool.query(
          `INSERT INTO email_activity (id, project_id, email_id, type, recipient, category, occurred_at)
           VALUES ($1, $2, $3, 'email.nonsense', 'x@example.com', 'TRANSACTIONAL', now())`,
          [randomUUID(), randomUUID(), randomUUID()],
        ),
      ).rejects.toThrow(/email_activity_type/);
      const { rows } = await pool.query<{ definition: string }>(
        "SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conrelid = 'email_activity'::regclass AND contype = 'p'",
      );
      expect(rows.map((row) => row.definition)).toEqual(["PRIMARY KEY (project_id, occurred_at, id)"]);
    } finally {
      await pool.end();
    }
  });
});
