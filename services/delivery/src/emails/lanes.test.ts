import { randomUUID } from "node:crypto";
import { EmailKind, EmailStatus } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { startTestDnsServer, type TestDnsServer } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { DestinationTable } from "../domain/destinations.js";
import { createResolver } from "../sending-domains/txt-lookup.js";
import { type DeliveryHarness, eventually, newProjectId, startDelivery, type VerifiedDomain } from "../test-support/delivery-harness.js";
import { createMailExchangeLookup } from "../verification/mail-exchange.js";
import { createDestinations, type Destinations } from "./destinations.js";
import type { Dispatcher } from "./dispatcher.js";

let harness: DeliveryHarness;
let dns: TestDnsServer;

beforeAll(async () => {
  [harness, dns] = await Promise.all([startDelivery(inject("herald")), startTestDnsServer()]);
});

afterAll(async () => {
  await harness?.stop();
  await dns?.stop();
});

interface Sender {
  projectId: string;
  domain: VerifiedDomain;
}

async function newSender(): Promise<Sender> {
  const projectId = newProjectId();
  return { projectId, domain: await harness.addDomain(projectId) };
}

/** Enqueues emails of one project to these addresses, in batches of at most 1,000 (EnqueueEmails). */
async function enqueue(sender: Sender, recipients: readonly string[], kind: EmailKind): Promise<string[]> {
  const ids: string[] = [];
  for (let first = 0; first < recipients.length; first += 1_000) {
    const { emails } = await harness.emails.enqueueEmails({
      emails: recipients.slice(first, first + 1_000).map((to) => ({
        projectId: sender.projectId,
        to: { email: to, name: "" },
        from: { email: `news@${sender.domain.domain}`, name: "Example" },
        subject: "Hello",
        html: "<p>Hello</p>",
        kind,
        ...(kind === EmailKind.CAMPAIGN ? { campaignId: randomUUID() } : {}),
      })),
    });
    ids.push(...emails.map((email) => email.emailId));
  }
  return ids;
}

