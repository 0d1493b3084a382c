import { createHash } from "node:crypto";
import PostalMime from "postal-mime";
import type { ProviderEmailEvent } from "./email-events.js";

/** What a report received over SMTP says of the email it returns: the event, and how to recognise a repeat. */
export interface ReceivedReport {
  /** The report's own Message-ID, or a digest of it when it has none: the same report delivered twice is one. */
  reportId: string;
  /** The event, its email still to be named by whoever received the report (its return path). */
  event: Omit<ProviderEmailEvent, "emailId">;
  /**
   * The `Return-Path` headers of the returned original (its headers or the whole message): the
   * envelope sender the receiver saw, which for our emails is their return path. All of them,
   * newest first; none when the report returns no headers.
   */
  originalReturnPaths: string[];
}

type Fields = Map<string, string>;

/**
 * The field groups of a delivery-status or feedback-report body (RFC 3464 section 2.1,
 * RFC 5965 section 3): header-style fields, groups separated by blank lines, continuation
 * lines folded in. Names are lower-cased.
 */
export function fieldGroups(text: string): Fields[] {
  return text
    .replace(/\r\n?/g, "\n")
    .split(/\n[ \t]*\n/)
    .map((block) => {
      const fields: Fields = new Map();
      let last: string | undefined;
      for (const line of block.split("\n")) {
        if (/^[ \t]/.test(line) && last !== undefined) {
          fields.set(last, `${fields.get(last) ?? ""} ${line.trim()}`);
          continue;
        }
        const colon = line.indexOf(":");
        if (colon <= 0) continue;
        last = line.slice(0, colon).trim().toLowerCase();
        fields.set(last, line.slice(colon + 1).trim());
      }
      return fields;
    })
    .filter((fields) => fields.size > 0);
}

/** `rfc822; jane@example.net` → `jane@example.net`; `smtp; 550 5.1.1 …` → `550 5.1.1 …`. */
const typedValue = (value: string | undefined): string => (value ?? "").replace(/^[a-z0-9-]+;\s*/i, "").trim();

const reasonOf = (...parts: string[]): string =>
  parts
    .filter((part) => part !== "")
    .join(": ")
    .slice(0, 1_000);

function timeOf(...values: Array<string | undefined>): Date {
  for (const value of values) {
    const time = new Date(value ?? "");
    if (!Number.isNaN(time.getTime())) return time;
  }
  return new Date();
}

/** Report parts are a few lines long; only their first 64 KB are read, however much a sender puts there. */
const reportPartLimit = 64 * 1024;

const reportText = (content: ArrayBuffer | Uint8Array | string): string => {
  if (typeof content === "string") return content.slice(0, reportPartLimit);
  const bytes = content instanceof ArrayBuffer ? new Uint8Array(content) : content;
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, reportPartLimit)).toString("utf8");
};

/** Every Return-Path of a header block (up to its first blank line), with or without angle brackets; `<>` is none. */
function returnPathsOf(message: string): string[] {
  const headers = message.replace(/\r\n?/g, "\n").split(/\n[ \t]*\n/, 1)[0] ?? "";
  return [...headers.matchAll(/^return-path:[ \t]*<?([^<>\s]+)>?/gim)].map((match) => match[1] ?? "").filter((address) => address !== "");
}

/** An RFC 3463 status (`5.1.1`) at the start of a text, or anywhere in it. */
const statusAtStart = /^([245]\.\d{1,3}\.\d{1,3})\b/;
const statusAnywhere = /\b([245]\.\d{1,3}\.\d{1,3})\b/;

/**
 * The status that says what failed: the Status field's, unless it is the generic x.0.0 (Exim
 * always writes 5.0.0, Postfix when the remote gave no enhanced code) or absent, when the
 * remote's own reply in Diagnostic-Code usually carries the precise one.
 */
function statusOf(status: string, diagnostic: string): string {
  const declared = statusAtStart.exec(status)?.[1] ?? "";
  if (declared !== "" && !declared.endsWith(".0.0")) return declared;
  return statusAnywhere.exec(diagnostic)?.[1] ?? declared;
}

