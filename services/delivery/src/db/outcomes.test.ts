import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { asPartitionedTables, createTestDatabase, nodesOf, type PlanNode, plansOf, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { emailActivityEvent } from "../events/email-activity-outbox.js";
import { newEmailRow } from "../test-support/query-plans.js";
import { claimDueEmails, type EmailRow, insertEmails } from "./emails.js";
import { createOutcomesPool, type OutcomeWrite, recordOutcomes } from "./outcomes.js";

const sentWrite = (row: EmailRow): OutcomeWrite => ({
  projectId: row.projectId,
  emailId: row.id,
  emailCreatedAt: row.createdAt,
  outcome: { status: "SENT", providerMessageId: row.messageId, providerResponse: "250 2.0.0 queued", sentAt: new Date() },
  event: emailActivityEvent("email.sent", row),
});

describe("the outcomes connection", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let outcomes: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "delivery", () => {});
    outcomes = createOutcomesPool(database.databaseUrl, "delivery", () => {});
  });

  afterAll(async () => {
    await outcomes?.end();
    await pool?.end();
    await database?.drop();
  });

  /** How the plan reads emails, each of its months as emails: the distinct [node type, index] of the nodes on it. */
  const readsOfEmails = async (on: pg.Pool, reported: PlanNode) => {
    const plan = await asPartitionedTables(on, reported);
    const reads = nodesOf(plan)
      .filter((node) => node["Relation Name"] === "emails")
      .map((node) => JSON.stringify([node["Node Type"], node["Index Name"] ?? null]));
    return [...new Set(reads)].map((read) => JSON.parse(read) as [string, string | null]);
  };

  it("keeps finding emails by primary key with a plan made while the table held three", async () => {
    const projectId = randomUUID();
    await insertEmails(
      pool,
      Array.from({ length: 3 }, (_, index) => newEmailRow(projectId, index)),
    );
    await pool.query("ANALYZE emails");
    const [first, second] = await claimDueEmails(pool, 60_000, 2);
    if (!first || !second) throw new Error("the emails were not claimed");

    // The statement is prepared and planned on this write; the plan is kept for the connection's life.
    expect(await recordOutcomes(outcomes, [sentWrite(first)])).toEqual(new Set([first.id]));
    const [plan] = await plansOf(outcomes, "moved AS", async () => {
      expect(await recordOutcomes(outcomes, [sentWrite(second)])).toEqual(new Set([second.id]));
    });
    if (!plan) throw new Error("auto_explain reported no plan");
    const nodes = nodesOf(plan);
    // On this small a table a planner free to choose scans it whole and hashes the outcomes: a plan that,
    // kept, read every email for each write once the table had grown.
    expect(nodes.filter((node) => ["Seq Scan", "Hash Join", "Merge Join"].includes(node["Node Type"]))).toEqual([]);
    expect(await readsOfEmails(pool, plan)).toEqual([
      ["ModifyTable", null],
      ["Index Scan", "emails_pkey"],
    ]);
  });

  it("keeps finding emails by primary key with a plan made while every month was empty", async () => {
    const empty = await createTestDatabase(inject("herald").databaseUrl);
    const emptyPool = createSqlPool(empty.databaseUrl, "delivery", () => {});
    const emptyOutcomes = createOutcomesPool(empty.databaseUrl, "delivery", () => {});
    try {
      // Planned on this write, which finds nothing: every month's partition is empty, and the planner sees each index
      // its conditions can use as costing the same. A plan through another index than the key, kept, read each email
      // by (project_id, created_at) and filtered the 99 others of its enqueue batch (docs/decisions.md).
      const projectId = randomUUID();
      await insertEmails(emptyPool, [newEmailRow(projectId, 0)]);
      const [gone] = await claimDueEmails(emptyPool, 60_000, 1);
      if (!gone) throw new Error("no email was claimed");
      await emptyPool.query("DELETE FROM emails");
      expect(await recordOutcomes(emptyOutcomes, [sentWrite(gone)])).toEqual(new Set());
      await insertEmails(
        emptyPool,
        Array.from({ length: 100 }, (_, index) => newEmailRow(projectId, index)),
      );
      const [claimed] = await claimDueEmails(emptyPool, 60_000, 1);
      if (!claimed) throw new Error("no email was claimed");
      const [plan] = await plansOf(emptyOutcomes, "moved AS", async () => {
        expect(await recordOutcomes(emptyOutcomes, [sentWrite(claimed)])).toEqual(new Set([claimed.id]));
      });
      if (!plan) throw new Error("auto_explain reported no plan");
      expect(await readsOfEmails(emptyPool, plan)).toEqual([
        ["ModifyTable", null],
        ["Index Scan", "emails_pkey"],
      ]);
    } finally {
      await emptyOutcomes.end();
      await emptyPool.end();
      await empty.drop();
    }
  });
});
