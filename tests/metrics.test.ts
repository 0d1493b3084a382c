import { randomUUID } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createRpcTransport } from "@herald/platform";
import { DomainsService } from "@herald/proto/herald/delivery/v1/domains_service_pb";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { ProjectService } from "@herald/proto/herald/identity/v1/project_service_pb";
import {
  createTestDatabase,
  freePort,
  producerNames,
  type Scrape,
  type ServiceProcess,
  scrape,
  serviceNames,
  startService,
  startTestDnsServer,
  type TestDatabase,
  type TestDnsServer,
  testDnsClient,
  testSmtpSinkClient,
  waitUntil,
} from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import { finished, workflowBuilder } from "./support/workflows.js";

const herald = inject("herald");
const { stack } = herald;
const call = restClient(stack.gatewayUrl);
const processes = [...serviceNames, "gateway"] as const;

/** Scrapes until the check holds, for counters other requests of the run also move and gauges read in the background. */
async function scrapeUntil(url: string, check: (scraped: Scrape) => boolean, what: string): Promise<Scrape> {
  let last: Scrape | undefined;
  await waitUntil(
    async () => {
      last = await scrape(url);
      return check(last);
    },
    {
      timeoutMs: 30_000,
      describe: () =>
        `${what}:\n${
          last?.text
            .split("\n")
            .filter((line) => !line.startsWith("#"))
            .join("\n") ?? ""
        }`,
    },
  );
  return last as Scrape;
}

