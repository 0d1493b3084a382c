import { randomBytes } from "node:crypto";
import {
  createTestDatabase,
  startTestDnsServer,
  startTestSmtpSink,
  type TestDatabase,
  type TestDnsServer,
  type TestSmtpSink,
  waitUntil,
} from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { DomainJson } from "./support/domains.js";
import { createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import { type ReceivedSpan, spanKind, startOtlpReceiver } from "./support/otlp-receiver.js";
import { type PartialStack, startPartialStack } from "./support/partial-stack.js";

/**
 * One /v1/send, followed through OTLP export: the gateway, identity, contacts and delivery of this test export their
 * spans to a test OTLP/HTTP receiver, and the send must make one trace, from the gateway's request through delivery's
 * RPC, its contact upsert in contacts, the email's sending, to the contacts consumer that records its activity.
 */
describe("one /v1/send is one trace, from the gateway to the Kafka consumer that records its activity", () => {
  const herald = inject("herald");
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let database: TestDatabase;
  let dns: TestDnsServer;
  let sink: TestSmtpSink;
  let stack: PartialStack;

  beforeAll(async () => {
    [receiver, database, dns, sink] = await Promise.all([
      startOtlpReceiver(),
      createTestDatabase(herald.databaseUrl),
      startTestDnsServer(),
      startTestSmtpSink(),
    ]);
    stack = await startPartialStack({
      infra: { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      services: ["identity", "contacts", "delivery"],
      elsewhere: herald.stack.serviceUrls,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        // Batches leave every 200 ms instead of every 5 s.
        OTEL_BSP_SCHEDULE_DELAY: "200",
        SMTP_URL: sink.url,
        DNS_SERVERS: dns.address,
        DNS_TIMEOUT_MS: "500",
        PASSWORD_SCRYPT_LOG_N: "14",
      },
    });
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await Promise.all([receiver?.stop(), dns?.stop(), sink?.stop()]);
    await database?.drop();
  });

  it("joins the gateway, delivery, contacts and the activity consumer under the caller's trace id", async () => {
    const call = restClient(stack.gatewayUrl);
    const project = await createProject(call, (await signUp(call, "trace")).cookie, "Trace");
    const domain = `trace-${randomBytes(4).toString("hex")}.herald.test`;
    const created = await call<DomainJson>("POST", "/domains", { key: project.secretKey, body: { domain } });
    expect(created.status).toBe(201);
    const dkim = created.body.records.find((record) => record.purpose === "dkim");
    dns.setTxt(dkim?.name ?? "", [dkim?.value ?? ""]);
    expect((await call<DomainJson>("GET", `/domains/${created.body.id}/verify`, { key: project.secretKey })).body.verified).toBe(true);

    const traceId = randomBytes(16).toString("hex");
    const to = uniqueEmail("traced");
    const sent = await call<{ data: { emails: Array<{ contact: { id: string }; email: string }> } }>("POST", "/v1/send", {
      key: project.secretKey,
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` },
      body: { to, from: `hello@${domain}`, subject: "Traced", body: "<p>Traced</p>" },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const contactId = sent.body.data.emails[0]?.contact.id;
    await waitUntil(async () => sink.messages().some((message) => message.to.includes(to)), { timeoutMs: 30_000 });
    // The activity reached the contact's timeline: the consumer recorded it.
    await waitUntil(
      async () => {
        const events = await call<{ data: Array<{ contactId: string }> }>("GET", "/events?name=email.sent", { key: project.secretKey });
        return events.body.data?.some((event) => event.contactId === contactId) ?? false;
      },
      { timeoutMs: 30_000, describe: () => "email.sent never reached the contact's timeline" },
    );

    const inTrace = () => receiver.spans().filter((span) => span.traceId === traceId);
    const has = (spans: ReceivedSpan[], service: string, kind: number, name?: RegExp) =>
      spans.some((span) => span.service === service && span.kind === kind && (name === undefined || name.test(span.name)));
    // Each process exports in batches of its own: wait for every hop.
    let spans: ReceivedSpan[] = [];
    await waitUntil(
      async () => {
        spans = inTrace();
        return (
          has(spans, "gateway", spanKind.server, /^POST \/v1\/send$/) &&
          has(spans, "delivery", spanKind.server, /^herald\.delivery\.v1\.EmailsService\//) &&
          has(spans, "contacts", spanKind.server, /^herald\.contacts\.v1\./) &&
          has(spans, "delivery", spanKind.client, /^email send$/) &&
          has(spans, "contacts", spanKind.consumer, /^herald\.email-activity\.v1 process$/)
        );
      },
      {
        timeoutMs: 30_000,
        describe: () =>
          `the trace holds:\n${inTrace()
            .map((span) => `${span.service} ${span.kind} ${span.name} ${span.spanId} <- ${span.parentSpanId}`)
            .join("\n")}\nother traces: ${receiver
            .spans()
            .filter((span) => span.traceId !== traceId)
            .map((span) => `${span.service} ${span.kind} ${span.name}`)
            .join("; ")}`,
      },
    );

    // One tree: every span but the gateway's request has its parent in the trace, and that request's parent is the caller's.
    const ids = new Set(spans.map((span) => span.spanId));
    const orphans = spans.filter((span) => !ids.has(span.parentSpanId) && !(span.service === "gateway" && span.kind === spanKind.server));
    expect(orphans.map((span) => `${span.service} ${span.name}`)).toEqual([]);
    // The consumer's span hangs under the email's sending, which hangs under delivery's handling of the send.
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const consumer = spans.find((span) => span.service === "contacts" && span.kind === spanKind.consumer);
    const sending = byId.get(consumer?.parentSpanId ?? "");
    expect(sending?.name).toBe("email send");
    const chain: string[] = [];
    for (let span = sending; span; span = byId.get(span.parentSpanId)) chain.push(`${span.service}:${span.kind}`);
    expect(chain).toContain("delivery:2");
    expect(chain.at(-1)).toBe("gateway:2");
  }, 120_000);
});
