import type { JsonObject } from "@bufbuild/protobuf";
import type { FieldViolation } from "@herald/errors";
import {
  type AttachmentInput,
  attachmentBytesOf,
  attachmentLimits,
  attachmentViolations,
  headerViolations,
  isOneLine,
  type MailboxInput,
  mailboxNameViolations,
} from "./email-input.js";
import { isId } from "./ids.js";
import { parseAddress } from "./template-fields.js";

/** One POST /v1/send as delivery receives it: the REST shapes (string or object, one or many) already unified. */
export interface SendRequest {
  idempotencyKey?: string;
  to: MailboxInput[];
  subject?: string;
  body?: string;
  templateId?: string;
  /** `email` may be "Name <address>". */
  from?: MailboxInput;
  /** The deprecated `name`: the sender's name when `from` has none. */
  senderName?: string;
  subscribed?: boolean;
  data?: JsonObject;
  headers: Record<string, string>;
  replyTo?: string;
  attachments: AttachmentInput[];
}

/** SPEC.md "Limits" and ours (docs/api-decisions.md "POST /v1/send"). */
export const sendLimits = {
  /** Recipients of one call: each is its own upsert and render, so a call stays short. */
  recipients: 50,
  subject: 998,
  /** A mailbox as text ("Name <address>"), as the gateway caps it. */
  mailbox: 1_000,
  /** The whole message as sent, attachments base64-encoded. */
  messageBytes: 40 * 1024 * 1024,
  /**
   * Milliseconds of Liquid rendering one call may take, all its recipients together: rendering runs on delivery's
   * event loop, so one heavy call must not hold up other tenants' sends, clicks and unsubscribes for long.
   */
  renderMs: 1_000,
  /** The attachments of one call, counted once per recipient: every recipient's email is stored with its own copy. */
  storedAttachmentBytes: 40 * 1024 * 1024,
} as const;

const violation = (field: string, message: string, code: string): FieldViolation => ({ field, message, code });

/**
 * "Name <address>", "<address>" or a bare address, with the name unquoted. A scan rather than one pattern: the
 * pattern it replaces backtracked on long runs of spaces (issue 20). Callers cap the text first (sendLimits.mailbox).
 */
export function splitMailbox(text: string): MailboxInput {
  const trimmed = text.trim();
  const open = trimmed.indexOf("<");
  if (open < 0 || !trimmed.endsWith(">")) return { email: trimmed };
  const address = trimmed.slice(open + 1, -1);
  let display = trimmed.slice(0, open).trimEnd();
  if (display.startsWith('"')) display = display.slice(1);
  if (display.endsWith('"')) display = display.slice(0, -1);
  if (address.length === 0 || /[<>]/.test(address) || /["<>]/.test(display)) return { email: trimmed };
  const name = display.trim();
  return { email: address.trim(), ...(name ? { name } : {}) };
}

/** The recipient field as the REST body names it: `to` for one, `to[i]` in a list. */
export const recipientField = (request: Pick<SendRequest, "to">, index: number): string =>
  request.to.length === 1 ? "to" : `to[${index}]`;

/**
 * Everything about the request that can be checked without the database, field by field
 * (the Liquid and the template come next, in sends.ts).
 */
export function sendRequestViolations(request: SendRequest, attachmentMaxBytes: number = attachmentLimits.totalBytes): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (request.to.length === 0) violations.push(violation("to", "needs at least one recipient", "too_small"));
  if (request.to.length > sendLimits.recipients) {
    violations.push(violation("to", `must name at most ${sendLimits.recipients} recipients`, "too_big"));
  }
  request.to.forEach((recipient, index) => {
    const field = recipientField(request, index);
    if (!parseAddress(recipient.email).ok) violations.push(violation(field, "must be an email address", "invalid_string"));
    violations.push(...mailboxNameViolations(`${field}.name`, recipient.name));
  });
  if (request.templateId !== undefined && !isId(request.templateId)) {
    violations.push(violation("template", "must be a template id (uuid)", "invalid_string"));
  }
  const withoutTemplate = request.templateId === undefined;
  if (request.subject === undefined) {
    if (withoutTemplate) violations.push(violation("subject", "is required when no template is given", "required"));
  } else if (request.subject.length < 1 || request.subject.length > sendLimits.subject || !isOneLine(request.subject)) {
    violations.push(violation("subject", `must be one line of 1 to ${sendLimits.subject} characters`, "invalid_string"));
  }
  if (request.body === undefined) {
    if (withoutTemplate) violations.push(violation("body", "is required when no template is given", "required"));
  } else if (request.body.length < 1) {
    violations.push(violation("body", "must not be empty", "too_small"));
  }
  if (request.from !== undefined && request.from.email.length > sendLimits.mailbox) {
    violations.push(violation("from", `must be at most ${sendLimits.mailbox} characters`, "too_big"));
  } else if (request.from !== undefined) {
    const sender = splitMailbox(request.from.email);
    if (!parseAddress(sender.email).ok) violations.push(violation("from", "must be an email address", "invalid_string"));
    violations.push(...mailboxNameViolations("from.name", request.from.name ?? sender.name));
  }
  violations.push(...mailboxNameViolations("name", request.senderName));
  if (request.replyTo !== undefined && !parseAddress(request.replyTo).ok) {
    violations.push(violation("reply", "must be an email address", "invalid_string"));
  }
  violations.push(...headerViolations(request.headers), ...attachmentViolations(request.attachments, attachmentMaxBytes));
  if (attachmentBytesOf(request.attachments) * request.to.length > sendLimits.storedAttachmentBytes) {
    violations.push(
      violation("attachments", "are stored once for each recipient: at most 40 MB for all recipients of one call together", "too_big"),
    );
  }
  return violations;
}

/**
 * The size of the message once built, from above: the HTML twice (HTML and its plain-text
 * part), attachments base64-encoded (4/3, plus line breaks), the custom headers, and 16 KB
 * for the headers Herald writes.
 */
export function estimatedMessageBytes(
  html: string,
  subject: string,
  headers: Record<string, string>,
  attachments: readonly AttachmentInput[],
): number {
  const attachmentBytes = attachments.reduce((sum, attachment) => sum + Math.ceil((attachment.content.byteLength * 4) / 3) * 1.03, 0);
  const headerBytes = Object.entries(headers).reduce((sum, [name, value]) => sum + Buffer.byteLength(`${name}: ${value}\r\n`), 0);
  return 2 * Buffer.byteLength(html) + Buffer.byteLength(subject) + attachmentBytes + headerBytes + 16 * 1024;
}
