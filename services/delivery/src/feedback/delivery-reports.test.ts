import { describe, expect, it } from "vitest";
import { fieldGroups, readReport } from "./delivery-reports.js";

/** A multipart/report as receivers write them: prose, the machine-readable part, the original's headers. */
function report(options: {
  reportType: string;
  machinePart: { type: string; body: string };
  messageId?: string;
  original?: "headers" | "message";
}) {
  const original =
    options.original === "message"
      ? "Content-Type: message/rfc822\r\n\r\nReturn-Path: <bounce+0123456789abcdef0123456789abcdef-0011223344556677@bounces.herald.test>\r\nFrom: hello@herald.test\r\nTo: jane@example.net\r\nMessage-ID: <original@herald.test>\r\nSubject: Hi\r\n\r\nHello Jane\r\n"
      : "Content-Type: text/rfc822-headers\r\n\r\nReturn-Path: <bounce+0123456789abcdef0123456789abcdef-0011223344556677@bounces.herald.test>\r\nFrom: hello@herald.test\r\nTo: jane@example.net\r\nMessage-ID: <original@herald.test>\r\n";
  return Buffer.from(
    [
      "From: MAILER-DAEMON@mx.example.net",
      "To: bounce+00000000000000000000000000000000-0000000000000000@bounces.herald.test",
      "Subject: Undelivered Mail Returned to Sender",
      ...(options.messageId ? [`Message-ID: ${options.messageId}`] : []),
      "Date: Mon, 23 Nov 2026 18:00:00 +0000",
      "MIME-Version: 1.0",
      `Content-Type: multipart/report; report-type=${options.reportType};`,
      '\tboundary="b1"',
      "",
      "--b1",
      "Content-Type: text/plain",
      "",
      "Your message could not be delivered.",
      "",
      "--b1",
      `Content-Type: ${options.machinePart.type}`,
      "",
      options.machinePart.body,
      "--b1",
      original,
      "--b1--",
      "",
    ].join("\r\n"),
  );
}

const deliveryStatus = (recipient: string) =>
  ["Reporting-MTA: dns; mx.example.net", "Arrival-Date: Mon, 23 Nov 2026 17:59:58 +0000", "", recipient, ""].join("\r\n");

