import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { deliveryStatusReport, feedbackReport, receiverMta } from "./support/feedback-reports.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, smtp, inboundSmtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

type ActivityPage = { data: Array<{ type: string; emailId: string; recipient: string; reason: string | null }> };

const returnReport = receiverMta(inboundSmtp.port);

describe("bounces returned over SMTP to the return path (BOUNCE_DOMAIN, INBOUND_SMTP_PORT)", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let domain: string;
  let otherDomain: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "bounces")).cookie, "Bounces");
    other = await createProject(call, (await signUp(call, "bounces-other")).cookie, "Other");
    [domain, otherDomain] = (
      await Promise.all([
        verifiedDomain(call, dns, project.secretKey, "bounces"),
        verifiedDomain(call, dns, other.secretKey, "bounces-other"),
      ])
    ).map((verified) => verified.domain) as [string, string];
  });

  const send = (to: string, key = project.secretKey, from = `hello@${domain}`) =>
    call<{ data: { emails: Array<{ email: string }> } } & ErrorBody>("POST", "/v1/send", {
      key,
      body: { to, from, subject: "Hi", body: "<p>Hi</p>" },
    });

  /** Sends to the address and answers the return path its email went out from. */
  async function sentReturnPath(to: string): Promise<{ emailId: string; returnPath: string }> {
    const answer = await send(to);
    expect(answer.status).toBe(200);
    const [message] = await sink.waitForMessages(1, { to, timeoutMs: 20_000 });
    if (!message) throw new Error(`nothing arrived for ${to}`);
    expect(message.from).toMatch(/^bounce\+[0-9a-f]{32}-[0-9a-f]{16}@bounces\.herald\.test$/);
    return { emailId: answer.body.data.emails[0]?.email ?? "", returnPath: message.from };
  }

  const activityOf = async (emailId: string, key = project.secretKey) =>
    (await call<ActivityPage>("GET", "/activity?limit=100", { key })).body.data.filter((item) => item.emailId === emailId);

  async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + 20_000;
    let value = await read();
    while (!done(value) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      value = await read();
    }
    return value;
  }

  it("records a permanent bounce once, however often it arrives, and suppresses the address in this project only", async () => {
    const to = uniqueEmail("dsn-hard");
    const { emailId, returnPath } = await sentReturnPath(to);
    const report = deliveryStatusReport({
      returnPath,
      recipient: to,
      action: "failed",
      status: "5.1.1",
      diagnostic: "550 5.1.1 user unknown",
      id: `hard-${emailId}`,
    });
    const accepted = await returnReport(returnPath, report);
    expect(accepted.response).toMatch(/^250 /);
    await returnReport(returnPath, report);

    const refused = await eventually(
      () => send(to),
      (answer) => answer.status !== 200,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("RECIPIENT_SUPPRESSED");
    const bounces = (await activityOf(emailId)).filter((item) => item.type === "email.bounce");
    expect(bounces).toHaveLength(1);
    expect(bounces[0]?.reason).toContain("550 5.1.1 user unknown");
    // The other project never sent to the address: it still may.
    expect((await send(to, other.secretKey, `hello@${otherDomain}`)).status).toBe(200);
  });

  it("records a transient failure as deferred, without suppressing", async () => {
    const to = uniqueEmail("dsn-soft");
    const { emailId, returnPath } = await sentReturnPath(to);
    await returnReport(
      returnPath,
      deliveryStatusReport({
        returnPath,
        recipient: to,
        action: "failed",
        status: "4.2.2",
        diagnostic: "452 4.2.2 mailbox full",
        id: `soft-${emailId}`,
      }),
    );
    const activity = await eventually(
      () => activityOf(emailId),
      (items) => items.some((item) => item.type === "email.deferred"),
    );
    expect(activity.map((item) => item.type)).toContain("email.deferred");
    expect(activity.map((item) => item.type)).not.toContain("email.bounce");
    expect((await send(to)).status).toBe(200);
  });

  it("refuses mail for anything but a return path of ours, and drops what is no report", async () => {
    const to = uniqueEmail("dsn-forged");
    const { emailId, returnPath } = await sentReturnPath(to);
    const forged = returnPath.replace(
      /-([0-9a-f]{16})@/,
      (_, tag: string) => `-${tag.endsWith("0") ? `${tag.slice(0, -1)}1` : `${tag.slice(0, -1)}0`}@`,
    );
    const report = deliveryStatusReport({
      returnPath: forged,
      recipient: to,
      action: "failed",
      status: "5.1.1",
      diagnostic: "550 user unknown",
      id: `forged-${emailId}`,
    });
    await expect(returnReport(forged, report)).rejects.toMatchObject({ responseCode: 550 });
    await expect(returnReport(`postmaster@${inboundSmtp.bounceDomain}`, report)).rejects.toMatchObject({ responseCode: 550 });
    await expect(returnReport(`someone@${domain}`, report)).rejects.toMatchObject({ responseCode: 550 });

    const autoReply = `From: ${to}\r\nTo: ${returnPath}\r\nSubject: Out of office\r\nAuto-Submitted: auto-replied\r\n\r\nI am away until Monday.\r\n`;
    expect((await returnReport(returnPath, autoReply)).response).toMatch(/^250 /);
    expect((await send(to)).status).toBe(200);
    expect((await activityOf(emailId)).map((item) => item.type)).toEqual(["email.sent"]);
  });

  it("records a feedback loop's complaint sent to fbl@ by the return path its original quotes, and none without a valid one", async () => {
    const to = uniqueEmail("fbl");
    const { emailId, returnPath } = await sentReturnPath(to);
    const [message] = await sink.messages(to);
    const messageId = /^Message-ID:\s*(<[^>]+>)/im.exec(message?.raw ?? "")?.[1] ?? "";
    const arf = (id: string, originalReturnPath?: string) =>
      feedbackReport({
        to: `fbl@${inboundSmtp.bounceDomain}`,
        id,
        emailId,
        ...(originalReturnPath ? { returnPath: originalReturnPath } : {}),
        from: `hello@${domain}`,
        messageId,
      });
    const fbl = `fbl@${inboundSmtp.bounceDomain}`;
    // Knowing the email's id and Message-ID is not enough: the return path's tag must verify.
    const forged = returnPath.replace(/-([0-9a-f]{16})@/, "-0000000000000000@");
    expect((await returnReport(fbl, arf("no-return-path"))).response).toMatch(/^250 /);
    expect((await returnReport(fbl, arf("forged", forged))).response).toMatch(/^250 /);
    expect((await send(to)).status).toBe(200);
    expect((await activityOf(emailId)).map((item) => item.type)).not.toContain("email.complaint");

    expect((await returnReport(fbl, arf("genuine", returnPath))).response).toMatch(/^250 /);
    const refused = await eventually(
      () => send(to),
      (answer) => answer.status !== 200,
    );
    expect(refused.body.error.code).toBe("RECIPIENT_SUPPRESSED");
    const complaints = (await activityOf(emailId)).filter((item) => item.type === "email.complaint");
    expect(complaints).toHaveLength(1);
    expect(complaints[0]?.reason).toBe("Complaint: abuse");
  });

  it("bounces an email on a policy refusal without suppressing the address, and refuses a report larger than INBOUND_SMTP_MAX_BYTES", async () => {
    const to = uniqueEmail("dsn-policy");
    const { emailId, returnPath } = await sentReturnPath(to);
    await returnReport(
      returnPath,
      deliveryStatusReport({
        returnPath,
        recipient: to,
        action: "failed",
        status: "5.7.1",
        diagnostic: "550 5.7.1 message refused as spam",
        id: `policy-${emailId}`,
      }),
    );
    const activity = await eventually(
      () => activityOf(emailId),
      (items) => items.some((item) => item.type === "email.bounce"),
    );
    expect(activity.map((item) => item.type)).toContain("email.bounce");
    expect((await send(to)).status).toBe(200);

    const padding = "x".repeat(76);
    const huge = `${deliveryStatusReport({ returnPath, recipient: to, action: "failed", status: "5.1.1", diagnostic: "550 5.1.1 unknown", id: `huge-${emailId}` })}${`${padding}\r\n`.repeat(Math.ceil(inboundSmtp.maxMessageBytes / 78) + 10)}`;
    await expect(returnReport(returnPath, huge)).rejects.toMatchObject({ responseCode: 552 });
    expect((await send(to)).status).toBe(200);
  });
});
