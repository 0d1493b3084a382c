import type { FieldViolation } from "@herald/errors";
import { isReservedHeaderName, reservedHeaderNames } from "../providers/message.js";
import { isId } from "./ids.js";

export type EmailCategory = "TRANSACTIONAL" | "CAMPAIGN" | "WORKFLOW";

/** ARCHITECTURE.md "Sending": the email row's statuses; a later event never moves an email back. */
export const emailStatuses = ["PENDING", "SENDING", "SENT", "DELIVERED", "OPENED", "CLICKED", "BOUNCED", "COMPLAINED", "FAILED"] as const;
export type EmailStatus = (typeof emailStatuses)[number];

export interface MailboxInput {
  email: string;
  name?: string;
}

export interface AttachmentInput {
  filename: string;
  content: Uint8Array;
  contentType: string;
}

/** One rendered email as the callers of the queue hand it over. */
/** Strings rendered where the Liquid variables unsubscribeUrl, subscribeUrl and manageUrl go; empty: none. */
export interface RecipientLinkMarkers {
  unsubscribeUrl: string;
  subscribeUrl: string;
  manageUrl: string;
}

export interface EmailInput {
  /** The email's id, when the caller chose it before storing (links in its body name it); a new one otherwise. */
  id?: string;
  idempotencyKey?: string;
  contactId?: string;
  to: MailboxInput;
  from: MailboxInput;
  replyTo?: MailboxInput;
  subject: string;
  html: string;
  headers?: Record<string, string>;
  attachments?: AttachmentInput[];
  listUnsubscribe?: { url: string; mailto?: string };
  /** Where the caller rendered the recipient's links: with a contact, its signed links replace them. */
  linkMarkers?: RecipientLinkMarkers;
  category?: EmailCategory;
  templateId?: string;
  campaignId?: string;
  workflowId?: string;
}

/** The limits on attachments (SPEC.md "Limits"): ten files, 10 MB together by default (SEND_ATTACHMENTS_MAX_BYTES). */
export const attachmentLimits = { count: 10, totalBytes: 10 * 1024 * 1024 } as const;

