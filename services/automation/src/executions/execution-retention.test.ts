import { randomUUID } from "node:crypto";
import { schemaOf } from "@herald/db";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb, type Db } from "../db/client.js";
import { runExecutionRetention } from "./execution-retention.js";

const dayMs = 86_400_000;

describe("execution retention", () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    db = createDb(database.databaseUrl, schemaOf(database.databaseUrl, "automation"));
  });

  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  it("deletes the executions finished before the window with their step runs, keeping live ones and the entrants", async () => {
    const now = new Date();
    const ago = (days: number) => new Date(now.getTime() - days * dayMs);
    const projectId = randomUUID();
    const workflow = await db.workflow.create({ data: { projectId, name: "Old onboarding", eventName: "signup" } });
    const step = await db.workflowStep.create({ data: { workflowId: workflow.id, projectId, type: "EXIT", name: "Exit" } });
    const execution = async (contactId: string, startedAt: Date, finishedAt: Date | null) => {
      const created = await db.workflowExecution.create({
        data: { workflowId: workflow.id, projectId, contactId, status: finishedAt ? "COMPLETED" : "RUNNING", startedAt, finishedAt },
      });
      await db.workflowStepRun.create({
        data: {
          executionId: created.id,
          projectId,
          stepId: step.id,
          stepType: "EXIT",
          status: finishedAt ? "COMPLETED" : "PENDING",
          contactId,
        },
      });
      await db.workflowEntrant.create({ data: { projectId, workflowId: workflow.id, contactId } });
      return created.id;
    };
    const old = await execution(randomUUID(), ago(40), ago(39));
    const recent = await execution(randomUUID(), ago(40), ago(5));
    const live = await execution(randomUUID(), ago(90), null);

    expect(await runExecutionRetention({ db, days: 30 }, now)).toBe(1);

    const left = await db.workflowExecution.findMany({ where: { workflowId: workflow.id }, select: { id: true } });
    expect(left.map((row) => row.id).sort()).toEqual([recent, live].sort());
    expect(await db.workflowStepRun.count({ where: { executionId: old } })).toBe(0);
    expect(await db.workflowStepRun.count({ where: { executionId: live } })).toBe(1);
    expect(await db.workflowEntrant.count({ where: { workflowId: workflow.id } })).toBe(3);
    expect(await runExecutionRetention({ db, days: 30 }, now)).toBe(0);
  });
});
