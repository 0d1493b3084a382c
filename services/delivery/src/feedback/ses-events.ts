import type { ProviderEmailEvent } from "./email-events.js";

type Json = Record<string, unknown>;

const objectOf = (value: unknown): Json => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {});
const textOf = (value: unknown): string => (typeof value === "string" ? value : "");
const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function timeOf(value: unknown): Date {
  const time = new Date(textOf(value));
  return Number.isNaN(time.getTime()) ? new Date() : time;
}

function addressesOf(list: unknown, field = "emailAddress"): string[] {
  return listOf(list)
    .map((item) => (typeof item === "string" ? item : textOf(objectOf(item)[field])).trim().toLowerCase())
    .filter((address) => address !== "");
}

const reasonOf = (...parts: string[]): string =>
  parts
    .filter((part) => part !== "")
    .join(": ")
    .slice(0, 1_000);

/**
 * Reads the SES event an SNS notification carries: event publishing (`eventType`) or the
 * older identity notifications (`notificationType`), which share the body. A permanent
 * bounce and a complaint suppress the address; a transient bounce (SES stopped trying, the
 * mailbox was full, say) and a delivery delay are recorded as `email.deferred`, which
 * neither suppresses nor counts against the project's bounce rate. Undefined for anything
 * else (sends, rejects, SES's own opens and clicks: Herald tracks those itself).
 */
export function readSesEvent(message: string): ProviderEmailEvent | undefined {
  let body: Json;
  try {
    body = objectOf(JSON.parse(message));
  } catch {
    return undefined;
  }
  const mail = objectOf(body.mail);
  const sesMessageId = textOf(mail.messageId);
  if (!sesMessageId) return undefined;
  const header = listOf(mail.headers)
    .map(objectOf)
    .find((item) => textOf(item.name).toLowerCase() === "x-herald-email-id");
  const emailId = header ? textOf(header.value) || undefined : undefined;
  const base = { providerMessageId: sesMessageId, emailId };
  switch (textOf(body.eventType) || textOf(body.notificationType)) {
    case "Bounce": {
      const bounce = objectOf(body.bounce);
      const recipients = listOf(bounce.bouncedRecipients).map(objectOf);
      const diagnostic = textOf(recipients[0]?.diagnosticCode) || textOf(recipients[0]?.status);
      const permanent = textOf(bounce.bounceType) === "Permanent";
      return {
        ...base,
        type: permanent ? "email.bounce" : "email.deferred",
        recipients: addressesOf(recipients),
        reason: reasonOf(`${textOf(bounce.bounceType) || "Undetermined"} ${textOf(bounce.bounceSubType)}`.trim(), diagnostic),
        suppress: permanent,
        occurredAt: timeOf(bounce.timestamp),
      };
    }
    case "Complaint": {
      const complaint = objectOf(body.complaint);
      return {
        ...base,
        type: "email.complaint",
        recipients: addressesOf(complaint.complainedRecipients),
        reason: reasonOf("Complaint", textOf(complaint.complaintFeedbackType)),
        suppress: true,
        occurredAt: timeOf(complaint.timestamp),
      };
    }
    case "Delivery": {
      const delivery = objectOf(body.delivery);
      return {
        ...base,
        type: "email.delivery",
        recipients: addressesOf(delivery.recipients),
        reason: reasonOf(textOf(delivery.smtpResponse)),
        suppress: false,
        occurredAt: timeOf(delivery.timestamp),
      };
    }
    case "DeliveryDelay": {
      const delay = objectOf(body.deliveryDelay);
      const recipients = listOf(delay.delayedRecipients).map(objectOf);
      return {
        ...base,
        type: "email.deferred",
        recipients: addressesOf(recipients),
        reason: reasonOf(`Delayed ${textOf(delay.delayType)}`.trim(), textOf(recipients[0]?.diagnosticCode)),
        suppress: false,
        occurredAt: timeOf(delay.timestamp),
      };
    }
    default:
      return undefined;
  }
}
