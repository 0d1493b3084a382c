import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type ServiceProcess, startService, testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import { webhookReceiverAddress } from "./support/webhook-receiver.js";
import { type ExecutionJson, finished, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer, smtp, redisUrl, kafkaBrokers } = inject("herald");
const call = restClient(stack.gatewayUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);
const dns = testDnsClient(dnsServer.controlUrl);

/**
 * A second automation process beside the stack's, on the same database: two replicas claim
 * from one queue. It is killed with SIGKILL while executions wait on DELAY timers, which the
 * stack's replica then fires.
 *
 * Its Kafka consumer groups are its own. In the stack's groups it would take over half of the
 * partitions that every other test file's tracked events go through, each rebalance would pause
 * them all, and once killed it would hold its partitions until its session lapsed (30 s):
 * tests running beside this one would wait that long for their workflows to start. In groups of
 * its own it applies every event a second time, which the engine makes harmless (one execution
 * per workflow and event, one wake per wait).
 */
describe("workflows: two replicas, and a replica killed during a DELAY", () => {
  let project: CreatedProject;
  let key: string;
  let domain: string;
  let replica: ServiceProcess | undefined;
  let flows: ReturnType<typeof workflowBuilder>;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "replicas")).cookie, "Replicas");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "replicas")).domain;
    flows = workflowBuilder(call, key);
    const started = await startService(
      "automation",
      { databaseUrl: stack.databaseUrl, redisUrl, kafkaBrokers },
      undefined,
      {
        CONTACTS_URL: stack.serviceUrls.contacts,
        DELIVERY_URL: stack.serviceUrls.delivery,
        DNS_SERVERS: dnsServer.address,
        DELAY_TIME_SCALE: "0.01",
        WEBHOOK_ALLOWED_ADDRESSES: webhookReceiverAddress,
        // Short leases: a step the killed replica had claimed is taken over within seconds.
        STEP_LEASE_MS: "2000",
        KAFKA_GROUP_PREFIX: `replica-${randomUUID()}.`,
      },
      120_000,
    );
    replica = started.process;
  });
  afterAll(async () => {
    await replica?.stop();
  });

  it("calls each webhook once when its call outlasts a replica's lease, with one Idempotency-Key per execution", async () => {
    // A receiver that answers after 5 s: two and a half of the replica's leases.
    const arrivals: string[] = [];
    const receiver: Server = createServer((request, response) => {
      request.resume();
      arrivals.push(String(request.headers["idempotency-key"]));
      setTimeout(() => response.writeHead(200).end("{}"), 5_000);
    });
    await new Promise<void>((resolve) => receiver.listen(0, webhookReceiverAddress, resolve));
    try {
      const url = `http://${webhookReceiverAddress}:${(receiver.address() as AddressInfo).port}/slow`;
      const workflow = await flows.create({
        eventName: `slow_${randomUUID().slice(0, 8)}`,
        steps: [{ ref: "hook", type: "WEBHOOK", config: { url } }],
        allowReentry: true,
      });
      // Ten at once: each process runs at most five of a project's webhooks (WEBHOOK_PROJECT_CONCURRENCY), so both replicas call.
      const emails = Array.from({ length: 10 }, () => uniqueEmail("slow"));
      for (const email of emails) await call("POST", "/v1/track", { key: project.publicKey, body: { email, event: "exists" } });
      const started = await Promise.all(
        emails.map(
          async (email) => (await call<ExecutionJson>("POST", `/workflows/${workflow.id}/executions`, { key, body: { email } })).body,
        ),
      );
      const done = await Promise.all(started.map((execution) => flows.executionWhen(workflow.id, execution.id, finished, 90_000)));
      expect(done.map((execution) => execution.status)).toEqual(done.map(() => "COMPLETED"));
      expect(done.map((execution) => execution.steps[0]?.attempts)).toEqual(done.map(() => 1));
      expect(arrivals.sort()).toEqual(done.map((execution) => execution.steps[0]?.id).sort());
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  }, 120_000);

  it("sends exactly one email per execution when two replicas share the queue, and survives one being killed mid-DELAY", async () => {
    const workflow = await flows.create({
      eventName: `replicas_${randomUUID().slice(0, 8)}`,
      steps: [
        { ref: "wait", type: "DELAY", config: { amount: 5, unit: "minutes" } },
        { ref: "mail", type: "SEND_EMAIL", config: { from: `hi@${domain}`, subject: "After the delay", body: "<p>Hello {{ email }}</p>" } },
      ],
      allowReentry: true,
    });
    const emails = Array.from({ length: 20 }, () => uniqueEmail("replica"));
    for (const email of emails) await call("POST", "/v1/track", { key: project.publicKey, body: { email, event: "exists" } });
    const started: ExecutionJson[] = [];
    for (const email of emails)
      started.push((await call<ExecutionJson>("POST", `/workflows/${workflow.id}/executions`, { key, body: { email } })).body);
    // Every execution waits on its 3-second timer (5 minutes at DELAY_TIME_SCALE 0.01) in PostgreSQL when the replica dies.
    await replica?.stop("SIGKILL");
    replica = undefined;
    const done = await Promise.all(started.map((execution) => flows.executionWhen(workflow.id, execution.id, finished, 60_000)));
    expect(done.map((execution) => execution.status)).toEqual(done.map(() => "COMPLETED"));
    for (const email of emails) {
      const messages = await sink.waitForMessages(1, { to: email, timeoutMs: 30_000 });
      expect(messages).toHaveLength(1);
    }
    // Each execution ran each of its steps once: one run per step, one email per run.
    for (const execution of done) expect(execution.steps.map((step) => step.stepType)).toEqual(["DELAY", "SEND_EMAIL"]);
  });
});