const addresses = (label: string, domain: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${label}-${index}-${randomUUID().slice(0, 8)}@${domain}`);

const delivered = (recipients: readonly string[]) => recipients.filter((to) => harness.sink.messages(to).length > 0).length;

async function emailOf(projectId: string, id: string) {
  const { email } = await harness.emails.getEmail({ projectId, id });
  if (!email) throw new Error(`no email ${id}`);
  return email;
}

/** Destinations whose MX come from the test DNS server. */
function destinationsOf(table: DestinationTable, backoffMs: number): Destinations {
  const resolver = createResolver({ servers: [dns.address], timeoutMs: 2_000, tries: 2 });
  return createDestinations({ table, lookupMx: createMailExchangeLookup(resolver), backoffMs, mxCacheMs: 60_000 });
}

/** Stops the dispatcher and forgets what it left unsent, so that the next test starts on an empty queue. */
async function finish(dispatcher: Dispatcher): Promise<void> {
  await dispatcher.stop();
  await harness.db.email.deleteMany({ where: { status: { in: ["PENDING", "SENDING"] } } });
}

describe("lanes", () => {
  it("sends a transactional email enqueued behind 1,000 due campaign emails before the campaign is through", async () => {
    const [campaigner, other] = await Promise.all([newSender(), newSender()]);
    const campaign = addresses("campaign", "lanes.example", 1_000);
    await enqueue(campaigner, campaign, EmailKind.CAMPAIGN);
    // 50 emails a second: the campaign takes 25 s or more to drain (bulk mail gets 80 % of the rate).
    const dispatcher = harness.startDispatcher({ ratePerSecond: 50, concurrency: 10 });
    try {
      await eventually(async () => delivered(campaign) >= 10);
      const [to] = addresses("receipt", "lanes.example", 1);
      const [id] = await enqueue(other, [to ?? ""], EmailKind.TRANSACTIONAL);
      await eventually(async () => (await emailOf(other.projectId, id ?? "")).status === EmailStatus.SENT);
      // In one line, it would have waited for the whole campaign.
      expect(delivered(campaign)).toBeLessThan(600);
      expect(harness.sink.messages(to)).toHaveLength(1);
    } finally {
      await finish(dispatcher);
    }
  });

  it("shares the bulk lane between projects: a small campaign enqueued behind a large one is through long before it", async () => {
    const [large, small] = await Promise.all([newSender(), newSender()]);
    const largeRecipients = addresses("large", "share.example", 800);
    const smallRecipients = addresses("small", "share.example", 80);
    await enqueue(large, largeRecipients, EmailKind.CAMPAIGN);
    await enqueue(small, smallRecipients, EmailKind.CAMPAIGN);
    const dispatcher = harness.startDispatcher({ ratePerSecond: 50, concurrency: 10 });
    try {
      await eventually(async () => delivered(smallRecipients) === smallRecipients.length, 60_000);
      // In turns, the large campaign sent about as many as the small one meanwhile; in one line, all of its 800 first.
      expect(delivered(largeRecipients)).toBeLessThan(400);
    } finally {
      await finish(dispatcher);
    }
  });
});

describe("destinations", () => {
  it("backs off only the destination that answered 421: mail to another domain keeps flowing, and the held mail goes later, once", async () => {
    const sender = await newSender();
    const [slowDomain, fastDomain] = [`slow-${randomUUID().slice(0, 8)}.example`, `fast-${randomUUID().slice(0, 8)}.example`];
    dns.setMx(slowDomain, [{ priority: 10, exchange: "mx1.slowmail.test" }]);
    dns.setMx(fastDomain, [{ priority: 10, exchange: "mx.fastmail.test" }]);
    const slow = addresses("slow", slowDomain, 4);
    const fast = addresses("fast", fastDomain, 20);
    for (const to of slow) harness.sink.rejectRecipient(to, { code: 421, message: "4.7.0 Try again later, closing connection" });
    const slowIds = await enqueue(sender, slow, EmailKind.TRANSACTIONAL);
    await enqueue(sender, fast, EmailKind.TRANSACTIONAL);

    const destinations = destinationsOf(
      {
        groups: { slowmail: { mx: ["*.slowmail.test"], concurrency: 1, ratePerSecond: 1_000 } },
        default: { concurrency: 100, ratePerSecond: 10_000 },
      },
      60_000,
    );
    const dispatcher = harness.startDispatcher({ destinations });
    try {
      await eventually(async () => delivered(fast) === fast.length);
      // One send to the slow destination at a time, and after its 421 none: the other three were held back untried.
      // Counted at the sink: an email's attempts also count a claim that is put back a moment later (releaseEmails).
      const refusals = () => slow.reduce((sum, to) => sum + harness.sink.refusals(to), 0);
      const withError = async () =>
        (await Promise.all(slowIds.map((id) => emailOf(sender.projectId, id)))).filter((email) => email.lastError);
      await eventually(async () => (await withError()).length === 1);
      expect(refusals()).toBe(1);
      expect(destinations.states().find((state) => state.name === "slowmail")?.backoffSeconds).toBeGreaterThan(0);
      expect(destinations.states().find((state) => state.name === "mx.fastmail.test")?.backoffSeconds).toBe(0);
      expect(delivered(slow)).toBe(0);
    } finally {
      await finish(dispatcher);
    }
  });

  it("sends the held mail once the destination's backoff is over, each email once with its Message-ID", async () => {
    const sender = await newSender();
    const domain = `greylist-${randomUUID().slice(0, 8)}.example`;
    dns.setMx(domain, [{ priority: 5, exchange: "mx2.slowmail.test" }]);
    const recipients = addresses("held", domain, 5);
    for (const to of recipients) harness.sink.rejectRecipient(to, { code: 451, message: "4.3.0 Try again later" });
    const ids = await enqueue(sender, recipients, EmailKind.TRANSACTIONAL);
    const destinations = destinationsOf(
      {
        groups: { slowmail: { mx: ["*.slowmail.test"], concurrency: 2, ratePerSecond: 100 } },
        default: { concurrency: 100, ratePerSecond: 10_000 },
      },
      300,
    );
    const dispatcher = harness.startDispatcher({ destinations, retry: { maxAttempts: 8, baseDelayMs: 50, maxDelayMs: 200 } });
    try {
      await eventually(
        async () =>
          (await emailOf(sender.projectId, ids[0] ?? "")).attempts > 0 || (await emailOf(sender.projectId, ids[1] ?? "")).attempts > 0,
      );
      for (const to of recipients) harness.sink.acceptRecipient(to);
      await eventually(async () => delivered(recipients) === recipients.length, 60_000);
      // The sink has each message before its outcome is recorded.
      await eventually(async () => {
        const emails = await Promise.all(ids.map((id) => emailOf(sender.projectId, id)));
        return emails.every((email) => email.status === EmailStatus.SENT);
      });
      for (const [index, to] of recipients.entries()) {
        const email = await emailOf(sender.projectId, ids[index] ?? "");
        const received = harness.sink.messages(to);
        expect(received).toHaveLength(1);
        expect(/^Message-ID:\s*(\S+)/im.exec(received[0]?.raw ?? "")?.[1]).toBe(email.messageId);
      }
    } finally {
      await finish(dispatcher);
    }
  });
});

describe("lanes, fair share and destinations at once", () => {
  it("delivers every email exactly once across two dispatchers, two campaigns, transactional mail and a deferring destination", async () => {
    const [first, second, third] = await Promise.all([newSender(), newSender(), newSender()]);
    const tight = `tight-${randomUUID().slice(0, 8)}.example`;
    dns.setMx(tight, [{ priority: 10, exchange: "mx.tightmail.test" }]);
    const recipients = {
      first: [...addresses("a", "mixed.example", 300), ...addresses("a", tight, 60)],
      second: [...addresses("b", "mixed.example", 100), ...addresses("b", tight, 20)],
      transactional: [...addresses("t", "mixed.example", 30), ...addresses("t", tight, 10)],
    };
    const deferred = recipients.first.filter((to) => to.endsWith(tight)).slice(0, 5);
    for (const to of deferred) harness.sink.rejectRecipient(to, { code: 421, message: "4.7.0 Try again later" });
    await enqueue(first, recipients.first, EmailKind.CAMPAIGN);
    await enqueue(second, recipients.second, EmailKind.CAMPAIGN);
    const table: DestinationTable = {
      groups: { tightmail: { mx: ["*.tightmail.test"], concurrency: 2, ratePerSecond: 200 } },
      default: { concurrency: 100, ratePerSecond: 10_000 },
    };
    const dispatchers = [0, 1].map(() =>
      harness.startDispatcher({
        destinations: destinationsOf(table, 200),
        concurrency: 8,
        ratePerSecond: 400,
        projectRatePerSecond: 150,
        retry: { maxAttempts: 20, baseDelayMs: 50, maxDelayMs: 200 },
      }),
    );
    try {
      for (const to of recipients.transactional) await enqueue(third, [to], EmailKind.TRANSACTIONAL);
      const all = [...recipients.first, ...recipients.second, ...recipients.transactional];
      await eventually(async () => delivered(all) > 50);
      expect(delivered(deferred)).toBe(0);
      for (const to of deferred) harness.sink.acceptRecipient(to);
      await eventually(async () => delivered(all) === all.length, 120_000);
      await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop()));
      for (const to of all) expect(harness.sink.messages(to), to).toHaveLength(1);
      const unsent = await harness.db.email.count({
        where: { projectId: { in: [first.projectId, second.projectId, third.projectId] }, status: { not: "SENT" } },
      });
      expect(unsent).toBe(0);
    } finally {
      for (const dispatcher of dispatchers) await finish(dispatcher);
    }
  });
});
