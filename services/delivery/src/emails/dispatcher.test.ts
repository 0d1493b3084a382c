import { Code } from "@connectrpc/connect";
import { createSqlPool } from "@herald/db";
import { EmailKind, EmailStatus } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import { expectFailure } from "@herald/testing";
import { dkimVerify } from "mailauth";
import { simpleParser } from "mailparser";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { claimedRowOf, createClaimsPool, insertEmails, type NewEmailRow } from "../db/emails.js";
import { createSmtpProvider } from "../providers/smtp-provider.js";
import {
  type DeliveryHarness,
  emailActivityOf,
  eventually,
  newProjectId,
  randomRecipient,
  startDelivery,
  type VerifiedDomain,
} from "../test-support/delivery-harness.js";
import { newEmailRow } from "../test-support/query-plans.js";
import type { ClaimReservation, Dispatcher } from "./dispatcher.js";

let harness: DeliveryHarness;

beforeAll(async () => {
  harness = await startDelivery(inject("herald"));
});

afterAll(async () => {
  await harness?.stop();
});

const emailIdOf = (raw: string) => /^X-Herald-Email-ID: (.+)$/m.exec(raw)?.[1]?.trim();

function enqueue(projectId: string, domain: VerifiedDomain, to: string, change: Record<string, unknown> = {}) {
  return harness.emails.enqueueEmail({
    projectId,
    to: { email: to, name: "Ada Lovelace" },
    from: { email: `orders@${domain.domain}`, name: "Example Shop" },
    subject: "Order 1234 has shipped",
    html: "<p>Order 1234 is on its way.</p>",
    ...change,
  });
}

async function statusOf(projectId: string, id: string) {
  const { email } = await harness.emails.getEmail({ projectId, id });
  if (!email) throw new Error("no email in the answer");
  return email;
}

const settled = (projectId: string, id: string, status: EmailStatus) =>
  eventually(async () => {
    const email = await statusOf(projectId, id);
    return email.status === status && email;
  });

