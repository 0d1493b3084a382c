import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { emailActivityEvent } from "../events/email-activity-outbox.js";
import { claimDueEmails, type EmailRow, insertEmails } from "./emails.js";
import { createOutcomesPool, type OutcomeWrite, outcomesStatement, recordOutcomes } from "./outcomes.js";

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

const sentWrite = (row: EmailRow): OutcomeWrite => ({
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
      Array.from({ length: 3 }, (_, index) => ({
        id: randomUUID(),
        projectId,
        contactId: null,
        idempotencyKey: null,
        toEmail: `r${index}@plans.example`,
        toName: null,
        fromEmail: "hello@plans.example",
        fromName: null,
        replyTo: null,
        subject: `Email ${index}`,
        html: `<p>Email ${index}</p>`,
        headers: {},
        attachments: [],
        listUnsubscribe: null,
        templateId: null,
        campaignId: null,
        workflowId: null,
        category: "TRANSACTIONAL",
        messageId: `<${randomUUID()}@plans.example>`,
      })),
    );
    await pool.query("ANALYZE emails");
    const [first, second] = await claimDueEmails(pool, 60_000, 2);
    if (!first || !second) throw new Error("the emails were not claimed");

    // The statement is prepared and planned on this write; the plan is kept for the connection's life.
    expect(await recordOutcomes(outcomes, [sentWrite(first)])).toEqual(new Set([first.id]));

    // The plan this connection keeps, as auto_explain reports it for the next write.
    const client = await outcomes.connect();
    const notices: string[] = [];
    client.on("notice", (notice) => notices.push(notice.message ?? ""));
    try {
      await client.query("LOAD 'auto_explain'");
      await client.query("SET auto_explain.log_min_duration = 0; SET auto_explain.log_format = json; SET auto_explain.log_level = notice");
      expect((await client.query(outcomesStatement([sentWrite(second)]))).rows).toEqual([{ id: second.id }]);
      await client.query("SET auto_explain.log_min_duration = -1");
    } finally {
      client.release();
    }
    const report = notices.find((notice) => notice.includes("delivery_record_outcomes") || notice.includes("moved AS"));
    const plan = report ? (JSON.parse(report.slice(report.indexOf("{"))) as { Plan: PlanNode }).Plan : undefined;
    if (!plan) throw new Error(`no plan among the notices: ${notices.join("\n")}`);
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