describe("reading delivery status notifications and feedback reports", () => {
  it("reads fields group by group, folding continuation lines", () => {
    expect(fieldGroups("A: 1\nB-Field: two\n  and more\n\nAction: failed\r\n\r\n")).toEqual([
      new Map([
        ["a", "1"],
        ["b-field", "two and more"],
      ]),
      new Map([["action", "failed"]]),
    ]);
  });

  it("makes a permanent failure a bounce that suppresses, with the status and the remote's words", async () => {
    const read = await readReport(
      report({
        reportType: "delivery-status",
        messageId: "<dsn-1@mx.example.net>",
        machinePart: {
          type: "message/delivery-status",
          body: deliveryStatus(
            [
              "Final-Recipient: rfc822; jane@example.net",
              "Action: failed",
              "Status: 5.1.1",
              "Diagnostic-Code: smtp; 550 5.1.1 <jane@example.net>: Recipient address",
              "    rejected: User unknown",
            ].join("\r\n"),
          ),
        },
      }),
    );
    expect(read).toEqual({
      reportId: "<dsn-1@mx.example.net>",
      event: {
        type: "email.bounce",
        providerMessageId: undefined,
        recipients: [],
        reason: "5.1.1: 550 5.1.1 <jane@example.net>: Recipient address rejected: User unknown",
        suppress: true,
        occurredAt: new Date("2026-11-23T17:59:58Z"),
      },
      originalReturnPaths: ["bounce+0123456789abcdef0123456789abcdef-0011223344556677@bounces.herald.test"],
    });
  });

  it("makes a transient failure and a delay deferrals, and a delivery a delivery; none suppresses", async () => {
    const eventOf = async (recipient: string) =>
      (
        await readReport(
          report({ reportType: "delivery-status", machinePart: { type: "message/delivery-status", body: deliveryStatus(recipient) } }),
        )
      )?.event;
    expect(
      await eventOf(
        "Final-Recipient: rfc822; jane@example.net\nAction: failed\nStatus: 4.2.2\nDiagnostic-Code: smtp; 452 4.2.2 mailbox full",
      ),
    ).toMatchObject({
      type: "email.deferred",
      suppress: false,
      reason: "4.2.2: 452 4.2.2 mailbox full",
    });
    // A policy block bounces the email but does not blame the address; neither does a failure without a status.
    expect(
      await eventOf("Final-Recipient: rfc822; jane@example.net\nAction: failed\nStatus: 5.7.1\nDiagnostic-Code: smtp; 550 5.7.1 blocked"),
    ).toMatchObject({
      type: "email.bounce",
      suppress: false,
    });
    expect(await eventOf("Final-Recipient: rfc822; jane@example.net\nAction: failed")).toMatchObject({
      type: "email.bounce",
      suppress: false,
    });
    expect(await eventOf("Final-Recipient: rfc822; jane@example.net\nAction: failed\nStatus: 5.2.1")).toMatchObject({ suppress: true });
    // Exim's generic 5.0.0: the remote's own reply tells; 5.1.8 is about the sender's address, not the recipient's.
    expect(
      await eventOf(
        "Final-Recipient: rfc822; jane@example.net\nAction: failed\nStatus: 5.0.0\nDiagnostic-Code: smtp; 550 5.1.1 <jane@example.net>: user unknown",
      ),
    ).toMatchObject({ type: "email.bounce", suppress: true, reason: "5.1.1: 550 5.1.1 <jane@example.net>: user unknown" });
    expect(
      await eventOf("Final-Recipient: rfc822; jane@example.net\nAction: failed\nStatus: 5.0.0\nDiagnostic-Code: smtp; 550 rejected"),
    ).toMatchObject({
      type: "email.bounce",
      suppress: false,
    });
    expect(await eventOf("Final-Recipient: rfc822; jane@example.net\nAction: failed\nStatus: 5.1.8")).toMatchObject({ suppress: false });
    expect(await eventOf("Final-Recipient: rfc822; jane@example.net\nAction: delayed\nStatus: 4.4.1")).toMatchObject({
      type: "email.deferred",
      suppress: false,
    });
    expect(await eventOf("Final-Recipient: rfc822; jane@example.net\nAction: delivered\nStatus: 2.0.0")).toMatchObject({
      type: "email.delivery",
      suppress: false,
    });
    expect(await eventOf("Final-Recipient: rfc822; jane@example.net\nAction: relayed\nStatus: 2.0.0")).toBeUndefined();
  });

  it("makes an abuse feedback report a complaint, but not a not-spam one; the original may come whole", async () => {
    const feedback = (type: string) =>
      readReport(
        report({
          reportType: "feedback-report",
          original: "message",
          machinePart: {
            type: "message/feedback-report",
            body: `Feedback-Type: ${type}\r\nUser-Agent: SomeISP-FBL/1.0\r\nVersion: 1\r\nArrival-Date: Mon, 23 Nov 2026 17:00:00 +0000\r\n`,
          },
        }),
      );
    expect((await feedback("abuse"))?.originalReturnPaths).toEqual([
      "bounce+0123456789abcdef0123456789abcdef-0011223344556677@bounces.herald.test",
    ]);
    expect((await feedback("abuse"))?.event).toMatchObject({
      type: "email.complaint",
      suppress: true,
      reason: "Complaint: abuse",
      occurredAt: new Date("2026-11-23T17:00:00Z"),
    });
    expect(await feedback("not-spam")).toBeUndefined();
  });

  it("answers nothing for what is no report: an auto-reply, prose only, garbage; a report without Message-ID is known by its digest", async () => {
    const autoReply = Buffer.from("From: jane@example.net\r\nSubject: Out of office\r\nAuto-Submitted: auto-replied\r\n\r\nI am away.\r\n");
    expect(await readReport(autoReply)).toBeUndefined();
    expect(await readReport(Buffer.from([0, 1, 2, 3, 255, 254]))).toBeUndefined();
    const anonymous = await readReport(
      report({
        reportType: "delivery-status",
        machinePart: {
          type: "message/delivery-status",
          body: deliveryStatus("Final-Recipient: rfc822; jane@example.net\nAction: failed\nStatus: 5.0.0"),
        },
      }),
    );
    expect(anonymous?.reportId).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("finds every Return-Path of the returned original, bracketed or bare, and reads a report part's first 64 KB only", async () => {
    const raw = Buffer.from(
      [
        "From: feedback@fbl.test",
        "Message-ID: <arf@fbl.test>",
        'Content-Type: multipart/report; report-type=feedback-report; boundary="b"',
        "",
        "--b",
        "Content-Type: message/feedback-report",
        "",
        "Feedback-Type: abuse",
        `X-Padding: ${"p".repeat(70 * 1024)}`,
        "",
        "--b",
        "Content-Type: text/rfc822-headers",
        "",
        "Return-Path: bounce+newest@bounces.herald.test",
        "Received: by mx.fbl.test",
        "return-path: <bounce+older@bounces.herald.test>",
        "Return-Path: <>",
        "",
        "--b--",
        "",
      ].join("\r\n"),
    );
    const read = await readReport(raw);
    expect(read?.event.type).toBe("email.complaint");
    expect(read?.originalReturnPaths).toEqual(["bounce+newest@bounces.herald.test", "bounce+older@bounces.herald.test"]);
  });
});
