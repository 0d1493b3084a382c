import { generateKeyPairSync } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { EmailStatus } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { expectFailure } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Dispatcher } from "../emails/dispatcher.js";
import {
  type DeliveryHarness,
  emailActivityOf,
  eventually,
  newProjectId,
  randomRecipient,
  startDelivery,
  type VerifiedDomain,
} from "../test-support/delivery-harness.js";

let harness: DeliveryHarness;
let dispatcher: Dispatcher;

beforeAll(async () => {
  harness = await startDelivery(inject("herald"));
  dispatcher = harness.startDispatcher();
});

afterAll(async () => {
  await dispatcher?.stop();
  await harness?.stop();
});

/** An email of the project sent through the queue: its id, address and the id the provider gave it. */
async function sentEmail(projectId: string, domain: VerifiedDomain) {
  const to = randomRecipient("ses");
  const { emailId } = await harness.emails.enqueueEmail({
    projectId,
    to: { email: to, name: "" },
    from: { email: `news@${domain.domain}`, name: "" },
    subject: "Hello",
    html: "<p>Hello</p>",
  });
  const providerMessageId = await eventually(async () => {
    const row = await harness.db.email.findFirst({ where: { id: emailId } });
    return row?.status === "SENT" && row.providerMessageId;
  });
  if (!providerMessageId) throw new Error("the email was sent without a provider message id");
  return { emailId, to, providerMessageId };
}

const sesEvent = (eventType: string, mail: { messageId: string; emailId?: string }, details: Record<string, unknown>) => ({
  eventType,
  mail: {
    timestamp: new Date().toISOString(),
    messageId: mail.messageId,
    headers: mail.emailId ? [{ name: "X-Herald-Email-ID", value: mail.emailId }] : [],
  },
  ...details,
});

const permanentBounce = (address: string) => ({
  bounce: {
    bounceType: "Permanent",
    bounceSubType: "General",
    bouncedRecipients: [{ emailAddress: address, status: "5.1.1", diagnosticCode: "smtp; 550 5.1.1 user unknown" }],
    timestamp: "2026-11-23T10:00:00.000Z",
  },
});

const post = (body: string) => harness.providerEvents.handleSesNotification({ body });

async function statusOf(projectId: string, id: string): Promise<EmailStatus | undefined> {
  return (await harness.emails.getEmail({ projectId, id })).email?.status;
}

