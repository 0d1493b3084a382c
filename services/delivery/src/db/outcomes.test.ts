import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { createTestDatabase, nodesOf, plansOf, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { emailActivityEvent } from "../events/email-activity-outbox.js";
import { newEmailRow } from "../test-support/query-plans.js";
import { claimDueEmails, type EmailRow, insertEmails } from "./emails.js";
import { createOutcomesPool, type OutcomeWrite, recordOutcomes } from "./outcomes.js";

const sentWrite = (row: EmailRow): OutcomeWrite => ({
  projectId: row.projectId,
  emailId: row.id,
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
    expect(nodes.filter((node) => node["Relation Name"] === "emails").map((node) => [node["Node Type"], node["Index Name"]])).toEqual([
      ["ModifyTable", undefined],
      ["Index Scan", "emails_pkey"],
    ]);
  });
});