/**
 * A permanent failure that blames the recipient's address (RFC 3463): no such mailbox or domain
 * (5.1.x, except 5.1.7 and 5.1.8, which are about the sender's address), a disabled mailbox
 * (5.2.1). A policy or reputation block (5.7.x), a message too big (5.3.4) or a failing system
 * are the sender's or the message's trouble: the next email may well arrive. The relay's own
 * refusals follow the same rule (classifySmtpError).
 */
const addressRefused = (status: string): boolean =>
  (/^5\.1\.\d{1,3}$/.test(status) && status !== "5.1.7" && status !== "5.1.8") || status === "5.2.1";

/**
 * The event of a delivery status notification (RFC 3464), from its first recipient group with
 * an action (Herald sends each email to one recipient): `failed` with a 5.x.x status (or none)
 * is a bounce, which suppresses the address when the status blames it (addressRefused);
 * `failed` with 4.x.x (the remote gave up on a transient error, a full mailbox say) and
 * `delayed` are `email.deferred`; `delivered` is `email.delivery`. Relayed and expanded say
 * nothing of the mailbox.
 */
function deliveryStatusEvent(groups: Fields[], occurredAtDefault: string | undefined): ReceivedReport["event"] | undefined {
  const [perMessage] = groups;
  for (const recipient of groups) {
    const action = recipient.get("action")?.toLowerCase();
    if (!action) continue;
    const diagnostic = typedValue(recipient.get("diagnostic-code"));
    const status = statusOf(typedValue(recipient.get("status")), diagnostic);
    const occurredAt = timeOf(recipient.get("last-attempt-date"), perMessage?.get("arrival-date"), occurredAtDefault);
    const base = { providerMessageId: undefined, recipients: [], occurredAt };
    if (action === "failed") {
      const permanent = !status.startsWith("4");
      return {
        ...base,
        type: permanent ? "email.bounce" : "email.deferred",
        reason: reasonOf(status || "failed", diagnostic),
        suppress: permanent && addressRefused(status),
      };
    }
    if (action === "delayed")
      return { ...base, type: "email.deferred", reason: reasonOf(`delayed ${status}`.trim(), diagnostic), suppress: false };
    if (action === "delivered") return { ...base, type: "email.delivery", reason: reasonOf(status, diagnostic), suppress: false };
  }
  return undefined;
}

/**
 * The event of an abuse feedback report (ARF, RFC 5965): a complaint, which suppresses the
 * address, unless the feedback type is `not-spam` (a recipient who rescued the email).
 */
function feedbackEvent(groups: Fields[], occurredAtDefault: string | undefined): ReceivedReport["event"] | undefined {
  const [report] = groups;
  const feedbackType = (report?.get("feedback-type") ?? "abuse").toLowerCase();
  if (feedbackType === "not-spam") return undefined;
  return {
    providerMessageId: undefined,
    recipients: [],
    type: "email.complaint",
    reason: reasonOf("Complaint", feedbackType),
    suppress: true,
    occurredAt: timeOf(report?.get("arrival-date"), report?.get("received-date"), occurredAtDefault),
  };
}

/**
 * Reads a message received at a return path: a delivery status notification or a feedback
 * report (multipart/report with its machine-readable part). Undefined for anything else that
 * arrives there (auto-replies, out-of-office notes, bounces in prose only), and for a message
 * that cannot be parsed: it is no report of ours to record.
 */
export async function readReport(raw: Buffer): Promise<ReceivedReport | undefined> {
  let email: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    email = await PostalMime.parse(raw, { forceRfc822Attachments: true });
  } catch {
    return undefined;
  }
  const part = (mimeType: string) => email.attachments.find((attachment) => attachment.mimeType.toLowerCase() === mimeType);
  const deliveryStatus = part("message/delivery-status") ?? part("message/global-delivery-status");
  const feedback = part("message/feedback-report");
  const event = deliveryStatus
    ? deliveryStatusEvent(fieldGroups(reportText(deliveryStatus.content)), email.date)
    : feedback
      ? feedbackEvent(fieldGroups(reportText(feedback.content)), email.date)
      : undefined;
  if (!event) return undefined;
  const reportId = email.messageId?.trim() || `sha256:${createHash("sha256").update(raw).digest("hex")}`;
  const original = part("text/rfc822-headers") ?? part("message/rfc822") ?? part("message/rfc822-headers");
  return { reportId, event, originalReturnPaths: original ? returnPathsOf(reportText(original.content)) : [] };
}