describe("SES notifications through SNS", () => {
  let projectId: string;
  let domain: VerifiedDomain;

  beforeAll(async () => {
    projectId = newProjectId();
    domain = await harness.addDomain(projectId);
  });

  it("records a permanent bounce: BOUNCED, the address suppressed in the email's project only, one email.bounce event however often SNS repeats it", async () => {
    const email = await sentEmail(projectId, domain);
    const message = harness.sns.notification(sesEvent("Bounce", { messageId: email.providerMessageId }, permanentBounce(email.to)));
    expect((await post(harness.sns.signed(message))).outcome).toBe("recorded");
    expect((await post(harness.sns.signed(message))).outcome).toBe("ignored");

    expect(await statusOf(projectId, email.emailId)).toBe(EmailStatus.BOUNCED);
    const suppression = await harness.db.suppression.findUnique({ where: { projectId_email: { projectId, email: email.to } } });
    expect(suppression).toMatchObject({ reason: "bounce", emailId: email.emailId });
    expect(suppression?.detail).toContain("550 5.1.1 user unknown");
    expect(await harness.db.suppression.count({ where: { email: email.to } })).toBe(1);

    const bounces = (await emailActivityOf(harness.db, projectId)).filter(
      (event) => event.envelope.type === "email.bounce" && event.payload?.emailId === email.emailId,
    );
    expect(bounces).toHaveLength(1);
    expect(bounces[0]?.payload?.reason).toContain("Permanent General");
    expect(await harness.db.emailActivity.count({ where: { emailId: email.emailId, type: "email.bounce" } })).toBe(1);

    // The next email to the address is refused by the queue.
    await expectFailure(
      harness.emails.enqueueEmail({
        projectId,
        to: { email: email.to, name: "" },
        from: { email: `news@${domain.domain}`, name: "" },
        subject: "Again",
        html: "<p>Again</p>",
      }),
      Code.FailedPrecondition,
      "RECIPIENT_SUPPRESSED",
    );
  });

  it("records a complaint and a delivery, never moving the status back, and finds the email by its header too", async () => {
    const email = await sentEmail(projectId, domain);
    const delivered = harness.sns.notification(
      sesEvent("Delivery", { messageId: email.providerMessageId }, { delivery: { recipients: [email.to], smtpResponse: "250 2.0.0 OK" } }),
    );
    expect((await post(harness.sns.signed(delivered))).outcome).toBe("recorded");
    expect(await statusOf(projectId, email.emailId)).toBe(EmailStatus.DELIVERED);

    // Identity notifications (notificationType) share the body; an unknown SES id with our header still finds the email.
    const complaint = harness.sns.notification({
      notificationType: "Complaint",
      mail: { messageId: "not-the-ses-id", headers: [{ name: "X-Herald-Email-ID", value: email.emailId }] },
      complaint: { complainedRecipients: [{ emailAddress: email.to }], complaintFeedbackType: "abuse" },
    });
    expect((await post(harness.sns.signed(complaint, { version: "1" }))).outcome).toBe("recorded");
    expect(await statusOf(projectId, email.emailId)).toBe(EmailStatus.COMPLAINED);
    expect(await harness.db.suppression.findUnique({ where: { projectId_email: { projectId, email: email.to } } })).toMatchObject({
      reason: "complaint",
    });

    // A delivery notification arriving late does not undo the complaint, but is still on the record.
    const late = harness.sns.notification(
      sesEvent("Delivery", { messageId: email.providerMessageId }, { delivery: { recipients: [email.to] } }),
    );
    expect((await post(harness.sns.signed(late))).outcome).toBe("recorded");
    expect(await statusOf(projectId, email.emailId)).toBe(EmailStatus.COMPLAINED);
    const types = (await emailActivityOf(harness.db, projectId))
      .filter((event) => event.payload?.emailId === email.emailId)
      .map((event) => event.envelope.type);
    expect(types).toEqual(["email.sent", "email.delivery", "email.complaint", "email.delivery"]);
  });

  it("records a transient bounce and a delay as email.deferred, without suppressing; ignores other events and unknown emails", async () => {
    const email = await sentEmail(projectId, domain);
    const transient = harness.sns.notification(
      sesEvent(
        "Bounce",
        { messageId: email.providerMessageId },
        { bounce: { bounceType: "Transient", bounceSubType: "MailboxFull", bouncedRecipients: [{ emailAddress: email.to }] } },
      ),
    );
    expect((await post(harness.sns.signed(transient))).outcome).toBe("recorded");
    expect(await statusOf(projectId, email.emailId)).toBe(EmailStatus.SENT);
    expect(await harness.db.suppression.count({ where: { projectId, email: email.to } })).toBe(0);
    const deferred = await harness.db.emailActivity.findMany({ where: { emailId: email.emailId, type: "email.deferred" } });
    expect(deferred.map((row) => row.reason)).toEqual(["Transient MailboxFull"]);

    const open = harness.sns.notification(sesEvent("Open", { messageId: email.providerMessageId }, { open: {} }));
    expect((await post(harness.sns.signed(open))).outcome).toBe("ignored");
    const unknown = harness.sns.notification(sesEvent("Bounce", { messageId: "0100-unknown" }, permanentBounce(email.to)));
    expect((await post(harness.sns.signed(unknown))).outcome).toBe("ignored");
    expect(await harness.db.suppression.count({ where: { projectId, email: email.to } })).toBe(0);
  });

  it("confirms a subscription to an accepted topic by visiting its SubscribeURL, and only an SNS one", async () => {
    const url = "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&Token=a-token";
    expect((await post(harness.sns.signed(harness.sns.subscriptionConfirmation(url)))).outcome).toBe("confirmed");
    expect(harness.confirmedSubscriptions).toContain(url);
    await expectFailure(
      post(harness.sns.signed(harness.sns.subscriptionConfirmation("https://attacker.example/confirm"))),
      Code.InvalidArgument,
      "SNS_MESSAGE_INVALID",
    );
  });

  it("refuses what is not a signed message of an accepted topic, changing nothing", async () => {
    const email = await sentEmail(projectId, domain);
    const bounce = harness.sns.notification(sesEvent("Bounce", { messageId: email.providerMessageId }, permanentBounce(email.to)));
    await expectFailure(post("not json"), Code.InvalidArgument, "SNS_MESSAGE_INVALID");
    await expectFailure(post(JSON.stringify({ Type: "Notification" })), Code.InvalidArgument, "SNS_MESSAGE_INVALID");
    // Any AWS account can have SNS sign a message from a topic of its own.
    const otherTopic = harness.sns.notification(
      sesEvent("Bounce", { messageId: email.providerMessageId }, permanentBounce(email.to)),
      "arn:aws:sns:eu-west-1:999999999999:someone-else",
    );
    await expectFailure(post(harness.sns.signed(otherTopic)), Code.PermissionDenied, "SNS_TOPIC_NOT_ALLOWED");
    const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    await expectFailure(post(harness.sns.signed(bounce, { key: stranger })), Code.InvalidArgument, "SNS_MESSAGE_INVALID");
    const tampered = JSON.parse(harness.sns.signed(bounce)) as Record<string, string>;
    await expectFailure(post(JSON.stringify({ ...tampered, MessageId: "another" })), Code.InvalidArgument, "SNS_MESSAGE_INVALID");
    const elsewhere = { ...tampered, SigningCertURL: "https://attacker.example/cert.pem" };
    await expectFailure(post(JSON.stringify(elsewhere)), Code.InvalidArgument, "SNS_MESSAGE_INVALID");

    expect(await statusOf(projectId, email.emailId)).toBe(EmailStatus.SENT);
    expect(await harness.db.suppression.count({ where: { projectId, email: email.to } })).toBe(0);
  });
});
