import { randomUUID } from "node:crypto";
import type { SendMailOptions } from "nodemailer";

export interface Mailbox {
  email: string;
  name?: string;
}

export interface OutgoingAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

/** One rendered email for one recipient, as every provider takes it. */
export interface OutgoingEmail {
  /** Our email record's id: sent as `X-Herald-Email-ID` so that bounces and complaints find their way back. */
  emailId: string;
  from: Mailbox;
  to: Mailbox;
  replyTo?: Mailbox;
  subject: string;
  html: string;
  headers?: Record<string, string>;
  attachments?: OutgoingAttachment[];
  /** Marketing mail: `List-Unsubscribe` with an HTTPS one-click URL (and optionally a mailto) plus `List-Unsubscribe-Post` (RFC 8058). */
  listUnsubscribe?: { url: string; mailto?: string };
  /** The domain of the `Message-ID`: the sending domain. */
  messageIdDomain: string;
  /** A `Message-ID` fixed by the caller (`<id@domain>`): the queue sends the same one on every attempt. */
  messageId?: string;
  /** The envelope sender, where receivers send bounces (BOUNCE_DOMAIN); unset: the From address. */
  returnPath?: string;
}

// Spelt as nodemailer writes it (it capitalises a trailing "-Id"), so that what we name is what goes on the wire.
export const emailIdHeader = "X-Herald-Email-ID";

/**
 * Headers that the message itself or the platform sets. A custom header with one of these names
 * could change the sender (past domain verification), break the MIME structure or the DKIM
 * signature, or hide which record a bounce belongs to, so it is refused.
 */
export const reservedHeaderNames: ReadonlySet<string> = new Set(
  [
    "From",
    "Sender",
    "To",
    "Cc",
    "Bcc",
    "Reply-To",
    "Subject",
    "Date",
    "Message-ID",
    "Return-Path",
    "Received",
    "MIME-Version",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Content-Disposition",
    "DKIM-Signature",
    "List-Unsubscribe",
    "List-Unsubscribe-Post",
    emailIdHeader,
  ].map((name) => name.toLowerCase()),
);

/**
 * Header families that receiving servers trust as written by a relay or a verifier: a custom `Resent-From` could
 * pose as a forwarder, and forged `Authentication-Results` or `ARC-*` could claim checks that never ran.
 */
const reservedHeaderPrefixes = ["resent-", "arc-"] as const;

/** A custom header that is refused: one Herald sets, `Authentication-Results`, or any `Resent-*` or `ARC-*`. */
export function isReservedHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    reservedHeaderNames.has(lower) ||
    lower === "authentication-results" ||
    reservedHeaderPrefixes.some((prefix) => lower.startsWith(prefix))
  );
}

export type InvalidMessageReason = "line-break" | "header-name" | "reserved-header" | "list-unsubscribe-uri";

/** The email cannot be made into a safe message: sending it again will not help. */
export class InvalidMessageError extends Error {
  override readonly name = "InvalidMessageError";
  constructor(
    readonly reason: InvalidMessageReason,
    /** Which part of the email: `subject`, `from.name`, `headers.X-Campaign`, ... */
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

// RFC 5322 field-name: printable US-ASCII except the colon.
const headerNamePattern = /^[\x21-\x39\x3b-\x7e]+$/;
const lineBreakPattern = /[\r\n\0]/;

function requireSingleLine(field: string, value: string): string {
  if (lineBreakPattern.test(value)) throw new InvalidMessageError("line-break", field, `${field} must not contain CR, LF or NUL`);
  return value;
}

function mailbox(field: string, value: Mailbox): { address: string; name: string } {
  return { address: requireSingleLine(`${field}.email`, value.email), name: requireSingleLine(`${field}.name`, value.name ?? "") };
}

function customHeaders(headers: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    const field = `headers.${name}`;
    if (!headerNamePattern.test(name))
      throw new InvalidMessageError("header-name", field, `header name ${JSON.stringify(name)} is not valid`);
    if (isReservedHeaderName(name)) throw new InvalidMessageError("reserved-header", field, `header ${name} is set by Herald`);
    requireSingleLine(field, value);
  }
  return headers;
}

/** `https://…` and `mailto:…` as List-Unsubscribe takes them: each in angle brackets, the HTTPS one first (RFC 8058). */
function listUnsubscribeValue(listUnsubscribe: { url: string; mailto?: string }): string {
  const uris = [listUnsubscribe.url];
  if (listUnsubscribe.mailto !== undefined) {
    uris.push(listUnsubscribe.mailto.startsWith("mailto:") ? listUnsubscribe.mailto : `mailto:${listUnsubscribe.mailto}`);
  }
  for (const uri of uris) {
    if (/[\s<>,\0]/.test(uri)) {
      throw new InvalidMessageError("list-unsubscribe-uri", "listUnsubscribe", `${JSON.stringify(uri)} is not a URI for List-Unsubscribe`);
    }
  }
  return uris.map((uri) => `<${uri}>`).join(", ");
}

export function newMessageId(domain: string): string {
  return `<${randomUUID()}@${requireSingleLine("messageIdDomain", domain)}>`;
}

/**
 * The nodemailer message of an email, without its plain-text part and its DKIM options, which are
 * added where it is built (signed-message.ts). Every header is checked for line
 * breaks here again, although /v1/send validates them: this is the last place before the wire.
 */
export function toNodemailerMessage(email: OutgoingEmail): SendMailOptions & { messageId: string; html: string } {
  const headers: Record<string, string> = { ...customHeaders(email.headers ?? {}) };
  headers[emailIdHeader] = requireSingleLine("emailId", email.emailId);
  if (email.listUnsubscribe) {
    headers["List-Unsubscribe"] = listUnsubscribeValue(email.listUnsubscribe);
    headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click";
  }
  return {
    messageId: email.messageId === undefined ? newMessageId(email.messageIdDomain) : requireSingleLine("messageId", email.messageId),
    from: mailbox("from", email.from),
    to: mailbox("to", email.to),
    ...(email.replyTo ? { replyTo: mailbox("replyTo", email.replyTo) } : {}),
    subject: requireSingleLine("subject", email.subject),
    html: email.html,
    headers,
    attachments: (email.attachments ?? []).map((attachment, index) => ({
      filename: requireSingleLine(`attachments[${index}].filename`, attachment.filename),
      content: attachment.content,
      contentType: requireSingleLine(`attachments[${index}].contentType`, attachment.contentType),
    })),
    // No "X-Mailer: Nodemailer": it tells nothing to the recipient and fingerprints the platform.
    xMailer: false,
    ...(email.returnPath === undefined
      ? {}
      : { envelope: { from: requireSingleLine("returnPath", email.returnPath), to: [requireSingleLine("to.email", email.to.email)] } }),
  };
}
