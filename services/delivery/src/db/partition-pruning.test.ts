import { randomUUID } from "node:crypto";
import { createSqlPool, maintainTimePartitions, monthOfPartition, partitionName, partitionsOf } from "@herald/db";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { activityPageSql } from "./activity.js";

const dayMs = 86_400_000;

/** The partitions of email_activity a statement's plan reads, by name. */
async function partitionsRead(pool: pg.Pool, sql: string, values: unknown[]): Promise<string[]> {
  const { rows } = await pool.query<{ "QUERY PLAN": string }>(`EXPLAIN (COSTS OFF) ${sql}`, values);
  const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
  return [...new Set(plan.match(/email_activity_(?:p\d{6}|default)/g) ?? [])].sort();
}

/** /activity's pages read only the months between the project's window start and their cursor. */
describe("partition pruning of email_activity", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  const now = new Date();
  const projectId = randomUUID();

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "delivery", () => {});
    // A year of months behind the current one, as a deployment that has run for a year holds.
    await maintainTimePartitions(pool, [{ table: "email_activity", column: "occurred_at", retainDays: 3_650 }], {
      now: new Date(now.getTime() - 365 * dayMs),
      monthsAhead: 14,
    });
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("the first page reads the months of the project's window (and the default partition) only", async () => {
    const since = new Date(now.getTime() - 30 * dayMs);
    const page = activityPageSql(projectId, { filter: { types: ["email.open", "email.click"], since }, before: undefined, limit: 21 });
    const read = await partitionsRead(pool, page.text, page.values);
    const client = await pool.connect();
    const existing = await partitionsOf(client, "email_activity").finally(() => client.release());
    expect(existing.length).toBeGreaterThanOrEqual(15);
    const sinceMonth = Date.UTC(since.getUTCFullYear(), since.getUTCMonth(), 1);
    const inWindow = existing.filter((name) => (monthOfPartition("email_activity", name)?.getTime() ?? Number.NaN) >= sinceMonth);
    expect(read).toEqual([...inWindow, "email_activity_default"].sort());
    expect(read).not.toContain(partitionName("email_activity", new Date(now.getTime() - 90 * dayMs)));
  });

  it("orders a page by the key's columns, so that the rows of one instant are not all read and sorted", async () => {
    const page = activityPageSql(projectId, {
      filter: { types: [], since: new Date(now.getTime() - 30 * dayMs) },
      before: undefined,
      limit: 21,
    });
    const { rows } = await pool.query<{ "QUERY PLAN": string }>(`EXPLAIN (COSTS OFF) ${page.text}`, page.values);
    const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
    // Ordered by the output's id::text instead, no index served the order and every row of the page's last instant was sorted.
    expect(plan).not.toMatch(/id\)::text\) DESC/);
  });

  it("a later page reads no month after its cursor", async () => {
    const since = new Date(now.getTime() - 365 * dayMs);
    const cursor = new Date(now.getTime() - 200 * dayMs);
    const page = activityPageSql(projectId, { filter: { types: [], since }, before: { occurredAt: cursor, id: randomUUID() }, limit: 21 });
    const read = await partitionsRead(pool, page.text, page.values);
    expect(read).toContain(partitionName("email_activity", cursor));
    expect(read).not.toContain(partitionName("email_activity", now));
    expect(read).not.toContain(partitionName("email_activity", new Date(cursor.getTime() + 45 * dayMs)));
  });
});