describe("the send queue", () => {
  let projectId: string;
  let domain: VerifiedDomain;
  let dispatcher: Dispatcher;

  beforeAll(async () => {
    projectId = newProjectId();
    domain = await harness.addDomain(projectId);
    dispatcher = harness.startDispatcher();
  });

  afterAll(async () => {
    await dispatcher.stop();
  });

  it("sends an enqueued email once, DKIM-signed with its domain's key, and records it as SENT with an email.sent event", async () => {
    const to = randomRecipient("sent");
    const contactId = newProjectId();
    const { emailId, created } = await enqueue(projectId, domain, to, {
      contactId,
      headers: { "X-Order": "1234" },
      attachments: [{ filename: "invoice.pdf", content: Buffer.from("%PDF-1.4\n"), contentType: "application/pdf" }],
    });
    expect(created).toBe(true);
    const email = await settled(projectId, emailId, EmailStatus.SENT);
    expect(email).toMatchObject({ attempts: 1, lastError: "", kind: EmailKind.TRANSACTIONAL });
    expect(email.messageId).toBe(`<${emailId}@${domain.domain}>`);
    expect(email.providerMessageId).toBe(email.messageId);
    expect(email.sentAt).toBeDefined();

    const [received] = await harness.sink.waitForMessages(1, { to });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(harness.sink.messages(to)).toHaveLength(1);
    const parsed = await simpleParser(received?.raw ?? "");
    expect(parsed.messageId).toBe(email.messageId);
    expect(emailIdOf(received?.raw ?? "")).toBe(emailId);
    expect(parsed.headers.get("x-order")).toBe("1234");
    expect(parsed.attachments[0]?.filename).toBe("invoice.pdf");
    const verification = await dkimVerify(Buffer.from(received?.raw ?? ""), { resolver: harness.resolver, strict: true });
    expect(verification.results.map((result) => result.status?.result)).toEqual(["pass"]);

    const events = (await emailActivityOf(harness.db, projectId)).filter((event) => event.payload?.emailId === emailId);
    expect(events.map((event) => event.envelope.type)).toEqual(["email.sent"]);
    expect(events[0]).toMatchObject({ topic: "herald.email-activity.v1", key: contactId });
    expect(events[0]?.envelope.contactId).toBe(contactId);
    expect(events[0]?.payload).toMatchObject({
      recipient: to,
      category: EmailCategory.TRANSACTIONAL,
      messageId: email.messageId,
      attempts: 1,
    });
  });

  it("answers the first email again for a repeated idempotency key, and sends it once", async () => {
    const to = randomRecipient("idempotent");
    const first = await enqueue(projectId, domain, to, { idempotencyKey: "order-1234-shipped" });
    const again = await enqueue(projectId, domain, to, { idempotencyKey: "order-1234-shipped", subject: "another subject" });
    expect(again).toMatchObject({ emailId: first.emailId, created: false });
    // The key is the project's: another project may use it.
    const otherProject = newProjectId();
    const other = await enqueue(otherProject, await harness.addDomain(otherProject), randomRecipient(), {
      idempotencyKey: "order-1234-shipped",
    });
    expect(other.emailId).not.toBe(first.emailId);
    await settled(projectId, first.emailId, EmailStatus.SENT);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(harness.sink.messages(to)).toHaveLength(1);
  });

  it("stores concurrent enqueues together, each with its own answer: one key used at once by many calls is one email", async () => {
    const to = randomRecipient("concurrent");
    const keyed = await Promise.all(Array.from({ length: 8 }, () => enqueue(projectId, domain, to, { idempotencyKey: `race-${to}` })));
    expect(new Set(keyed.map((answer) => answer.emailId)).size).toBe(1);
    expect(keyed.filter((answer) => answer.created)).toHaveLength(1);
    const distinct = await Promise.all(Array.from({ length: 8 }, () => enqueue(projectId, domain, randomRecipient("concurrent"))));
    expect(new Set(distinct.map((answer) => answer.emailId)).size).toBe(8);
    expect(distinct.every((answer) => answer.created)).toBe(true);
    await settled(projectId, keyed[0]?.emailId ?? "", EmailStatus.SENT);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(harness.sink.messages(to)).toHaveLength(1);
  });

  it("enqueues a batch of one project together, answering each email as EnqueueEmail would", async () => {
    const recipients = Array.from({ length: 5 }, () => randomRecipient("batch"));
    const request = (to: string, index: number) => ({
      projectId,
      idempotencyKey: `batch-${to}`,
      to: { email: to, name: "" },
      from: { email: `news@${domain.domain}`, name: "" },
      subject: `Batch ${index}`,
      html: "<p>Batch</p>",
    });
    const first = await harness.emails.enqueueEmails({ emails: recipients.map(request) });
    expect(first.emails.map((email) => email.created)).toEqual([true, true, true, true, true]);
    // Again with one new email: the four known keys answer their emails, the new one is stored.
    const extra = randomRecipient("batch");
    const again = await harness.emails.enqueueEmails({ emails: [...recipients.slice(1), extra].map(request) });
    expect(again.emails.map((email) => email.emailId).slice(0, 4)).toEqual(first.emails.map((email) => email.emailId).slice(1));
    expect(again.emails.map((email) => email.created)).toEqual([false, false, false, false, true]);
    for (const { emailId } of [...first.emails, ...again.emails]) await settled(projectId, emailId, EmailStatus.SENT);
    for (const to of [...recipients, extra]) expect(harness.sink.messages(to)).toHaveLength(1);

    // All or nothing: one bad email refuses the batch, and mixing projects is refused.
    const refused = [randomRecipient("refused"), "not-an-address"];
    await expectFailure(harness.emails.enqueueEmails({ emails: refused.map(request) }), Code.InvalidArgument, "VALIDATION_ERROR");
    expect(harness.sink.messages(refused[0] ?? "")).toHaveLength(0);
    const mixed = [request(randomRecipient(), 0), { ...request(randomRecipient(), 1), projectId: newProjectId() }];
    await expectFailure(harness.emails.enqueueEmails({ emails: mixed }), Code.InvalidArgument, "VALIDATION_ERROR");
  });

  it("retries a recipient refused with 451 after a backoff and sends it once the server accepts", async () => {
    const to = randomRecipient("greylisted");
    harness.sink.rejectRecipient(to, { code: 451, message: "4.7.1 greylisted, try again later" });
    const { emailId } = await enqueue(projectId, domain, to);
    const deferred = await eventually(async () => {
      const email = await statusOf(projectId, emailId);
      return email.status === EmailStatus.PENDING && email.attempts >= 1 && email;
    });
    expect(deferred.lastError).toContain("451");
    harness.sink.acceptRecipient(to);
    const sent = await settled(projectId, emailId, EmailStatus.SENT);
    expect(sent.attempts).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(harness.sink.messages(to)).toHaveLength(1);
    const types = (await emailActivityOf(harness.db, projectId))
      .filter((event) => event.payload?.emailId === emailId)
      .map((event) => event.envelope.type);
    expect(types.at(-1)).toBe("email.sent");
    expect(types.filter((type) => type === "email.sent")).toHaveLength(1);
    expect(types.slice(0, -1).every((type) => type === "email.deferred")).toBe(true);
    expect(types.length).toBe(sent.attempts);
  });

  it("fails an email after the last attempt when the failure stays temporary", async () => {
    const to = randomRecipient("always-busy");
    harness.sink.rejectRecipient(to, { code: 452, message: "4.2.2 mailbox full" });
    const { emailId } = await enqueue(projectId, domain, to);
    const failed = await settled(projectId, emailId, EmailStatus.FAILED);
    expect(failed.attempts).toBe(4);
    expect(failed.lastError).toMatch(/^gave up after 4 attempts: 452/);
    const types = (await emailActivityOf(harness.db, projectId))
      .filter((event) => event.payload?.emailId === emailId)
      .map((event) => event.envelope.type);
    expect(types).toEqual(["email.deferred", "email.deferred", "email.deferred", "email.failed"]);
    // Full mailboxes are not the address's fault: nothing is suppressed.
    expect(await harness.db.suppression.count({ where: { projectId, email: to } })).toBe(0);
  });

  it("bounces a recipient refused with 550, suppresses the address and refuses later emails to it", async () => {
    const to = randomRecipient("unknown-user");
    harness.sink.rejectRecipient(to, { code: 550, message: "5.1.1 no such user" });
    const { emailId } = await enqueue(projectId, domain, to);
    const bounced = await settled(projectId, emailId, EmailStatus.BOUNCED);
    expect(bounced.attempts).toBe(1);
    expect(bounced.lastError).toContain("550");
    expect(harness.sink.messages(to)).toEqual([]);
    expect(await harness.db.suppression.findMany({ where: { projectId, email: to } })).toMatchObject([{ reason: "bounce", emailId }]);
    const events = (await emailActivityOf(harness.db, projectId)).filter((event) => event.payload?.emailId === emailId);
    expect(events.map((event) => event.envelope.type)).toEqual(["email.bounce"]);
    expect(events[0]?.payload?.reason).toContain("550");
    // No email.sent came before it: the reputation guard counts it as an attempt too.
    expect(events[0]?.payload?.refusedAtHandover).toBe(true);

    harness.sink.acceptRecipient(to);
    const refused = await expectFailure(enqueue(projectId, domain, to.toUpperCase()), Code.FailedPrecondition, "RECIPIENT_SUPPRESSED");
    expect(refused.rawMessage).toContain(to);
    // Suppression is per project.
    const otherProject = newProjectId();
    await expect(enqueue(otherProject, await harness.addDomain(otherProject), to)).resolves.toMatchObject({ created: true });
  });

  it("never signs with the key of a domain deleted or unverified after its key was used: later emails fail unsent", async () => {
    for (const gone of ["deleted", "unverified"] as const) {
      const domain = await harness.addDomain(projectId);
      const first = randomRecipient(`before-${gone}`);
      await settled(projectId, (await enqueue(projectId, domain, first)).emailId, EmailStatus.SENT);
      if (gone === "deleted") await harness.db.domain.deleteMany({ where: { projectId, domain: domain.domain } });
      else await harness.db.domain.updateMany({ where: { projectId, domain: domain.domain }, data: { verified: false } });
      const to = randomRecipient(`after-${gone}`);
      const failed = await settled(projectId, (await enqueue(projectId, domain, to)).emailId, EmailStatus.FAILED);
      expect(failed.lastError).toMatch(/^DOMAIN_NOT_VERIFIED: /);
      expect(harness.sink.messages(to)).toEqual([]);
    }
  });

  it("fails an email whose sender's domain is not a verified domain of the project, sending nothing", async () => {
    const pending = await harness.addDomain(projectId, { verified: false });
    const to = randomRecipient("unverified");
    const { emailId } = await enqueue(projectId, pending, to);
    const failed = await settled(projectId, emailId, EmailStatus.FAILED);
    expect(failed.lastError).toMatch(/^DOMAIN_NOT_VERIFIED: /);
    // Another project's verified domain does not count either.
    const elsewhere = await harness.addDomain(newProjectId());
    const foreign = await enqueue(projectId, elsewhere, to);
    expect((await settled(projectId, foreign.emailId, EmailStatus.FAILED)).lastError).toMatch(/^DOMAIN_NOT_VERIFIED: /);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(harness.sink.messages(to)).toEqual([]);
    const types = (await emailActivityOf(harness.db, projectId))
      .filter((event) => event.payload?.emailId === emailId)
      .map((event) => event.envelope.type);
    expect(types).toEqual(["email.failed"]);
  });

  it("refuses an email with a bad field, and answers NOT_FOUND for another project's email", async () => {
    await expectFailure(enqueue(projectId, domain, "not an address"), Code.InvalidArgument, "VALIDATION_ERROR");
    await expectFailure(enqueue(projectId, domain, randomRecipient(), { subject: "two\nlines" }), Code.InvalidArgument, "VALIDATION_ERROR");
    await expectFailure(
      enqueue(projectId, domain, randomRecipient(), { headers: { From: "ceo@bank.example" } }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
    const tooMany = Array.from({ length: 11 }, (_, index) => ({
      filename: `${index}.txt`,
      content: Buffer.from("x"),
      contentType: "text/plain",
    }));
    await expectFailure(enqueue(projectId, domain, randomRecipient(), { attachments: tooMany }), Code.InvalidArgument, "VALIDATION_ERROR");
    await expectFailure(enqueue("not-a-project", domain, randomRecipient()), Code.InvalidArgument, "INVALID_PROJECT_ID");

    const { emailId } = await enqueue(projectId, domain, randomRecipient());
    await expectFailure(harness.emails.getEmail({ projectId: newProjectId(), id: emailId }), Code.NotFound, "EMAIL_NOT_FOUND");
    await expectFailure(harness.emails.getEmail({ projectId, id: "nope" }), Code.NotFound, "EMAIL_NOT_FOUND");
  });
});

describe("urgent emails stored claimed", () => {
  /** A claims pool that counts the claims made on it. */
  function countedClaims(): { pool: pg.Pool; made: () => number } {
    const pool = createClaimsPool(harness.databaseUrl, "delivery", () => {});
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    let made = 0;
    pool.query = ((...args: unknown[]) => {
      made++;
      return query(...args);
    }) as typeof pool.query;
    return { pool, made: () => made };
  }

  /** Stores `count` emails claimed on the reservation, as an enqueue would, and answers them as the dispatcher is handed them. */
  async function storeClaimed(reservation: ClaimReservation, projectId: string, domain: VerifiedDomain, to: string, count: number) {
    const pool = createSqlPool(harness.databaseUrl, "delivery", () => {});
    const rows: NewEmailRow[] = Array.from({ length: count }, (_, index) => ({
      ...newEmailRow(projectId, index),
      toEmail: to,
      fromEmail: `orders@${domain.domain}`,
      leaseMs: reservation.leaseMs,
    }));
    const stored = await insertEmails(pool, rows);
    await pool.end();
    return rows.map((row, index) => {
      const claimed = stored[index]?.claimed;
      if (!claimed) throw new Error("the email was not stored claimed");
      return claimedRowOf(row, claimed);
    });
  }

  /** Once the dispatcher's first claim found the queue empty, it has room for an email stored claimed. */
  const hasRoom = (dispatcher: Dispatcher) =>
    eventually(async () => {
      const probe = dispatcher.enqueueClaims.reserve(1);
      probe.settle([]);
      return probe.count === 1;
    });

  it("sends urgent emails stored claimed as they are enqueued, each once on its first attempt, without a claim", async () => {
    const projectId = newProjectId();
    const domain = await harness.addDomain(projectId);
    const to = randomRecipient("stored-claimed");
    const claims = countedClaims();
    // No poll: only an enqueue of a PENDING email would make it claim.
    const dispatcher = harness.startDispatcher({ claimsPool: claims.pool, pollIntervalMs: 60_000 });
    await hasRoom(dispatcher);
    const claimsBefore = claims.made();

    const ids = await Promise.all(Array.from({ length: 15 }, async () => (await enqueue(projectId, domain, to)).emailId));
    await harness.sink.waitForMessages(15, { to, timeoutMs: 10_000 });
    for (const id of ids) await settled(projectId, id, EmailStatus.SENT);
    await dispatcher.stop();
    await claims.pool.end();

    expect(claims.made()).toBe(claimsBefore);
    for (const id of ids) expect((await statusOf(projectId, id)).attempts).toBe(1);
    const received = harness.sink.messages(to).map((message) => emailIdOf(message.raw));
    expect(received.sort()).toEqual([...ids].sort());
  });

  it("stores an enqueue PENDING behind urgent mail that waits in the queue, until a claim has taken what waits", async () => {
    const dispatcher = harness.startDispatcher({ concurrency: 4, pollIntervalMs: 60_000 });
    await hasRoom(dispatcher);
    // Six urgent emails about to be stored and room for four: two will wait PENDING.
    const first = dispatcher.enqueueClaims.reserve(6);
    expect(first.count).toBe(4);
    const behind = dispatcher.enqueueClaims.reserve(1);
    expect(behind.count).toBe(0);
    first.settle([]);
    // Room again, but the two PENDING emails came first.
    const stillBehind = dispatcher.enqueueClaims.reserve(1);
    expect(stillBehind.count).toBe(0);
    // A claim that finds the queue empty ends the wait.
    dispatcher.nudge();
    await hasRoom(dispatcher);
    await dispatcher.stop();
    expect(dispatcher.enqueueClaims.reserve(1).count).toBe(0);
  });

  it("keeps the slots of emails stored claimed taken until their sends are under way, so that no claim or enqueue exceeds its concurrency", async () => {
    const projectId = newProjectId();
    const domain = await harness.addDomain(projectId);
    const to = randomRecipient("stored-claimed-slots");
    const dispatcher = harness.startDispatcher({ concurrency: 2, pollIntervalMs: 60_000 });
    await hasRoom(dispatcher);
    const reservation = dispatcher.enqueueClaims.reserve(2);
    expect(reservation.count).toBe(2);
    const rows = await storeClaimed(reservation, projectId, domain, to, 2);
    reservation.settle(rows);
    // Handed over in the next turn of the event loop: until their sends begin, both slots are still theirs.
    expect(dispatcher.enqueueClaims.reserve(1).count).toBe(0);
    await harness.sink.waitForMessages(2, { to, timeoutMs: 10_000 });
    for (const row of rows) await settled(projectId, row.id, EmailStatus.SENT);
    dispatcher.nudge();
    await hasRoom(dispatcher);
    await dispatcher.stop();
    expect(harness.sink.messages(to)).toHaveLength(2);
  });

  it("puts emails stored claimed back untried when their dispatcher stopped before it could send them", async () => {
    const projectId = newProjectId();
    const domain = await harness.addDomain(projectId);
    const to = randomRecipient("stored-claimed-stop");
    const dispatcher = harness.startDispatcher({ pollIntervalMs: 60_000 });
    await hasRoom(dispatcher);
    const reservation = dispatcher.enqueueClaims.reserve(1);
    const [row] = await storeClaimed(reservation, projectId, domain, to, 1);
    if (!row) throw new Error("no email stored");
    await dispatcher.stop();
    reservation.settle([row]);
    await eventually(async () => {
      const email = await statusOf(projectId, row.id);
      return email.status === EmailStatus.PENDING && email.attempts === 0;
    });
    expect(harness.sink.messages(to)).toHaveLength(0);

    // Due at once for any dispatcher.
    const next = harness.startDispatcher();
    await harness.sink.waitForMessages(1, { to, timeoutMs: 10_000 });
    await settled(projectId, row.id, EmailStatus.SENT);
    await next.stop();
    expect(harness.sink.messages(to)).toHaveLength(1);
  });
});

describe("the dispatcher", () => {
  it("keeps emails PENDING while no SMTP relay is configured", async () => {
    const projectId = newProjectId();
    const domain = await harness.addDomain(projectId);
    const idle = harness.startDispatcher({ provider: undefined });
    const { emailId } = await enqueue(projectId, domain, randomRecipient("no-relay"));
    idle.nudge();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await statusOf(projectId, emailId)).toMatchObject({ status: EmailStatus.PENDING, attempts: 0 });
    await idle.stop();
    expect(idle.inFlight).toBe(0);
  });

  it("holds a project to its own rate while other projects' emails go on", async () => {
    const slowProject = newProjectId();
    const slowDomain = await harness.addDomain(slowProject);
    const fastProject = newProjectId();
    const fastDomain = await harness.addDomain(fastProject);
    const slowTo = randomRecipient("throttled");
    const fastTo = randomRecipient("unthrottled");
    // 12 emails at 4 a second (a burst of 4) take at least two seconds.
    const ids: string[] = [];
    for (let index = 0; index < 12; index++) ids.push((await enqueue(slowProject, slowDomain, slowTo)).emailId);
    for (let index = 0; index < 3; index++) await enqueue(fastProject, fastDomain, fastTo);
    const started = Date.now();
    const throttled = harness.startDispatcher({ projectRatePerSecond: 4 });
    await harness.sink.waitForMessages(3, { to: fastTo, timeoutMs: 5_000 });
    expect(harness.sink.messages(slowTo).length).toBeLessThan(12);
    await harness.sink.waitForMessages(12, { to: slowTo, timeoutMs: 20_000 });
    await throttled.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_800);
    for (const id of ids) expect((await statusOf(slowProject, id)).status).toBe(EmailStatus.SENT);
    // Putting a throttled email back does not count as an attempt.
    for (const id of ids) expect((await statusOf(slowProject, id)).attempts).toBe(1);
  });

  it("sends every email exactly once across a graceful stop mid-burst (SIGTERM) and a new dispatcher", async () => {
    const projectId = newProjectId();
    const domain = await harness.addDomain(projectId);
    const to = randomRecipient("restart");
    const ids = await Promise.all(Array.from({ length: 400 }, async () => (await enqueue(projectId, domain, to)).emailId));
    const first = harness.startDispatcher({ concurrency: 40 });
    await harness.sink.waitForMessages(100, { to, timeoutMs: 30_000 });
    await first.stop();
    const atStop = harness.sink.messages(to).length;
    expect(atStop).toBeLessThan(400);
    expect(await harness.db.email.count({ where: { projectId, status: "SENDING" } })).toBe(0);
    const second = harness.startDispatcher({ concurrency: 40 });
    await eventually(async () => (await harness.db.email.count({ where: { projectId, status: "SENT" } })) === 400);
    await second.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const received = harness.sink.messages(to).map((message) => emailIdOf(message.raw));
    expect(received).toHaveLength(400);
    expect(new Set(received)).toEqual(new Set(ids));
  }, 60_000);
});

