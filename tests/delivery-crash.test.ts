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
 * A delivery process of its own (its own database, SMTP sink and DNS server), stopped in the
 * middle of a burst and started again: by SIGTERM, as Kubernetes stops a pod in a rollout, and
 * by SIGKILL, what a crash of a real pod does.
 */
describe("delivery stopped in the middle of a 2,000-email burst", () => {
  const herald = inject("herald");
  let database: TestDatabase;
  let sink: TestSmtpSink;
  let dns: TestDnsServer;
  let delivery: ServiceProcess | undefined;
  let url: string;
  let port: number;

  /** After a kill, Kafka holds the dead process's consumer-group membership until its session lapses (30 s). */
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
        // Crash safety, not destination limits (their own tests are in emails/lanes.test.ts): the whole burst goes to one domain.
        SEND_DESTINATIONS: '{"default": {"concurrency": 10000, "ratePerSecond": 1000000}}',
        // A killed process's claims lapse after the lease: shorter than the default two minutes, and no longer than the
        // 30 s a restart after a kill waits for Kafka anyway. Not much shorter: a send the sink is slow to accept on a
        // loaded machine (a CI run's load average reaches 30) times out and is retried, or outlives its lease and is
        // claimed again, and both send it twice, as they would in production with a relay that slow.
        SEND_LEASE_MS: "20000",
        SEND_TIMEOUT_MS: "10000",
        SEND_RETRY_BASE_MS: "200",
        SEND_RETRY_MAX_MS: "1000",
      },
      timeoutMs,
    );
    delivery = started.process;
    url = started.url;
  };

  const transport = () => createRpcTransport({ baseUrl: url, timeoutMs: 30_000 });

  /** A new project with a verified sending domain; its burst goes to recipients at `<run>.example`. */
  async function enqueueBurst(run: string): Promise<{ projectId: string; ids: string[] }> {
    const domains: Client<typeof DomainsService> = createClient(DomainsService, transport());
    const projectId = randomUUID();
    const created = await domains.createDomain({ projectId, domain: `${run}-${randomUUID().slice(0, 8)}.herald.test` });
    const dkim = created.domain?.records.find((record) => record.name.includes("._domainkey."));
    if (!created.domain || !dkim) throw new Error("the domain has no DKIM record");
    dns.setTxt(dkim.name, [dkim.value]);
    expect((await domains.verifyDomain({ projectId, id: created.domain.id })).domain?.verified).toBe(true);

    const emails = createClient(EmailsService, transport());
    const ids: string[] = [];
    for (let first = 0; first < burst; first += 100) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, offset) =>
          emails.enqueueEmail({
            projectId,
            idempotencyKey: `${run}-${first + offset}`,
            to: { email: `r${first + offset}@${run}.example`, name: "" },
            from: { email: `hello@${created.domain?.domain}`, name: "" },
            subject: `Email ${first + offset}`,
            html: `<p>Email ${first + offset}</p>`,
          }),
        ),
      );
      ids.push(...answers.map((answer) => answer.emailId));
    }
    return { projectId, ids };
  }

  /** The messages of the burst to `<run>.example`, by recipient, each as the Message-IDs of its copies. */
  function copiesByRecipient(run: string): Map<string, string[]> {
    const byRecipient = new Map<string, string[]>();
    for (const message of sink.messages()) {
      const recipient = message.to[0] ?? "";
      if (!recipient.endsWith(`@${run}.example`)) continue;
      const messageId = /^Message-ID:\s*(\S+)/im.exec(message.raw)?.[1] ?? "";
      byRecipient.set(recipient, [...(byRecipient.get(recipient) ?? []), messageId]);
    }
    return byRecipient;
  }

  /** Stops delivery once a quarter of the burst arrived, starts it again, and waits for every recipient. */
  async function stopMidBurstAndRestart(run: string, signal: NodeJS.Signals, restartTimeoutMs?: number): Promise<number> {
    await waitUntil(async () => copiesByRecipient(run).size >= burst / 4, { timeoutMs: 60_000, describe: () => "the burst did not start" });
    const stopping = Date.now();
    const exitCode = await delivery?.stop(signal);
    const slowSteps = (delivery?.output() ?? "").split("\n").filter((line) => line.includes("shutdown step was slow"));
    console.log(`${signal}: delivery ended ${Date.now() - stopping} ms after the signal`, ...slowSteps);
    const arrivedAtStop = copiesByRecipient(run).size;
    expect(arrivedAtStop).toBeLessThan(burst);
    if (signal === "SIGTERM") expect(exitCode).toBe(0);

    await start(restartTimeoutMs);
    await waitUntil(async () => copiesByRecipient(run).size >= burst, {
      timeoutMs: 120_000,
      describe: () => `${copiesByRecipient(run).size} of ${burst} recipients reached`,
    });
    return arrivedAtStop;
  }

  /**
   * Asks for the burst's statuses a hundred at a time: the 2,000 at once, each with the transport's 30 s deadline
   * from its start, once outlasted it on a loaded CI machine while a restarted process caught up.
   */
  async function expectAllSent(projectId: string, ids: string[]): Promise<void> {
    const emails = createClient(EmailsService, transport());
    const unsent: string[] = [];
    for (let first = 0; first < ids.length; first += 100) {
      const answers = await Promise.all(ids.slice(first, first + 100).map((id) => emails.getEmail({ projectId, id })));
      for (const answer of answers) if (answer.email?.status !== EmailStatus.SENT) unsent.push(answer.email?.id ?? "");
    }
    expect(unsent).toEqual([]);
  }

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

  it("sends every accepted email exactly once across a graceful restart (SIGTERM)", async () => {
    const { projectId, ids } = await enqueueBurst("rollout");
    const arrivedAtStop = await stopMidBurstAndRestart("rollout", "SIGTERM");
    await expectAllSent(projectId, ids);

    // The stopping process finished the sends it had begun and recorded them: nothing is sent twice.
    const copies = [...copiesByRecipient("rollout").values()];
    expect(copies.length).toBe(burst);
    expect(copies.filter((messageIds) => messageIds.length > 1)).toEqual([]);
    console.log(`graceful restart: ${arrivedAtStop} sent before SIGTERM, 0 duplicates`);
  }, 240_000);

  it("sends every accepted email after a kill (SIGKILL), duplicating at most those in flight, each copy with the same Message-ID", async () => {
    const { projectId, ids } = await enqueueBurst("crash");
    const arrivedAtKill = await stopMidBurstAndRestart("crash", "SIGKILL", 90_000);
    await expectAllSent(projectId, ids);

    // Every recipient got its email; a second copy happens only for a send the kill cut between
    // the relay's acceptance and its record, and carries the first one's Message-ID.
    const copies = [...copiesByRecipient("crash").values()];
    expect(copies.length).toBe(burst);
    for (const messageIds of copies) expect(new Set(messageIds).size).toBe(1);
    const duplicates = copies.reduce((sum, messageIds) => sum + messageIds.length - 1, 0);
    expect(duplicates).toBeLessThanOrEqual(concurrency);
    console.log(`crash test: ${arrivedAtKill} sent before the kill, ${duplicates} duplicates (at most ${concurrency} in flight)`);
  }, 240_000);
});
