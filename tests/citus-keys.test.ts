import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const { stack } = inject("herald");

/**
 * The tables that grow with traffic, which docs/scaling.md (section 4) distributes by project_id on Citus. Citus
 * requires every primary key and unique index of a distributed table to hold the distribution column, and every foreign
 * key between two distributed tables to hold it on both sides; Herald's own rule is stricter: the key leads with it.
 */
const distributed: Record<string, readonly string[]> = {
  contacts: ["contacts", "events", "segment_members", "contact_count_deltas", "event_counts", "event_count_deltas"],
  delivery: [
    "emails",
    "email_idempotency_keys",
    "email_activity",
    "suppressions",
    "monthly_usage",
    "activity_counts",
    "activity_count_deltas",
  ],
  automation: ["workflow_executions", "workflow_step_runs", "workflow_entrants"],
  campaigns: ["campaign_engagements"],
  webhooks: ["messages"],
};

describe("keys of the tables distributed by project (docs/scaling.md)", () => {
  let pool: pg.Pool;

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 1 });
  });

  afterAll(async () => {
    await pool.end();
  });

  it("every unique index and foreign key between them leads with project_id", async () => {
    const found: string[] = [];
    for (const [schema, tables] of Object.entries(distributed)) {
      const uniques = await pool.query<{ table: string; index: string; first: string }>(
        `SELECT t.relname AS table, i.relname AS index, a.attname AS first
         FROM pg_index x
         JOIN pg_class i ON i.oid = x.indexrelid
         JOIN pg_class t ON t.oid = x.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
         LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
         WHERE n.nspname = $1 AND t.relname = ANY($2::text[]) AND x.indisunique AND NOT i.relispartition`,
        [schema, tables],
      );
      for (const row of uniques.rows) if (row.first !== "project_id") found.push(`${schema}.${row.table}.${row.index}`);
      const foreignKeys = await pool.query<{ table: string; name: string; first: string; target: string }>(
        `SELECT t.relname AS table, c.conname AS name, a.attname AS first, r.relname AS target
         FROM pg_constraint c
         JOIN pg_class t ON t.oid = c.conrelid
         JOIN pg_class r ON r.oid = c.confrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = c.conkey[1]
         WHERE c.contype = 'f' AND n.nspname = $1 AND t.relname = ANY($2::text[]) AND r.relname = ANY($2::text[])
           AND c.conparentid = 0`,
        [schema, tables],
      );
      for (const row of foreignKeys.rows) if (row.first !== "project_id") found.push(`${schema}.${row.table}.${row.name}`);
    }
    expect(found).toEqual([]);
  });

  it("every table named above exists, so that a renamed one is not silently skipped", async () => {
    for (const [schema, tables] of Object.entries(distributed)) {
      const { rows } = await pool.query<{ relname: string }>(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = ANY($2::text[]) AND c.relkind IN ('r', 'p')",
        [schema, tables],
      );
      expect(rows.map((row) => row.relname).sort()).toEqual([...tables].sort());
    }
  });
});
