import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { createTestDatabase, nodesOf, plansOf, type TestDatabase } from "@herald/testing";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Db, prismaClientOn } from "./client.js";
import { eraseContactFromAutomation } from "./erasure.js";

describe("erasing a contact from automation", () => {
  let database: TestDatabase;
  let pool: ReturnType<typeof createSqlPool>;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    // One connection, shared by Prisma and plansOf, so that auto_explain reports the erasure's statements.
    pool = createSqlPool(database.databaseUrl, "automation", () => {}, 1);
    db = prismaClientOn(new PrismaPg(pool, { schema: "automation" }));
  });

  afterAll(async () => {
    await db?.$disconnect();
    await pool?.end();
    await database?.drop();
  });

  it("finds the contact's executions, step runs and entrant rows through indexes, not by reading the project's", async () => {
    const projectId = randomUUID();
    const contactId = randomUUID();
    const workflowId = randomUUID();
    const stepId = randomUUID();
    await pool.query("INSERT INTO workflows (id, project_id, name, event_name) VALUES ($1, $2, 'Welcome', 'signed.up')", [
      workflowId,
      projectId,
    ]);
    await pool.query("INSERT INTO workflow_steps (id, workflow_id, project_id, type, name) VALUES ($1, $2, $3, 'WEBHOOK', 'hook')", [
      stepId,
      workflowId,
      projectId,
    ]);
    // 4,000 other contacts' executions, and three of the contact's, one still running.
    await pool.query(
      `INSERT INTO workflow_executions (id, workflow_id, project_id, contact_id, status, context, finished_at)
       SELECT gen_random_uuid(), $1, $2, CASE WHEN n <= 3 THEN $3 ELSE gen_random_uuid()::text END,
         CASE WHEN n = 1 THEN 'RUNNING' ELSE 'COMPLETED' END, jsonb_build_object('n', n), CASE WHEN n = 1 THEN NULL ELSE now() END
       FROM generate_series(1, 4003) AS n`,
      [workflowId, projectId, contactId],
    );
    await pool.query(
      `INSERT INTO workflow_step_runs (id, execution_id, project_id, step_id, step_type, status, contact_id, output)
       SELECT gen_random_uuid(), id, project_id, $1, 'WEBHOOK', 'COMPLETED', contact_id, jsonb_build_object('answer', contact_id) FROM workflow_executions`,
      [stepId],
    );
    await pool.query(
      "INSERT INTO workflow_entrants (project_id, workflow_id, contact_id) SELECT DISTINCT project_id, workflow_id, contact_id FROM workflow_executions",
    );
    await pool.query("ANALYZE workflow_executions; ANALYZE workflow_step_runs; ANALYZE workflow_entrants");

    let erased = 0;
    const plans = await plansOf(pool, "contact_id", async () => {
      erased = await db.$transaction((tx) => eraseContactFromAutomation(tx, { projectId, contactId, email: "", occurredAt: new Date() }));
    });
    expect(erased).toBe(3);
    const left = await pool.query(
      `SELECT (SELECT count(*) FROM workflow_executions WHERE contact_id = $1)::int AS executions,
              (SELECT count(*) FROM workflow_step_runs WHERE contact_id = $1 OR output::text LIKE '%' || $1 || '%')::int AS runs,
              (SELECT count(*) FROM workflow_entrants WHERE contact_id = $1)::int AS entrants,
              (SELECT count(*) FROM workflow_executions WHERE status = 'CANCELLED')::int AS cancelled`,
      [contactId],
    );
    expect(left.rows[0]).toEqual({ executions: 0, runs: 0, entrants: 0, cancelled: 1 });

    const modified = (table: string) =>
      plans.filter((plan) => nodesOf(plan).some((node) => node["Node Type"] === "ModifyTable" && node["Relation Name"] === table));
    for (const table of ["workflow_executions", "workflow_step_runs", "workflow_entrants"]) {
      const [plan] = modified(table);
      if (!plan) throw new Error(`auto_explain reported no plan changing ${table}`);
      expect(
        nodesOf(plan).filter((node) => node["Node Type"] === "Seq Scan" && node["Relation Name"]?.startsWith("workflow_")),
        table,
      ).toEqual([]);
    }
  });
});
