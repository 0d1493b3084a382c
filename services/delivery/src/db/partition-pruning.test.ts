import { randomUUID } from "node:crypto";
import {
  createSqlPool,
  maintainTimePartitions,
  monthOfPartition,
  monthStart,
  partitionName,
  partitionsOf,
  withConnection,
} from "@herald/db";
import { createTestDatabase, nodesOf, plansOf, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { newEmailRow } from "../test-support/query-plans.js";
import { activityPageSql } from "./activity.js";
import { claimDueEmails, createClaimsPool, insertEmails, unsentEmail, unsentSince } from "./emails.js";

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

/** The dispatcher's claim reads only the months that hold unsent mail, and retention never drops such a month. */
describe("partition pruning of emails", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let claims: pg.Pool;
  const now = new Date();
  const projectId = randomUUID();
  const [unsent, sent, stray] = Array.from({ length: 3 }, (_, index) => newEmailRow(projectId, index));
  // Mid-month, three and five months back: the claim then reads four months (three back to this one) whatever the day of
  // the month. 90 days back from a month's last day is the first of the third month back, and only three months.
  const monthsBack = (months: number) => new Date(monthStart(now, -months).getTime() + 14 * dayMs);
  const unsentAt = monthsBack(3);
  const sentAt = monthsBack(5);

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "delivery", () => {});
    claims = createClaimsPool(database.databaseUrl, "delivery", () => {});
    await maintainTimePartitions(pool, [{ table: "emails", column: "created_at", retainDays: 3_650 }], {
      now: new Date(now.getTime() - 365 * dayMs),
      monthsAhead: 14,
    });
    // An email still due from three months ago, and one sent five months ago (their rows move to those months).
    await insertEmails(
      pool,
      [unsent, sent].filter((row) => row !== undefined),
    );
    await pool.query("UPDATE emails SET created_at = $2 WHERE id = $1", [unsent?.id, unsentAt]);
    await pool.query("UPDATE emails SET created_at = $2, status = 'SENT', sent_at = $2 WHERE id = $1", [sent?.id, sentAt]);
  });

  afterAll(async () => {
    await claims?.end();
    await pool?.end();
    await database?.drop();
  });

  const monthsOf = async () => {
    const client = await pool.connect();
    return partitionsOf(client, "emails").finally(() => client.release());
  };

  it("claims from the oldest month that holds unsent mail to the current one, and reads no other", async () => {
    const since = await withConnection(pool, (client) => unsentSince(client, now));
    expect(since).toEqual(monthStart(unsentAt));

    let claimed: string[] = [];
    const [plan] = await plansOf(claims, "WITH RECURSIVE lapsed AS", async () => {
      claimed = (await claimDueEmails(claims, 60_000, 10, undefined, since)).map((row) => row.id);
    });
    expect(claimed).toEqual([unsent?.id]);
    if (!plan) throw new Error("auto_explain reported no plan");
    // The plan is generic, made once for the connection: the months are left out as it starts, from its parameters.
    const read = new Set(
      nodesOf(plan)
        .filter((node) => node["Node Type"] !== "ModifyTable")
        .flatMap((node) => (node["Relation Name"]?.startsWith("emails_") ? [node["Relation Name"]] : [])),
    );
    const upTo = monthStart(new Date(now.getTime() + 3_600_000));
    const expected = (await monthsOf()).filter((name) => {
      const month = monthOfPartition("emails", name);
      return month !== undefined && month >= monthStart(unsentAt) && month <= upTo;
    });
    expect(expected.length).toBeGreaterThanOrEqual(4);
    expect([...read].sort()).toEqual(expected);
  });

  it("reaches back to an unsent email that no month holds, in the default partition", async () => {
    if (!stray) throw new Error("no row");
    const strayAt = new Date(now.getTime() - 5 * 365 * dayMs);
    await insertEmails(pool, [stray]);
    await pool.query("UPDATE emails SET created_at = $2 WHERE id = $1", [stray.id, strayAt]);
    expect(await withConnection(pool, (client) => unsentSince(client, now))).toEqual(strayAt);
    await pool.query("UPDATE emails SET status = 'FAILED' WHERE id = $1", [stray.id]);
    expect(await withConnection(pool, (client) => unsentSince(client, now))).toEqual(monthStart(unsentAt));
  });

  it("retention drops a month past the window, but not one that holds unsent mail", async () => {
    const result = await maintainTimePartitions(pool, [{ table: "emails", column: "created_at", retainDays: 30, keep: unsentEmail }], {
      now,
    });
    expect(result.dropped).toContain(partitionName("emails", sentAt));
    expect(result.dropped).not.toContain(partitionName("emails", unsentAt));
    expect(await monthsOf()).toContain(partitionName("emails", unsentAt));
    // The failed email in the default partition, older than the window, went; the unsent one stays.
    const { rows } = await pool.query<{ id: string }>("SELECT id::text AS id FROM emails");
    expect(rows.map((row) => row.id).sort()).toEqual([unsent?.id]);
  });
});