describe("Prometheus metrics of every process (METRICS_PORT)", () => {
  let project: CreatedProject;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "metrics")).cookie, "Metrics");
  });

  it.each(processes)("%s serves GET /metrics over HTTP/1.1 with the process and Node.js series, and nothing else", async (name) => {
    const response = await fetch(`${stack.metricsUrls[name]}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    for (const series of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds"]) {
      expect(text, series).toContain(`# TYPE ${series} `);
    }
    expect((await fetch(`${stack.metricsUrls[name]}/`)).status).toBe(404);
  });

  it("the gateway counts requests per route pattern, never per raw URL", async () => {
    const id = randomUUID();
    const labels = { method: "GET", route: "/contacts/:id", status_code: "404" };
    const before = await scrape(stack.metricsUrls.gateway);
    expect((await call("GET", `/contacts/${id}`, { key: project.secretKey })).status).toBe(404);
    expect((await call("GET", `/no-such-route/${id}`, { key: project.secretKey })).status).toBe(404);
    const after = await scrapeUntil(
      stack.metricsUrls.gateway,
      (scraped) =>
        (scraped.value("http_server_requests_total", labels) ?? 0) >= (before.value("http_server_requests_total", labels) ?? 0) + 1,
      "GET /contacts/:id was not counted",
    );
    expect(after.value("http_server_requests_total", { route: "unmatched", status_code: "404" })).toBeGreaterThanOrEqual(1);
    expect(after.value("http_server_request_duration_seconds_count", { method: "GET", route: "/contacts/:id" })).toBeGreaterThanOrEqual(1);
    expect(after.value("http_server_request_duration_seconds_bucket", { route: "/contacts/:id", le: "+Inf" })).toBeGreaterThanOrEqual(1);
    // Neither the id nor the unmatched path names a series.
    expect(after.text).not.toContain(id);
    expect(after.text).not.toContain("no-such-route");
  }, 60_000);

  it("every service counts its RPCs by method and outcome, those refused for their token included", async () => {
    const health = { grpc_service: "grpc.health.v1.Health", grpc_method: "Check", grpc_code: "OK" };
    const before = await Promise.all(serviceNames.map((name) => scrape(stack.metricsUrls[name])));
    // The gateway's /health asks every service's Check.
    expect((await fetch(`${stack.gatewayUrl}/health`)).status).toBe(200);
    for (const [index, name] of serviceNames.entries()) {
      const after = await scrapeUntil(
        stack.metricsUrls[name],
        (scraped) =>
          (scraped.value("grpc_server_handled_total", health) ?? 0) > (before[index]?.value("grpc_server_handled_total", health) ?? 0),
        `${name} did not count the health check`,
      );
      expect(
        after.value("grpc_server_handling_seconds_count", { grpc_service: "grpc.health.v1.Health", grpc_method: "Check" }),
      ).toBeGreaterThan(0);
    }

    // A NotFound from contacts, through the gateway.
    const notFound = { grpc_service: "herald.contacts.v1.ContactsService", grpc_method: "GetContact", grpc_code: "NotFound" };
    const contactsBefore = (await scrape(stack.metricsUrls.contacts)).value("grpc_server_handled_total", notFound) ?? 0;
    expect((await call("GET", `/contacts/${randomUUID()}`, { key: project.secretKey })).status).toBe(404);
    await scrapeUntil(
      stack.metricsUrls.contacts,
      (scraped) => (scraped.value("grpc_server_handled_total", notFound) ?? 0) > contactsBefore,
      "contacts did not count GetContact NotFound",
    );

    // A caller without INTERNAL_RPC_TOKEN.
    const refused = { grpc_service: "herald.identity.v1.ProjectService", grpc_method: "ResolveApiKey", grpc_code: "Unauthenticated" };
    const identityBefore = (await scrape(stack.metricsUrls.identity)).value("grpc_server_handled_total", refused) ?? 0;
    const anonymous = createClient(ProjectService, createGrpcTransport({ baseUrl: stack.serviceUrls.identity }));
    await expect(anonymous.resolveApiKey({ key: "sk_nothing" })).rejects.toSatisfy(
      (error) => error instanceof ConnectError && error.code === Code.Unauthenticated,
    );
    await scrapeUntil(
      stack.metricsUrls.identity,
      (scraped) => (scraped.value("grpc_server_handled_total", refused) ?? 0) > identityBefore,
      "identity did not count the refused call",
    );
  }, 90_000);

  it("contacts and delivery report how far ahead their time partitions reach and what their default partitions hold", async () => {
    for (const [service, table] of [
      ["contacts", "events"],
      ["delivery", "email_activity"],
    ] as const) {
      const labels = { schema: service, table };
      const scraped = await scrapeUntil(
        stack.metricsUrls[service],
        (current) =>
          current.value("herald_time_partition_months_ahead", labels) !== undefined &&
          current.value("herald_time_partition_default_rows", labels) !== undefined,
        `${service} reported no time partitions`,
      );
      // The maintenance on start keeps the current month and two ahead.
      expect(scraped.value("herald_time_partition_months_ahead", labels)).toBe(2);
      expect(scraped.value("herald_time_partition_default_rows", labels)).toBeGreaterThanOrEqual(0);
    }
  });

  it("every service that publishes reports its outbox backlog, and every service its consumer groups' lag", async () => {
    const prefix = `${new URL(stack.databaseUrl).pathname.slice(1)}.`;
    for (const name of producerNames) {
      const scraped = await scrapeUntil(
        stack.metricsUrls[name],
        (current) =>
          current.value("herald_outbox_events", { schema: name }) !== undefined &&
          current.value("herald_outbox_oldest_event_age_seconds", { schema: name }) !== undefined,
        `${name} reported no outbox backlog`,
      );
      expect(scraped.value("herald_outbox_events", { schema: name })).toBeGreaterThanOrEqual(0);
    }
    for (const name of serviceNames) {
      await scrapeUntil(
        stack.metricsUrls[name],
        (current) => current.declares("herald_kafka_consumer_lag"),
        `${name} declared no consumer lag`,
      );
    }
    // The project created above went through herald.project-lifecycle.v1 to delivery's and contacts' groups, which committed.
    for (const [service, group] of [
      ["delivery", `${prefix}delivery.project-lifecycle`],
      ["contacts", `${prefix}contacts.project-lifecycle`],
    ] as const) {
      const scraped = await scrapeUntil(
        stack.metricsUrls[service],
        (current) => current.value("herald_kafka_consumer_lag", { group, topic: "herald.project-lifecycle.v1" }) !== undefined,
        `${service} reported no lag for ${group}`,
      );
      expect(scraped.value("herald_kafka_consumer_lag", { group })).toBeGreaterThanOrEqual(0);
    }
  }, 90_000);

  it("automation reports its timers, due and scheduled, and counts those it fired", async () => {
    const flows = workflowBuilder(call, project.secretKey);
    const workflow = await flows.create({
      eventName: `metrics_${randomUUID().slice(0, 8)}`,
      steps: [
        // The stack scales time by DELAY_TIME_SCALE=0.01: the timer fires 0.6 s after the step is reached.
        { ref: "wait", type: "DELAY", config: { amount: 1, unit: "minutes" } },
        { ref: "done", type: "EXIT", config: { reason: "waited" } },
      ],
    });
    const before = await scrape(stack.metricsUrls.automation);
    expect(before.value("herald_workflow_timers", { state: "due" })).toBeGreaterThanOrEqual(0);
    expect(before.value("herald_workflow_timers", { state: "scheduled" })).toBeGreaterThanOrEqual(0);
    const firedBefore = before.value("herald_workflow_timers_fired_total") ?? 0;
    const email = `timer-${randomUUID().slice(0, 8)}@example.com`;
    expect((await call("POST", "/contacts", { key: project.secretKey, body: { email } })).status).toBe(201);
    const started = await call<{ id: string }>("POST", `/workflows/${workflow.id}/executions`, { key: project.secretKey, body: { email } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const done = await flows.executionWhen(workflow.id, started.body.id, finished);
    expect(done.status).toBe("EXITED");
    await scrapeUntil(
      stack.metricsUrls.automation,
      (scraped) => (scraped.value("herald_workflow_timers_fired_total") ?? 0) >= firedBefore + 1,
      "automation did not count the fired timer",
    );
  }, 90_000);

  it("delivery counts the emails its dispatcher sent", async () => {
    const { domain } = await verifiedDomain(call, testDnsClient(herald.dns.controlUrl), project.secretKey, "metrics");
    const sent = { outcome: "sent" };
    const before = (await scrape(stack.metricsUrls.delivery)).value("herald_email_dispatches_total", sent) ?? 0;
    const to = `counted-${randomUUID().slice(0, 8)}@example.com`;
    const answer = await call("POST", "/v1/send", {
      key: project.secretKey,
      body: { to, from: `hello@${domain}`, subject: "Counted", body: "<p>Counted</p>" },
    });
    expect(answer.status).toBe(200);
    await testSmtpSinkClient(herald.smtp.controlUrl).waitForMessages(1, { to, timeoutMs: 30_000 });
    await scrapeUntil(
      stack.metricsUrls.delivery,
      (scraped) => (scraped.value("herald_email_dispatches_total", sent) ?? 0) >= before + 1,
      "delivery did not count the sent email",
    );
  }, 90_000);
});

