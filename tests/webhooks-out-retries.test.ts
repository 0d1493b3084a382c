import { randomUUID } from "node:crypto";
import { type Client, createClient } from "@connectrpc/connect";
import { createRpcTransport } from "@herald/platform";
import { type Message, WebhooksService } from "@herald/proto/herald/webhooks/v1/webhooks_service_pb";
import { createTestDatabase, freePort, type ServiceProcess, scrape, startService, type TestDatabase, waitUntil } from "@herald/testing";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { accountEmail } from "./support/auth-emails.js";
import { createProject, restClient, signUp } from "./support/http.js";
import { startWebhookReceiver, webhookReceiverAddress } from "./support/webhook-receiver.js";

/**
 * A webhooks process of its own (its own database), so that its deadline and schedule can be short and so that it can
 * be killed: 500, then no answer within the deadline, then 200 is three attempts of one message; a message waiting for
 * its next attempt when the process is killed is delivered by the next process.
 */
describe("outbound webhooks: retries, deadlines and restarts", () => {
  const herald = inject("herald");
  let database: TestDatabase;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let webhooks: ServiceProcess | undefined;
  let client: Client<typeof WebhooksService>;
  let port: number;
  let metricsPort: number;
  const timeoutMs = 1_000;

  const start = async (schedule: string, env: NodeJS.ProcessEnv = {}) => {
    const started = await startService(
      "webhooks",
      { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      port,
      {
        WEBHOOK_ALLOW_HTTP: "true",
        WEBHOOK_ALLOWED_ADDRESSES: webhookReceiverAddress,
        WEBHOOK_TIMEOUT_MS: String(timeoutMs),
        WEBHOOK_RETRY_SCHEDULE: schedule,
        WEBHOOK_POLL_INTERVAL_MS: "100",
        METRICS_PORT: String(metricsPort),
        ...env,
      },
    );
    webhooks = started.process;
    client = createClient(WebhooksService, createRpcTransport({ baseUrl: started.url, timeoutMs: 10_000 }));
  };

  const messageOf = async (projectId: string, endpointId: string, id: string): Promise<Message | undefined> =>
    (await client.listMessages({ projectId, endpointId })).messages.find((message) => message.id === id);

  const millisOf = (message: Message | undefined, index: number) => {
    const at = message?.attempts[index]?.at;
    return at ? Number(at.seconds) * 1000 + at.nanos / 1e6 : Number.NaN;
  };

  beforeAll(async () => {
    database = await createTestDatabase(herald.databaseUrl);
    receiver = await startWebhookReceiver();
    port = await freePort();
    metricsPort = await freePort();
  });

  afterEach(async () => {
    await webhooks?.stop();
    webhooks = undefined;
  });

  afterAll(async () => {
    await receiver?.close();
    await database?.drop();
  });

  it("makes three attempts of one message for a 500, a timeout and a 200, on the schedule, with one webhook-id", async () => {
    await start("0s,1s,2s");
    const projectId = randomUUID();
    receiver.script("/three", [500, "hang"]);
    const { endpoint } = await client.createEndpoint({ projectId, url: receiver.url("/three") });
    const { message: sent } = await client.sendTestMessage({ projectId, endpointId: endpoint?.id ?? "", eventType: "email.bounced" });
    const id = sent?.id ?? "";
    await waitUntil(async () => (await messageOf(projectId, endpoint?.id ?? "", id))?.status === "delivered", { timeoutMs: 30_000 });
    const message = await messageOf(projectId, endpoint?.id ?? "", id);
    expect(message?.attempts.map((attempt) => attempt.statusCode ?? null)).toEqual([500, null, 200]);
    expect(message?.attempts[0]?.response).toBe("answer 500");
    expect(message?.attempts[1]?.error).toBe(`timeout after ${timeoutMs} ms`);
    expect(message?.attempts[2]?.error).toBe("");
    // Attempt n waits the schedule's nth entry (±10 %) after the previous one ended: 1 s, then 2 s after the 1 s deadline.
    expect(millisOf(message, 1) - millisOf(message, 0)).toBeGreaterThanOrEqual(900);
    expect(millisOf(message, 2) - millisOf(message, 1)).toBeGreaterThanOrEqual(timeoutMs + 1_800);
    const requests = receiver.received("/three");
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((request) => request.headers["webhook-id"]))).toEqual(new Set([id]));
    expect(new Set(requests.map((request) => request.body)).size).toBe(1);

    // A process of its own: its counters hold this test's attempts alone.
    const metrics = await scrape(`http://127.0.0.1:${metricsPort}`);
    expect(metrics.value("herald_webhook_attempts_total", { outcome: "http_error" })).toBe(1);
    expect(metrics.value("herald_webhook_attempts_total", { outcome: "timeout" })).toBe(1);
    expect(metrics.value("herald_webhook_attempts_total", { outcome: "success" })).toBe(1);
    expect(metrics.value("herald_webhook_deliveries_total", { outcome: "delivered" })).toBe(1);
    expect(metrics.value("herald_webhook_oldest_pending_seconds")).toBe(0);
  });

  it("fails a message after the schedule's last attempt; a redirect is an attempt that failed, not followed", async () => {
    await start("0s,1s");
    const projectId = randomUUID();
    receiver.script("/spent", [302, 503]);
    const { endpoint } = await client.createEndpoint({ projectId, url: receiver.url("/spent") });
    const { message: sent } = await client.sendTestMessage({ projectId, endpointId: endpoint?.id ?? "", eventType: "email.sent" });
    await waitUntil(async () => (await messageOf(projectId, endpoint?.id ?? "", sent?.id ?? ""))?.status === "failed", {
      timeoutMs: 30_000,
    });
    const message = await messageOf(projectId, endpoint?.id ?? "", sent?.id ?? "");
    expect(message?.attempts.map((attempt) => attempt.statusCode)).toEqual([302, 503]);
    expect(message?.attempts[0]?.error).toBe("redirects are not followed");
    expect(message?.nextAttemptAt).toBeUndefined();
    expect(receiver.received("/spent")).toHaveLength(2);
    expect(receiver.received("/followed")).toHaveLength(0);
  });

  it("delivers after a kill (SIGKILL) a message that was waiting for its next attempt", async () => {
    await start("0s,4s");
    const projectId = randomUUID();
    receiver.script("/restart", [500]);
    const { endpoint } = await client.createEndpoint({ projectId, url: receiver.url("/restart") });
    const endpointId = endpoint?.id ?? "";
    const { message: sent } = await client.sendTestMessage({ projectId, endpointId, eventType: "contact.updated" });
    const id = sent?.id ?? "";
    await waitUntil(async () => (await messageOf(projectId, endpointId, id))?.attempts.length === 1, { timeoutMs: 30_000 });
    const killed = webhooks;
    await killed?.stop("SIGKILL");
    expect(receiver.received("/restart")).toHaveLength(1);

    await start("0s,4s");
    expect(webhooks?.pid).not.toBe(killed?.pid);
    await waitUntil(async () => (await messageOf(projectId, endpointId, id))?.status === "delivered", { timeoutMs: 60_000 });
    const message = await messageOf(projectId, endpointId, id);
    expect(message?.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 200]);
    const requests = receiver.received("/restart");
    expect(requests).toHaveLength(2);
    expect(requests.map((request) => request.headers["webhook-id"])).toEqual([id, id]);
  });

  it("disables an endpoint that failed every attempt for WEBHOOK_DISABLE_AFTER_MS, and mails the project's admins", async () => {
    // Identity and delivery of the shared stack: the admins are found through identity and mailed through delivery.
    await start("0s,1s,1s,1s,1s,1s", {
      WEBHOOK_DISABLE_AFTER_MS: "1000",
      IDENTITY_URL: herald.stack.serviceUrls.identity,
      DELIVERY_URL: herald.stack.serviceUrls.delivery,
    });
    const call = restClient(herald.stack.gatewayUrl);
    const owner = await signUp(call, "hooks-disabled");
    const project = await createProject(call, owner.cookie, "Failing hooks");
    receiver.script(
      "/failing",
      Array.from({ length: 10 }, () => 500),
    );
    // Created as the secret key creates one, with no dashboard user behind it: identity still names the admins.
    const { endpoint } = await client.createEndpoint({ projectId: project.id, url: receiver.url("/failing") });
    const endpointId = endpoint?.id ?? "";
    await client.sendTestMessage({ projectId: project.id, endpointId, eventType: "email.failed" });
    await waitUntil(async () => (await client.getEndpoint({ projectId: project.id, id: endpointId })).endpoint?.enabled === false, {
      timeoutMs: 30_000,
    });
    const disabled = (await client.getEndpoint({ projectId: project.id, id: endpointId })).endpoint;
    expect(disabled).toMatchObject({ enabled: false, disabledReason: "failing" });
    expect(disabled?.failingSince).toBeDefined();
    const mail = await accountEmail(owner.email, "webhook_disabled");
    expect(mail.text).toContain(receiver.url("/failing"));

    // A disabled endpoint takes no test events; enabling it clears why it was disabled.
    await expect(client.sendTestMessage({ projectId: project.id, endpointId, eventType: "email.sent" })).rejects.toThrow(/disabled/);
    const enabled = (await client.updateEndpoint({ projectId: project.id, id: endpointId, enabled: true })).endpoint;
    expect(enabled).toMatchObject({ enabled: true, disabledReason: "" });
    expect(enabled?.failingSince).toBeUndefined();
  });

  it("gives a hanging endpoint no more than its own places: another endpoint's message goes out meanwhile", async () => {
    // Calls hang for up to a minute; each endpoint may have 2 in flight, the process 4.
    await start("0s", { WEBHOOK_TIMEOUT_MS: "60000", WEBHOOK_ENDPOINT_CONCURRENCY: "2", WEBHOOK_CONCURRENCY: "4" });
    const hanging = await startWebhookReceiver();
    try {
      const projectId = randomUUID();
      hanging.script(
        "/slow",
        Array.from({ length: 10 }, () => "hang" as const),
      );
      const { endpoint: slow } = await client.createEndpoint({ projectId, url: hanging.url("/slow") });
      for (let index = 0; index < 10; index++) {
        await client.sendTestMessage({ projectId, endpointId: slow?.id ?? "", eventType: "email.opened" });
      }
      await waitUntil(async () => hanging.received("/slow").length === 2, { timeoutMs: 30_000 });
      const otherProjectId = randomUUID();
      const { endpoint: healthy } = await client.createEndpoint({ projectId: otherProjectId, url: receiver.url("/healthy") });
      await client.sendTestMessage({ projectId: otherProjectId, endpointId: healthy?.id ?? "", eventType: "email.sent" });
      await waitUntil(async () => receiver.received("/healthy").length === 1, { timeoutMs: 30_000 });
      // The slow endpoint still holds only its two places, its other eight messages waiting their turn.
      expect(hanging.received("/slow")).toHaveLength(2);
      const waiting = await client.listMessages({ projectId, endpointId: slow?.id ?? "", status: "pending" });
      expect(waiting.total).toBe(8n);
    } finally {
      await hanging.close();
    }
  });
});
