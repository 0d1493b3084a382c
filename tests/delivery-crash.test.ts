import { randomUUID } from "node:crypto";
import { type Client, createClient } from "@connectrpc/connect";
import { createRpcTransport } from "@herald/platform";
import { DomainsService } from "@herald/proto/herald/delivery/v1/domains_service_pb";
import { EmailStatus, EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import {
  createTestDatabase,
  freePort,
  type ServiceProcess,
  startService,
  startTestDnsServer,
  startTestSmtpSink,
  type TestDatabase,
  type TestDnsServer,
  type TestSmtpSink,
  waitUntil,
} from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const burst = 2_000;
const concurrency = 20;

/**
 * A delivery process of its own (its own database, SMTP sink and DNS server), killed with
 * SIGKILL in the middle of a burst and started again: what a crash of a real pod does.
 */
describe("delivery killed in the middle of a 2,000-email burst", () => {
  const herald = inject("herald");
  let database: TestDatabase;
  let sink: TestSmtpSink;
  let dns: TestDnsServer;
  let delivery: ServiceProcess | undefined;
  let url: string;
  let port: number;

  /** After the kill, Kafka holds the dead process's consumer-group membership until its session lapses (30 s). */
  const start = async (timeoutMs?: number) => {
    const started = await startService(
      "delivery",
      { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      port,
      {
        SMTP_URL: sink.url,
        DNS_SERVERS: dns.address,
        DNS_TIMEOUT_MS: "500",
        SEND_CONCURRENCY: String(concurrency),
        // A killed process's claims lapse after the lease: short here so that the test does not wait two minutes.
        SEND_LEASE_MS: "4000",
        SEND_TIMEOUT_MS: "2000",
        SEND_RETRY_BASE_MS: "200",
        SEND_RETRY_MAX_MS: "1000",
      },
      timeoutMs,
    );
    delivery = started.process;
    url = started.url;
  };

  beforeAll(async () => {
    [database, sink, dns, port] = await Promise.all([
      createTestDatabase(herald.databaseUrl),
      startTestSmtpSink(),
      startTestDnsServer(),
      freePort(),
    ]);
    await start();
  });

  afterAll(async () => {
    await delivery?.stop();
    await Promise.all([sink?.stop(), dns?.stop()]);
    await database?.drop();
  });

  it("sends every accepted email, duplicating at most those in flight at the kill, each copy with the same Message-ID", async () => {
    const transport = () => createRpcTransport({ baseUrl: url, timeoutMs: 30_000 });
    const domains: Client<typeof DomainsService> = createClient(DomainsService, transport());
    const projectId = randomUUID();
    const created = await domains.createDomain({ projectId, domain: `crash-${randomUUID().slice(0, 8)}.herald.test` });
    const dkim = created.domain?.records.find((record) => record.name.includes("._domainkey."));
    if (!created.domain || !dkim) throw new Error("the domain has no DKIM record");
    dns.setTxt(dkim.name, [dkim.value]);
    expect((await domains.verifyDomain({ projectId, id: created.domain.id })).domain?.verified).toBe(true);

    const emails = createClient(EmailsService, transport());
    const ids: string[] = [];
    for (let start = 0; start < burst; start += 100) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, offset) =>
          emails.enqueueEmail({
            projectId,
            idempotencyKey: `crash-${start + offset}`,
            to: { email: `r${start + offset}@crash.example`, name: "" },
            from: { email: `hello@${created.domain?.domain}`, name: "" },
            subject: `Email ${start + offset}`,
            html: `<p>Email ${start + offset}</p>`,
          }),
        ),
      );
      ids.push(...answers.map((answer) => answer.emailId));
    }

    // Kill it mid-burst, without any chance to finish what it holds.
    await waitUntil(async () => sink.messages().length >= burst / 4, { timeoutMs: 60_000, describe: () => "the burst did not start" });
    await delivery?.stop("SIGKILL");
    const arrivedAtKill = sink.messages().length;
    expect(arrivedAtKill).toBeLessThan(burst);

    await start(90_000);
    await waitUntil(async () => new Set(sink.messages().map((message) => message.to[0])).size >= burst, {
      timeoutMs: 120_000,
      describe: () => `${new Set(sink.messages().map((message) => message.to[0])).size} of ${burst} recipients reached`,
    });

    const restarted = createClient(EmailsService, transport());
    const statuses = await Promise.all(ids.map((id) => restarted.getEmail({ projectId, id })));
    expect(statuses.filter((answer) => answer.email?.status !== EmailStatus.SENT)).toEqual([]);

    // Every recipient got its email; a second copy happens only for a send the kill cut between
    // the relay's acceptance and its record, and carries the first one's Message-ID.
    const messages = sink.messages();
    const byRecipient = new Map<string, string[]>();
    for (const message of messages) {
      const messageId = /^Message-ID:\s*(\S+)/im.exec(message.raw)?.[1] ?? "";
      byRecipient.set(message.to[0] ?? "", [...(byRecipient.get(message.to[0] ?? "") ?? []), messageId]);
    }
    expect(byRecipient.size).toBe(burst);
    const duplicated = [...byRecipient.values()].filter((copies) => copies.length > 1);
    for (const copies of duplicated) expect(new Set(copies).size).toBe(1);
    expect(messages.length - burst).toBeLessThanOrEqual(concurrency);
    console.log(
      `crash test: ${arrivedAtKill} sent before the kill, ${messages.length - burst} duplicates (at most ${concurrency} in flight)`,
    );
  }, 240_000);
});
