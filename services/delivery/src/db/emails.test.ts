import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { newEmailRow, nodesOf, plansOf } from "../test-support/query-plans.js";
import { claimDueEmails, insertEmails } from "./emails.js";

describe("claiming due emails", () => {
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

  it("claims lapsed leases first, then due emails in the order they fell due, reading each in order from its index", async () => {
    const projectId = randomUUID();
    const rows = Array.from({ length: 5_000 }, (_, index) => newEmailRow(projectId, index));
    for (let first = 0; first < rows.length; first += 500) await insertEmails(pool, rows.slice(first, first + 500));
    // Due one millisecond apart, the first enqueued first; two emails claimed earlier by a dispatcher that died.
    await pool.query(
      `UPDATE emails e SET next_attempt_at = now() - interval '1 hour' + make_interval(secs => o.n / 1000.0)
       FROM unnest($1::uuid[]) WITH ORDINALITY AS o(id, n) WHERE e.id = o.id`,
      [rows.map((row) => row.id)],
    );
    const lapsed = [rows[4_000], rows[4_001]].map((row) => row?.id ?? "");
    await pool.query(
      "UPDATE emails SET status = 'SENDING', attempts = 1, locked_until = now() - interval '1 minute' WHERE id = ANY($1::uuid[])",
      [lapsed],
    );
    await pool.query("ANALYZE emails");

    let claimed: string[] = [];
    const [plan] = await plansOf(pool, "WITH lapsed AS", async () => {
      claimed = (await claimDueEmails(pool, 60_000, 100)).map((row) => row.id);
    });
    // The rows come back in no particular order: which rows they are says what was taken first.
    expect([...claimed].sort()).toEqual([...lapsed, ...rows.slice(0, 98).map((row) => row.id)].sort());

    // The queue is never read whole and sorted: each state comes in order from its own index, up to the limit.
    // (How the claimed ids then find their rows is the planner's to choose by the table's size.)
    if (!plan) throw new Error("auto_explain reported no plan");
    const scans = nodesOf(plan).filter((node) => node["Index Name"]?.startsWith("emails_status_"));
    expect(scans.map((node) => [node["Node Type"], node["Index Name"]])).toEqual([
      ["Index Scan", "emails_status_locked_until_idx"],
      ["Index Scan", "emails_status_next_attempt_at_idx"],
    ]);
    expect(nodesOf(plan).filter((node) => ["Sort", "Bitmap Heap Scan"].includes(node["Node Type"]))).toEqual([]);
  });
});
