import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { schemaOf } from "@herald/db";
import { createEnvelope } from "@herald/kafka";
import { createLogger } from "@herald/platform";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { createRenderPool } from "@herald/rendering/pool";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createDb, type Db } from "../db/client.js";
import { applyTriggerEvent, mayTrigger } from "../events/trigger-consumer.js";
import { createWorkflows, type Workflows } from "../workflows/workflows.js";
import type { StepExecutor } from "./step-outcome.js";
import { createStepRunner } from "./step-runner.js";
import { createStepExecutors } from "./steps.js";
import { createTriggerIndex } from "./trigger-index.js";

const { databaseUrl } = inject("herald");

/** The engine on a database of its own, without Kafka: events are applied as the consumer would apply them. */
describe("the workflow engine", () => {
  let database: TestDatabase;
  let db: Db;
  let workflows: Workflows;
  let index: ReturnType<typeof createTriggerIndex>;
  const projectId = randomUUID();

  beforeAll(async () => {
    database = await createTestDatabase(databaseUrl);
    db = createDb(database.databaseUrl, schemaOf(database.databaseUrl, "automation"));
    index = createTriggerIndex({ db, ttlMs: 60_000 });
    workflows = createWorkflows({ db, fieldTypesOf: async () => () => undefined, onLocalChange: (id) => index.invalidate(id) });
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  const tracked = (name: string, contactId: string, data: Record<string, string> = {}) =>
    createEnvelope({
      type: name,
      projectId,
      contactId,
      source: "contacts",
      payloadSchema: ContactEventSchema,
      payload: create(ContactEventSchema, { data }),
    });
  const apply = (event: ReturnType<typeof tracked>) => db.$transaction((tx) => applyTriggerEvent(tx, event, index));
  const executionsOf = (workflowId: string) => db.workflowExecution.findMany({ where: { workflowId }, include: { steps: true } });

  async function enabledWorkflow(
    eventName: string,
    allowReentry: boolean,
    steps: Array<{ type: string; config: Record<string, unknown> }>,
  ) {
    const workflow = await workflows.create(projectId, { name: eventName, description: "", eventName, allowReentry });
    let previous: string | undefined;
    for (const [position, step] of steps.entries()) {
      const created = await workflows.createStep(projectId, workflow.id, {
        type: step.type,
        name: `step ${position}`,
        config: step.config,
      });
      if (previous)
        await workflows.createTransition(projectId, workflow.id, { fromStepId: previous, toStepId: created.id, branch: "", priority: 0 });
      previous = created.id;
    }
    await workflows.update(projectId, workflow.id, { enabled: true });
    return workflow;
  }

  it("starts an execution once for a redelivered event, and once per contact without re-entry", async () => {
    const workflow = await enabledWorkflow("ordered", false, [{ type: "EXIT", config: {} }]);
    const contactId = randomUUID();
    const event = tracked("ordered", contactId, { sku: "A1" });
    expect(await apply(event)).toBe(true);
    expect(await apply(event)).toBe(false);
    expect(await apply(tracked("ordered", contactId))).toBe(false);
    const executions = await executionsOf(workflow.id);
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({
      status: "RUNNING",
      triggerEvent: "ordered",
      triggerData: { sku: "A1" },
      triggerEventId: event.eventId,
    });
    expect(executions[0]?.steps.map((step) => [step.stepType, step.status])).toEqual([["EXIT", "PENDING"]]);
  });

  it("with re-entry, starts one per event; an event no enabled workflow listens for starts nothing", async () => {
    const workflow = await enabledWorkflow("visited", true, [{ type: "EXIT", config: {} }]);
    const contactId = randomUUID();
    await apply(tracked("visited", contactId));
    await apply(tracked("visited", contactId));
    expect(await apply(tracked("unheard-of", contactId))).toBe(false);
    expect(await executionsOf(workflow.id)).toHaveLength(2);
  });

  it("runs steps from the durable queue: a DELAY waits with its due time, and a runner claims each run once", async () => {
    const workflow = await enabledWorkflow("delayed", true, [
      { type: "DELAY", config: { amount: 1, unit: "minutes" } },
      { type: "EXIT", config: { reason: "after the delay" } },
    ]);
    const contacts = Array.from({ length: 10 }, () => randomUUID());
    for (const contactId of contacts) await apply(tracked("delayed", contactId));
    const clients = {} as Parameters<typeof createStepExecutors>[0]["clients"];
    // Two runners on one queue, as two replicas; the DELAY's minute lasts 0.3 s here.
    const runners = [1, 2].map(() =>
      createStepRunner({
        db,
        logger: createLogger({ name: "test", level: "silent" }),
        executors: createStepExecutors({ clients, delayScale: 0.005, renders: createRenderPool(0) }),
        concurrency: 3,
        webhooksPerProject: 1,
        leaseMs: 30_000,
        idleMs: 50,
        delayScale: 0.005,
      }),
    );
    for (const runner of runners) runner.start();
    try {
      for (;;) {
        const executions = await executionsOf(workflow.id);
        if (executions.every((execution) => execution.status === "EXITED")) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await Promise.all(runners.map((runner) => runner.stop()));
    }
    const executions = await executionsOf(workflow.id);
    for (const execution of executions) {
      expect(execution.reason).toBe("after the delay");
      const delay = execution.steps.find((step) => step.stepType === "DELAY");
      expect(delay?.dueAt && delay.dueAt.getTime() - delay.createdAt.getTime()).toBe(300);
      // Set once when reached, once fired when due; never by both runners at once.
      expect(delay?.attempts).toBe(2);
      expect(execution.steps.find((step) => step.stepType === "EXIT")?.attempts).toBe(1);
    }
  });

  it("passes over, by the index alone, an event that neither triggers a workflow nor ends a wait", async () => {
    const contactId = randomUUID();
    // The index is loaded, and knows no such workflow...
    expect(await mayTrigger(tracked("signed.up", contactId), index)).toBe(false);
    await enabledWorkflow("signed.up", true, [{ type: "EXIT", config: {} }]);
    // A WAIT_FOR_EVENT counts even in a workflow not enabled (yet, or any more: its executions may still wait).
    const draft = await workflows.create(projectId, { name: "draft", description: "", eventName: "drafted", allowReentry: false });
    await workflows.createStep(projectId, draft.id, {
      type: "WAIT_FOR_EVENT",
      name: "wait",
      config: { eventName: "onboarded", timeout: 60 },
    });
    // ...and knows both as soon as the changes have answered, on the replica that made them.
    expect(await mayTrigger(tracked("signed.up", contactId), index)).toBe(true);
    expect(await mayTrigger(tracked("onboarded", contactId), index)).toBe(true);
    expect(await mayTrigger(tracked("page.viewed", contactId), index)).toBe(false);
    // Another project's workflows do not count.
    expect(await mayTrigger({ ...tracked("signed.up", contactId), projectId: randomUUID() }, index)).toBe(false);
  });

  it("wakes a WAIT_FOR_EVENT by an event that comes before it reached WAITING: while PENDING, and during its first pass", async () => {
    const workflow = await workflows.create(projectId, { name: "trial", description: "", eventName: "trial.started", allowReentry: true });
    const step = (type: string, name: string, config: Record<string, unknown>) =>
      workflows.createStep(projectId, workflow.id, { type, name, config });
    const wait = await step("WAIT_FOR_EVENT", "wait", { eventName: "trial.converted", timeout: 3_600 });
    const converted = await step("EXIT", "converted", { reason: "converted" });
    const gaveUp = await step("EXIT", "gave up", { reason: "timed out" });
    for (const [toStepId, branch] of [
      [converted.id, "event"],
      [gaveUp.id, "timeout"],
    ] as const)
      await workflows.createTransition(projectId, workflow.id, { fromStepId: wait.id, toStepId, branch, priority: 0 });
    await workflows.update(projectId, workflow.id, { enabled: true });

    // Early: the event is applied before any runner has claimed the wait.
    const early = randomUUID();
    await apply(tracked("trial.started", early));
    expect(await apply(tracked("trial.converted", early, { plan: "pro" }))).toBe(true);
    // Midway: the event is applied while a runner runs the wait's first pass, before it records WAITING.
    const midway = randomUUID();
    await apply(tracked("trial.started", midway));
    const executors = createStepExecutors({
      clients: {} as Parameters<typeof createStepExecutors>[0]["clients"],
      delayScale: 1,
      renders: createRenderPool(0),
    });
    let inFirstPass: () => void = () => {};
    const firstPassStarted = new Promise<void>((resolve) => {
      inFirstPass = resolve;
    });
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const pausedWait: StepExecutor = async (input) => {
      if (input.run.contactId === midway && input.run.wakeReason === null) {
        inFirstPass();
        await released;
      }
      return (executors.WAIT_FOR_EVENT as StepExecutor)(input);
    };
    const runner = createStepRunner({
      db,
      logger: createLogger({ name: "test", level: "silent" }),
      executors: { ...executors, WAIT_FOR_EVENT: pausedWait },
      concurrency: 10,
      webhooksPerProject: 1,
      leaseMs: 30_000,
      idleMs: 50,
      delayScale: 1,
    });
    runner.start();
    try {
      await firstPassStarted;
      expect(await apply(tracked("trial.converted", midway, { plan: "team" }))).toBe(true);
      release();
      await vi.waitFor(
        async () => {
          const executions = await executionsOf(workflow.id);
          expect(executions.map((execution) => execution.status)).toEqual(["EXITED", "EXITED"]);
        },
        { timeout: 30_000, interval: 100 },
      );
    } finally {
      release();
      await runner.stop();
    }
    for (const [contactId, plan] of [
      [early, "pro"],
      [midway, "team"],
    ] as const) {
      const [execution] = (await executionsOf(workflow.id)).filter((candidate) => candidate.contactId === contactId);
      expect(execution?.reason).toBe("converted");
      const waited = execution?.steps.find((run) => run.stepType === "WAIT_FOR_EVENT");
      expect(waited).toMatchObject({ status: "COMPLETED", output: { event: { name: "trial.converted", data: { plan } } } });
    }
  });

  it("fires DELAY timers in bulk and queues what follows as a record would: a WAIT_FOR_EVENT after a DELAY listens at once", async () => {
    const workflow = await workflows.create(projectId, { name: "nudge", description: "", eventName: "cart.left", allowReentry: true });
    const step = (type: string, name: string, config: Record<string, unknown>) =>
      workflows.createStep(projectId, workflow.id, { type, name, config });
    const delay = await step("DELAY", "an hour", { amount: 1, unit: "hours" });
    const wait = await step("WAIT_FOR_EVENT", "wait", { eventName: "cart.paid", timeout: 3_600 });
    const paid = await step("EXIT", "paid", { reason: "paid" });
    const unpaid = await step("EXIT", "unpaid", { reason: "unpaid" });
    await workflows.createTransition(projectId, workflow.id, { fromStepId: delay.id, toStepId: wait.id, branch: "", priority: 0 });
    await workflows.createTransition(projectId, workflow.id, { fromStepId: wait.id, toStepId: paid.id, branch: "event", priority: 0 });
    await workflows.createTransition(projectId, workflow.id, { fromStepId: wait.id, toStepId: unpaid.id, branch: "timeout", priority: 0 });
    await workflows.update(projectId, workflow.id, { enabled: true });
    const contacts = Array.from({ length: 5 }, () => randomUUID());
    for (const contactId of contacts) await apply(tracked("cart.left", contactId));
    const runner = createStepRunner({
      db,
      logger: createLogger({ name: "test", level: "silent" }),
      // The hour lasts 0.36 s here.
      executors: createStepExecutors({
        clients: {} as Parameters<typeof createStepExecutors>[0]["clients"],
        delayScale: 0.0001,
        renders: createRenderPool(0),
      }),
      concurrency: 10,
      webhooksPerProject: 1,
      leaseMs: 30_000,
      idleMs: 50,
      delayScale: 0.0001,
    });
    runner.start();
    try {
      // Once a contact's wait is queued, its event ends the wait, in whatever state the run is by then.
      await vi.waitFor(
        async () => {
          const waits = await db.workflowStepRun.count({ where: { stepId: wait.id } });
          expect(waits).toBe(contacts.length);
        },
        { timeout: 30_000, interval: 50 },
      );
      for (const contactId of contacts) expect(await apply(tracked("cart.paid", contactId))).toBe(true);
      await vi.waitFor(
        async () => {
          const executions = await executionsOf(workflow.id);
          expect(executions.map((execution) => execution.status)).toEqual(contacts.map(() => "EXITED"));
        },
        { timeout: 30_000, interval: 100 },
      );
    } finally {
      await runner.stop();
    }
    for (const execution of await executionsOf(workflow.id)) {
      expect(execution.reason).toBe("paid");
      const timer = execution.steps.find((run) => run.stepType === "DELAY");
      expect(timer).toMatchObject({ status: "COMPLETED", attempts: 2, wakeReason: "timer" });
      expect(timer?.finishedAt?.getTime()).toBeGreaterThanOrEqual(timer?.dueAt?.getTime() ?? Number.NaN);
    }
  });
});
