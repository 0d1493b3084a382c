import { createTransport } from "nodemailer";

/** A receiver's mail server returning a report: from the null sender, over SMTP to delivery's INBOUND_SMTP_PORT. */
export function receiverMta(port: number) {
  const transport = createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
  return (to: string, raw: string) => transport.sendMail({ envelope: { from: "", to: [to] }, raw });
}

/** A delivery status notification (RFC 3464) as Postfix writes one, to the email's return path. */
export function deliveryStatusReport(options: {
  returnPath: string;
  recipient: string;
  id: string;
  action?: string;
  status?: string;
  diagnostic?: string;
}): string {
  return [
    "From: MAILER-DAEMON@mx.receiver.test (Mail Delivery System)",
    `To: ${options.returnPath}`,
    "Subject: Undelivered Mail Returned to Sender",
    `Message-ID: <${options.id}@mx.receiver.test>`,
    "MIME-Version: 1.0",
    'Content-Type: multipart/report; report-type=delivery-status; boundary="report"',
    "",
    "--report",
    "Content-Type: text/plain",
    "",
    "This is the mail system at host mx.receiver.test. Your message could not be delivered.",
    "",
    "--report",
    "Content-Type: message/delivery-status",
    "",
    "Reporting-MTA: dns; mx.receiver.test",
    "",
    `Final-Recipient: rfc822; ${options.recipient}`,
    `Action: ${options.action ?? "failed"}`,
    `Status: ${options.status ?? "5.1.1"}`,
    `Diagnostic-Code: smtp; ${options.diagnostic ?? "550 5.1.1 user unknown"}`,
    "",
    "--report",
    "Content-Type: text/rfc822-headers",
    "",
    `To: ${options.recipient}`,
    "Subject: Hi",
    "",
    "--report--",
    "",
  ].join("\r\n");
}

/**
 * A feedback loop's complaint (ARF, RFC 5965) to `to` (fbl@ the bounce domain), quoting the original email's headers:
 * its return path (left out when not given), From, Message-ID and X-Herald-Email-ID.
 */
export function feedbackReport(options: {
  to: string;
  id: string;
  emailId: string;
  returnPath?: string;
  from?: string;
  messageId?: string;
}): string {
  return [
    "From: feedback@fbl.receiver.test",
    `To: ${options.to}`,
    "Subject: FW: Hi",
    `Message-ID: <arf-${options.id}@fbl.receiver.test>`,
    "MIME-Version: 1.0",
    'Content-Type: multipart/report; report-type=feedback-report; boundary="arf"',
    "",
    "--arf",
    "Content-Type: text/plain",
    "",
    "This is an email abuse report.",
    "",
    "--arf",
    "Content-Type: message/feedback-report",
    "",
    "Feedback-Type: abuse",
    "User-Agent: ReceiverFBL/1.0",
    "Version: 1",
    "",
    "--arf",
    "Content-Type: message/rfc822",
    "",
    ...(options.returnPath ? [`Return-Path: <${options.returnPath}>`] : []),
    ...(options.from ? [`From: ${options.from}`] : []),
    "To: redacted@receiver.test",
    ...(options.messageId ? [`Message-ID: ${options.messageId}`] : []),
    `X-Herald-Email-ID: ${options.emailId}`,
    "Subject: Hi",
    "",
    "Hi",
    "",
    "--arf--",
    "",
  ].join("\r\n");
}