/**
 * Delivery's queue, on a delivery of its own without SMTP_URL: what it is given stays PENDING, so the gauges show
 * exactly the emails this test enqueued (the shared stack's sends leave at once, and other tests' come and go).
 */
describe("delivery's send-queue metrics", () => {
  let database: TestDatabase;
  let dns: TestDnsServer;
  let delivery: ServiceProcess | undefined;
  let url: string;
  let metricsUrl: string;

  beforeAll(async () => {
    const metricsPort = await freePort();
    [database, dns] = await Promise.all([createTestDatabase(herald.databaseUrl), startTestDnsServer()]);
    const started = await startService(
      "delivery",
      { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      undefined,
      { DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: "500", SMTP_URL: "", METRICS_PORT: String(metricsPort) },
    );
    delivery = started.process;
    url = started.url;
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
  });

  afterAll(async () => {
    await delivery?.stop();
    await dns?.stop();
    await database?.drop();
  });

  it("counts the due emails and the age of the oldest", async () => {
    const empty = await scrape(metricsUrl);
    expect(empty.value("herald_email_queue_depth", { state: "due" })).toBe(0);
    expect(empty.value("herald_email_queue_oldest_due_age_seconds")).toBe(0);
    expect(empty.value("herald_render_tasks_waiting")).toBe(0);

    const transport = createRpcTransport({ baseUrl: url, timeoutMs: 30_000 });
    const domains = createClient(DomainsService, transport);
    const projectId = randomUUID();
    const created = await domains.createDomain({ projectId, domain: `queue-${randomUUID().slice(0, 8)}.herald.test` });
    const dkim = created.domain?.records.find((record) => record.name.includes("._domainkey."));
    if (!created.domain || !dkim) throw new Error("the domain has no DKIM record");
    dns.setTxt(dkim.name, [dkim.value]);
    expect((await domains.verifyDomain({ projectId, id: created.domain.id })).domain?.verified).toBe(true);
    const emails = createClient(EmailsService, transport);
    for (const index of [1, 2, 3]) {
      await emails.enqueueEmail({
        projectId,
        to: { email: `r${index}@queue.example`, name: "" },
        from: { email: `hello@${created.domain.domain}`, name: "" },
        subject: `Queued ${index}`,
        html: `<p>Queued ${index}</p>`,
      });
    }
    const scraped = await scrapeUntil(
      metricsUrl,
      (current) =>
        current.value("herald_email_queue_depth", { state: "due" }) === 3 &&
        (current.value("herald_email_queue_oldest_due_age_seconds") ?? 0) > 0,
      "the queue gauges did not show the three due emails",
    );
    expect(scraped.value("herald_email_queue_depth", { state: "sending" })).toBe(0);
    expect(scraped.value("herald_email_queue_depth", { state: "scheduled" })).toBe(0);
    // Counted on delivery's EmailsService too.
    expect(
      scraped.value("grpc_server_handled_total", {
        grpc_service: "herald.delivery.v1.EmailsService",
        grpc_method: "EnqueueEmail",
        grpc_code: "OK",
      }),
    ).toBe(3);
  }, 90_000);
});