/** Bytes as a reader counts them: `10 MB`, `512 KB`. */
const sizeOf = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${+(bytes / (1024 * 1024)).toFixed(1)} MB` : `${+(bytes / 1024).toFixed(1)} KB`;

/**
 * Ours (docs/api-decisions.md "POST /v1/send"): SPEC.md bounds each header value, not how many there are;
 * a message with tens of thousands of headers would cost its build more than any send should.
 */
export const headerLimits = { count: 100, valueLength: 998 } as const;

/** A display name: what fits one header line with room for its address. */
export const mailboxNameMaxLength = 320;

/**
 * The gateway's Idempotency-Key (at most 255 characters) travels as `<time of its first use> <key>` and
 * /v1/send enqueues recipient i under `<that>:<i>`: room for both, and for internal callers' own keys.
 */
export const idempotencyKeyMaxLength = 512;

const lineBreak = /[\r\n\0]/;

/** One header line's worth of text: no CR, LF or NUL. */
export const isOneLine = (text: string): boolean => !lineBreak.test(text);

/** A display name, when there is one, is one line of at most 320 characters. */
export const mailboxNameViolations = (field: string, name: string | undefined): FieldViolation[] =>
  name === undefined || (isOneLine(name) && name.length <= mailboxNameMaxLength)
    ? []
    : [{ field, message: `must be one line of at most ${mailboxNameMaxLength} characters`, code: "invalid_string" }];

/** The attachments' size together, decoded. */
export const attachmentBytesOf = (attachments: readonly AttachmentInput[]): number =>
  attachments.reduce((sum, attachment) => sum + attachment.content.byteLength, 0);
const headerName = /^[\x21-\x39\x3b-\x7e]+$/;
// Deliberately loose (one @, no spaces or angle brackets, a dot in the domain): /v1/send validates addresses for users.
const address = /^[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+\.[^\s@<>()",;:\\]+$/;

/** An email address in the loose sense the queue and /v1/verify accept (trimmed; RFC 5321 caps it at 254 characters). */
export const isEmailAddress = (email: string): boolean => email.length <= 254 && address.test(email);

/** The address as the queue stores and compares it: trimmed, lower case. */
export const normaliseAddress = (email: string): string => email.trim().toLowerCase();

/** The domain of an address, lower case; "" when it has none. */
export const domainOfAddress = (email: string): string => {
  const at = email.lastIndexOf("@");
  return at < 0 ? "" : email.slice(at + 1).toLowerCase();
};

/** Custom headers (SPEC.md "Limits"): no CR or LF, values of at most 998 characters, none that Herald sets itself, at most 100. */
export function headerViolations(headers: Record<string, string>): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const entries = Object.entries(headers);
  if (entries.length > headerLimits.count) {
    return [{ field: "headers", message: `must be at most ${headerLimits.count} headers`, code: "too_big" }];
  }
  for (const [name, value] of entries) {
    if (!headerName.test(name))
      violations.push({ field: `headers.${name}`, message: "is not a valid header name", code: "invalid_string" });
    else if (isReservedHeaderName(name)) {
      const message = reservedHeaderNames.has(name.toLowerCase())
        ? "is set by Herald"
        : "is written only by relaying and verifying servers";
      violations.push({ field: `headers.${name}`, message, code: "reserved_header" });
    }
    if (!isOneLine(value) || value.length > headerLimits.valueLength) {
      violations.push({
        field: `headers.${name}`,
        message: `must be one line of at most ${headerLimits.valueLength} characters`,
        code: "invalid_string",
      });
    }
  }
  return violations;
}

/** The attachment rules of SPEC.md: ten files, `maxBytes` together (10 MB by default), each with a one-line name and a MIME type. */
export function attachmentViolations(
  attachments: readonly AttachmentInput[],
  maxBytes: number = attachmentLimits.totalBytes,
): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const add = (field: string, message: string, code = "invalid") => violations.push({ field, message, code });
  if (attachments.length > attachmentLimits.count) add("attachments", `must be at most ${attachmentLimits.count}`, "too_big");
  if (attachmentBytesOf(attachments) > maxBytes) add("attachments", `must be at most ${sizeOf(maxBytes)} together`, "too_big");
  attachments.forEach((attachment, index) => {
    if (attachment.filename.length < 1 || attachment.filename.length > 255 || lineBreak.test(attachment.filename)) {
      add(`attachments[${index}].filename`, "must be one line of 1 to 255 characters");
    }
    if (!/^[\w.+-]+\/[\w.+-]+$/.test(attachment.contentType)) add(`attachments[${index}].contentType`, "must be a MIME type");
  });
  return violations;
}

/** What is wrong with an email before it may enter the queue; empty when nothing is. */
export function emailInputViolations(input: EmailInput, attachmentMaxBytes: number = attachmentLimits.totalBytes): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const add = (field: string, message: string, code = "invalid") => violations.push({ field, message, code });
  const mailbox = (field: string, value: MailboxInput | undefined, required: boolean) => {
    if (!value) {
      if (required) add(field, "is required", "required");
      return;
    }
    const email = value.email.trim();
    if (!isEmailAddress(email)) add(`${field}.email`, "must be an email address", "invalid_email");
    violations.push(...mailboxNameViolations(`${field}.name`, value.name));
  };
  const optionalId = (field: string, value: string | undefined) => {
    if (value !== undefined && value !== "" && !isId(value)) add(field, "must be a uuid");
  };

  if (input.idempotencyKey !== undefined && (input.idempotencyKey.length > idempotencyKeyMaxLength || !isOneLine(input.idempotencyKey))) {
    add("idempotencyKey", `must be one line of at most ${idempotencyKeyMaxLength} characters`);
  }
  optionalId("id", input.id);
  optionalId("contactId", input.contactId);
  optionalId("templateId", input.templateId);
  optionalId("campaignId", input.campaignId);
  optionalId("workflowId", input.workflowId);
  mailbox("to", input.to, true);
  mailbox("from", input.from, true);
  mailbox("replyTo", input.replyTo, false);
  if (input.subject.length < 1 || input.subject.length > 998 || lineBreak.test(input.subject)) {
    add("subject", "must be one line of 1 to 998 characters");
  }
  if (input.html.length < 1) add("html", "must not be empty", "required");
  violations.push(...headerViolations(input.headers ?? {}));
  violations.push(...attachmentViolations(input.attachments ?? [], attachmentMaxBytes));
  if (input.listUnsubscribe !== undefined) {
    const { url, mailto } = input.listUnsubscribe;
    if (!/^https?:\/\/[^\s<>,]+$/.test(url)) add("listUnsubscribe.url", "must be an http(s) URL without spaces or commas");
    if (mailto !== undefined && mailto !== "" && /[\s<>,\0]/.test(mailto)) add("listUnsubscribe.mailto", "must be a mailto address");
  }
  return violations;
}
