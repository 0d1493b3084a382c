import type { KeyObject } from "node:crypto";
import { DomainError } from "@herald/errors";
import type { EmailEventRecorder } from "./email-events.js";
import { readSesEvent } from "./ses-events.js";
import { parseSnsMessage, snsUrl, verifySnsSignature } from "./sns-message.js";

export type SesNotifications = ReturnType<typeof createSesNotifications>;

export type NotificationOutcome = "confirmed" | "recorded" | "ignored";

/** The processed_events consumer name of SNS notifications: a redelivered one is recognised by its MessageId. */
const consumer = "ses.sns";

/**
 * POST /webhooks/ses: Amazon SNS messages from the topics of SES_SNS_TOPIC_ARNS. Only those
 * topics are heard (anyone can have SNS sign a message, from a topic of their own), and only
 * with a signature that verifies. A subscription to one of them is confirmed; a notification's
 * SES event (readSesEvent) is recorded on its email (EmailEventRecorder).
 */
export function createSesNotifications(deps: {
  events: EmailEventRecorder;
  topicArns: ReadonlySet<string>;
  certificateOf: (url: URL) => Promise<KeyObject>;
  /** Visits the SubscribeURL of a confirmation (an SNS address, checked before). */
  confirm: (url: URL) => Promise<void>;
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
      return (await deps.events.record(consumer, message.MessageId, event)) ? "recorded" : "ignored";
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
