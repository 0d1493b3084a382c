import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { newEmailRow } from "../test-support/query-plans.js";
import { insertEmailsUnlessCapped } from "./emails.js";

describe("storing emails unless a category is capped", () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "delivery", () => {}, 1);
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const written = async (projectId: string) => {
    const { rows } = await pool.query<{ emails: number; keys: number; used: number }>(
      `SELECT (SELECT count(*) FROM emails WHERE project_id = $1)::int AS emails,
         (SELECT count(*) FROM email_idempotency_keys WHERE project_id = $1)::int AS keys,
         (SELECT coalesce(sum(used), 0) FROM monthly_usage WHERE project_id = $1)::int AS used`,
      [projectId],
    );
    return rows[0];
  };
  const capped = (projectId: string, transactional: number | null, campaigns: number | null) =>
    pool.query("INSERT INTO billing_caps (project_id, transactional, campaigns, changed_at) VALUES ($1, $2, $3, now())", [
      projectId,
      transactional,
      campaigns,
    ]);
  const keyed = (projectId: string, index: number) => ({ ...newEmailRow(projectId, index), idempotencyKey: `key-${index}` });

  it("stores and counts the emails of categories without a cap, also when another of the project's categories has one", async () => {
    const free = randomUUID();
    const otherCapped = randomUUID();
    await capped(otherCapped, null, 10);
    for (const projectId of [free, otherCapped]) {
      const rows = [keyed(projectId, 0), keyed(projectId, 1)];
      const stored = await insertEmailsUnlessCapped(pool, rows);
      expect(stored?.map((email) => email.id)).toEqual(rows.map((row) => row.id));
      expect(await written(projectId)).toEqual({ emails: 2, keys: 2, used: 2 });
    }
  });

  it("stores nothing, neither emails nor idempotency keys nor usage, when one of the rows' categories has a cap", async () => {
    const projectId = randomUUID();
    const uncapped = randomUUID();
    await capped(projectId, 1_000, null);
    // A batch of two projects' calls: the one capped category holds back the whole batch, for the caller to store under the cap's lock.
    expect(await insertEmailsUnlessCapped(pool, [keyed(uncapped, 0), keyed(projectId, 0)])).toBeUndefined();
    expect(await written(projectId)).toEqual({ emails: 0, keys: 0, used: 0 });
    expect(await written(uncapped)).toEqual({ emails: 0, keys: 0, used: 0 });
  });
});
