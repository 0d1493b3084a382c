import type { KeyObject } from "node:crypto";
import { DomainError } from "@herald/errors";
import type { Db } from "../db/client.js";
import { applySesEvent, recordNotification, suppressAddresses } from "../db/provider-events.js";
import { isId } from "../domain/ids.js";
import { writeEmailActivity } from "../events/email-activity-outbox.js";
import { parseSnsMessage, snsUrl, verifySnsSignature } from "../providers/sns-message.js";
import { readSesEvent } from "./ses-events.js";

export type SesNotifications = ReturnType<typeof createSesNotifications>;

export type NotificationOutcome = "confirmed" | "recorded" | "ignored";

/** The processed_events consumer name of SNS notifications: a redelivered one is recognised by its MessageId. */
const consumer = "ses.sns";

/**
 * POST /webhooks/ses: Amazon SNS messages from the topics of SES_SNS_TOPIC_ARNS. Only those
 * topics are heard (anyone can have SNS sign a message, from a topic of their own), and only
 * with a signature that verifies. A subscription to one of them is confirmed; a notification's
 * SES event (readSesEvent) is recorded on its email with its activity event, and a permanent
 * bounce or a complaint suppresses the address, all in one transaction.
 */
export function createSesNotifications(deps: {
  db: Db;
  topicArns: ReadonlySet<string>;
  certificateOf: (url: URL) => Promise<KeyObject>;
  /** Visits the SubscribeURL of a confirmation (an SNS address, checked before). */
  confirm: (url: URL) => Promise<void>;
  nudgeOutbox: () => void;
}) {
  return {
    async handle(body: string): Promise<NotificationOutcome> {
      const message = parseSnsMessage(body);
      if (!deps.topicArns.has(message.TopicArn)) {
        throw new DomainError("permission-denied", "SNS_TOPIC_NOT_ALLOWED", `Messages of ${message.TopicArn} are not accepted`, {
          suggestion: "Add the topic's ARN to SES_SNS_TOPIC_ARNS of the delivery service",
        });
      }
      await verifySnsSignature(message, deps.certificateOf);
      if (message.Type === "SubscriptionConfirmation") {
        await deps.confirm(snsUrl(message.SubscribeURL, "SubscribeURL"));
        return "confirmed";
      }
      if (message.Type !== "Notification") return "ignored";
      const event = readSesEvent(message.Message);
      if (!event) return "ignored";
      const emailId = event.emailId && isId(event.emailId) ? event.emailId : undefined;
      const recorded = await deps.db.$transaction(async (tx) => {
        if (!(await recordNotification(tx, consumer, message.MessageId))) return false;
        const email = await applySesEvent(tx, event, emailId);
        if (!email) return false;
        if (event.suppress) {
          const addresses = event.recipients.length > 0 ? event.recipients : [email.toEmail];
          await suppressAddresses(tx, email, addresses, event.type === "email.complaint" ? "complaint" : "bounce", event.reason);
        }
        await writeEmailActivity(tx, event.type, email, { reason: event.reason, occurredAt: event.occurredAt });
        return true;
      });
      if (!recorded) return "ignored";
      deps.nudgeOutbox();
      return "recorded";
    },
  };
}

/** Confirms an SNS subscription by visiting its SubscribeURL; a failure is UNAVAILABLE, and SNS asks again. */
export function createSnsConfirmation(options: { timeoutMs: number }): (url: URL) => Promise<void> {
  return async (url) => {
    try {
      const response = await fetch(url, { redirect: "error", signal: AbortSignal.timeout(options.timeoutMs) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      await response.arrayBuffer();
    } catch (error) {
      throw new DomainError("unavailable", "SNS_CONFIRMATION_FAILED", `The SNS subscription could not be confirmed: ${String(error)}`);
    }
  };
}
