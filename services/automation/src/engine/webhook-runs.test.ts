import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { schemaOf } from "@herald/db";
import { createEnvelope } from "@herald/kafka";
import { createLogger } from "@herald/platform";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { createRenderPool } from "@herald/rendering/pool";
import { createTestDatabase, type TestDatabase, waitUntil } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb, type Db } from "../db/client.js";
import { applyTriggerEvent } from "../events/trigger-consumer.js";
import { createWorkflows, type Workflows } from "../workflows/workflows.js";
import { createStepRunner, type StepRunner } from "./step-runner.js";
import { createStepExecutors } from "./steps.js";
import { createTriggerIndex } from "./trigger-index.js";
import { createWebhookExecutor } from "./webhook.js";
import { createWebhookSecrets } from "./webhook-secrets.js";

const { databaseUrl } = inject("herald");
/** The loopback address the receiver listens on: the only private one these runners' WEBHOOK steps may reach. */
const receiverAddress = "127.0.0.2";

/**
 * WEBHOOK runs in the engine, on a database of its own with runners in this process (as
 * replicas would be), against a receiver whose answers the test holds back.
 */
describe("WEBHOOK runs: leases and each project's share of the runner", () => {
  let database: TestDatabase;
  let db: Db;
  let workflows: Workflows;
  let index: ReturnType<typeof createTriggerIndex>;
  let receiver: Server;
  let base: string;
  /** Requests by path, as they arrive. */
  const arrived = new Map<string, number>();
  /** Requests answered by path. */
  const answered = new Map<string, number>();
  /** The most requests of a path in flight at once. */
  const peak = new Map<string, number>();
  /** Answers held back by path: released by the test. */
  const held = new Map<string, ServerResponse[]>();
  /** Paths whose requests are held this long before the answer (a slow receiver). */
  const slowMs = new Map<string, number>();
  const renders = createRenderPool(0);

  beforeAll(async () => {
    database = await createTestDatabase(databaseUrl);
    db = createDb(database.databaseUrl, schemaOf(database.databaseUrl, "automation"));
    index = createTriggerIndex({ db, ttlMs: 60_000 });
    workflows = createWorkflows({ db, fieldTypesOf: async () => () => undefined, onLocalChange: (id) => index.invalidate(id) });
    receiver = createServer((request: IncomingMessage, response: ServerResponse) => {
      request.resume();
      request.on("end", () => {
        const path = (request.url ?? "/").split("?")[0] ?? "/";
        arrived.set(path, (arrived.get(path) ?? 0) + 1);
        peak.set(path, Math.max(peak.get(path) ?? 0, inFlight(path)));
        const answer = () => {
          answered.set(path, (answered.get(path) ?? 0) + 1);
          response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
        };
        const slow = slowMs.get(path);
        if (slow !== undefined) setTimeout(answer, slow);
        else if (path.startsWith("/held")) held.set(path, [...(held.get(path) ?? []), response]);
        else answer();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, receiverAddress, resolve));
    base = `http://${receiverAddress}:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const responses of held.values()) for (const response of responses) response.destroy();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await renders.close();
    await db.$disconnect();
    await database.drop();
  });

  const inFlight = (path: string) => (arrived.get(path) ?? 0) - (answered.get(path) ?? 0);

  function runner(options: { leaseMs: number; webhooksPerProject: number }): StepRunner {
    return createStepRunner({
      db,
      logger: createLogger({ name: "test", level: "silent" }),
      executors: {
        ...stepExecutors(),
        WEBHOOK: createWebhookExecutor({
          secrets: createWebhookSecrets({ db }),
          dnsServers: [],
          allowedAddresses: [receiverAddress],
          timeoutMs: 30_000,
          renders,
        }),
      },
      concurrency: 10,
      webhooksPerProject: options.webhooksPerProject,
      leaseMs: options.leaseMs,
      idleMs: 50,
      delayScale: 1,
    });
  }
  const stepExecutors = () =>
    createStepExecutors({ clients: {} as Parameters<typeof createStepExecutors>[0]["clients"], delayScale: 1, renders });

  /** An enabled workflow of one WEBHOOK step to the path, started for `contacts` new contacts: answers the workflow's id. */
  async function webhookExecutions(projectId: string, path: string, contacts: number): Promise<string> {
    const eventName = `hook_${randomUUID().slice(0, 8)}`;
    const workflow = await workflows.create(projectId, { name: eventName, description: "", eventName, allowReentry: true });
    await workflows.createStep(projectId, workflow.id, { type: "WEBHOOK", name: "hook", config: { url: `${base}${path}` } });
    await workflows.update(projectId, workflow.id, { enabled: true });
    for (let contact = 0; contact < contacts; contact++) {
      const event = createEnvelope({
        type: eventName,
        projectId,
        contactId: randomUUID(),
        source: "contacts",
        payloadSchema: ContactEventSchema,
        payload: create(ContactEventSchema, {}),
      });
      expect(await db.$transaction((tx) => applyTriggerEvent(tx, event, index))).toBe(true);
    }
    return workflow.id;
  }
  const executionsOf = (workflowId: string) => db.workflowExecution.findMany({ where: { workflowId }, include: { steps: true } });
  const allCompleted = async (workflowId: string) =>
    (await executionsOf(workflowId)).every((execution) => execution.status === "COMPLETED");

  it("calls a webhook once when its call outlasts the lease: the runner renews the lease while the call runs", async () => {
    const path = `/slow-${randomUUID()}`;
    // The receiver answers after three leases: without renewal, the other runner would take the run over and call again.
    slowMs.set(path, 3_000);
    const workflowId = await webhookExecutions(randomUUID(), path, 1);
    const runners = [runner({ leaseMs: 1_000, webhooksPerProject: 5 }), runner({ leaseMs: 1_000, webhooksPerProject: 5 })];
    for (const each of runners) each.start();
    try {
      await waitUntil(() => allCompleted(workflowId), { timeoutMs: 60_000, describe: () => `calls: ${arrived.get(path)}` });
    } finally {
      await Promise.all(runners.map((each) => each.stop()));
    }
    expect(arrived.get(path)).toBe(1);
    const [execution] = await executionsOf(workflowId);
    expect(execution?.steps.map((step) => [step.status, step.attempts])).toEqual([["COMPLETED", 1]]);
  });

  it("runs at most WEBHOOK_PROJECT_CONCURRENCY webhooks of a project at once, and another project's meanwhile", async () => {
    const slowPath = `/held-${randomUUID()}`;
    const fastPath = `/fast-${randomUUID()}`;
    const crowded = await webhookExecutions(randomUUID(), slowPath, 5);
    const one = runner({ leaseMs: 30_000, webhooksPerProject: 2 });
    one.start();
    try {
      await waitUntil(async () => inFlight(slowPath) >= 2, { timeoutMs: 30_000, describe: () => `in flight: ${inFlight(slowPath)}` });
      // Another project's webhook, queued behind the five, is called and recorded while the two are held.
      const other = await webhookExecutions(randomUUID(), fastPath, 1);
      await waitUntil(() => allCompleted(other), { timeoutMs: 30_000, describe: () => `fast calls: ${arrived.get(fastPath)}` });
      // By then the runner has made passes enough to claim the three others, had it been allowed to.
      expect(arrived.get(slowPath)).toBe(2);
      const waiting = (await executionsOf(crowded)).flatMap((execution) => execution.steps).filter((step) => step.status === "PENDING");
      expect(waiting).toHaveLength(3);
      // As the held answers go, the others follow, never more than two at once.
      await waitUntil(
        async () => {
          for (const response of held.get(slowPath)?.splice(0) ?? []) {
            answered.set(slowPath, (answered.get(slowPath) ?? 0) + 1);
            response.writeHead(200).end("{}");
          }
          return allCompleted(crowded);
        },
        { timeoutMs: 60_000, describe: () => `calls: ${arrived.get(slowPath)}` },
      );
      expect(peak.get(slowPath)).toBe(2);
      expect(arrived.get(slowPath)).toBe(5);
    } finally {
      await one.stop();
    }
  });
});