describe("crash safety", () => {
  it("sends every one of 2,000 emails after a dispatcher is killed mid-burst, duplicating at most those in flight", async () => {
    const projectId = newProjectId();
    const domain = await harness.addDomain(projectId);
    const to = randomRecipient("burst");
    const total = 2_000;
    const ids: string[] = [];
    for (let start = 0; start < total; start += 100) {
      const batch = await Promise.all(Array.from({ length: Math.min(100, total - start) }, () => enqueue(projectId, domain, to)));
      ids.push(...batch.map((result) => result.emailId));
    }
    expect(new Set(ids).size).toBe(total);

    // Its own provider, as a process has: the kill leaves its connections to finish what they carry.
    const ownProvider = createSmtpProvider({ url: harness.sink.url, maxConnections: 5 });
    const first = harness.startDispatcher({ provider: ownProvider, leaseMs: 2_000, concurrency: 40 });
    await harness.sink.waitForMessages(600, { to, timeoutMs: 60_000 });
    first.kill();
    const inFlightAtKill = first.inFlight;
    // What the killed process had claimed and not recorded: SENDING rows once its last transaction is done.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sendingAfterKill = await harness.db.email.count({ where: { projectId, status: "SENDING" } });
    const receivedAtKill = harness.sink.messages(to).length;

    const second = harness.startDispatcher({ leaseMs: 2_000, concurrency: 40 });
    await eventually(async () => (await harness.db.email.count({ where: { projectId, status: "SENT" } })) === total, 90_000);
    await second.stop();
    await ownProvider.close();
    await new Promise((resolve) => setTimeout(resolve, 300));

    const received = harness.sink.messages(to).map((message) => emailIdOf(message.raw));
    const counts = new Map<string, number>();
    for (const id of received) if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect(new Set(counts.keys())).toEqual(new Set(ids));
    const duplicates = received.length - total;
    console.log(
      `crash test: ${total} emails, ${receivedAtKill} received at the kill, ${inFlightAtKill} in flight at the kill, ` +
        `${sendingAfterKill} left SENDING, ${received.length} received in all, ${duplicates} duplicates`,
    );
    expect(duplicates).toBeLessThanOrEqual(sendingAfterKill);
    expect([...counts.values()].every((count) => count <= 2)).toBe(true);
    // A resent email carries the Message-ID of its first copy, so a receiver can tell the two apart from two emails.
    const messageIds = new Map<string, Set<string>>();
    for (const message of harness.sink.messages(to)) {
      const id = emailIdOf(message.raw) ?? "";
      const messageId = /^Message-ID:\s*(<[^>]+>)/im.exec(message.raw)?.[1] ?? "";
      messageIds.set(id, (messageIds.get(id) ?? new Set()).add(messageId));
    }
    for (const [id, seen] of messageIds) expect([...seen]).toEqual([`<${id}@${domain.domain}>`]);

    // One email.sent per email, whatever was sent twice.
    const sent = (await emailActivityOf(harness.db, projectId)).filter((event) => event.envelope.type === "email.sent");
    expect(sent).toHaveLength(total);
    expect(new Set(sent.map((event) => event.payload?.emailId))).toEqual(new Set(ids));
  }, 180_000);

  it("lets two dispatchers share the queue without sending an email twice", async () => {
    const projectId = newProjectId();
    const domain = await harness.addDomain(projectId);
    const to = randomRecipient("replicas");
    const a = harness.startDispatcher();
    const b = harness.startDispatcher();
    const ids = await Promise.all(Array.from({ length: 300 }, async () => (await enqueue(projectId, domain, to)).emailId));
    await harness.sink.waitForMessages(300, { to, timeoutMs: 60_000 });
    await eventually(async () => (await harness.db.email.count({ where: { projectId, status: "SENT" } })) === 300);
    await Promise.all([a.stop(), b.stop()]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const received = harness.sink.messages(to).map((message) => emailIdOf(message.raw));
    expect(received).toHaveLength(300);
    expect(new Set(received)).toEqual(new Set(ids));
  }, 90_000);
});
