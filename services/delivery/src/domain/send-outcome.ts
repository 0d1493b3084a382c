import type { SendingOutcome } from "../db/emails.js";
import type { EmailActivityType } from "../events/email-activity-outbox.js";
import { SendFailure, type SendResult } from "../providers/mail-provider.js";
import { canRetry, type RetryPolicy, retryDelayMs } from "./send-retry.js";

/** What one attempt at an email came to: the status change, the email-activity event it publishes, and whether its address is suppressed. */
export type SendOutcome = SendingOutcome & { event: EmailActivityType; suppressAddress?: boolean };

/** The reason an outcome gives in its event and its suppression: none for a sent email. */
export const reasonOf = (outcome: SendingOutcome): string => (outcome.status === "SENT" ? "" : outcome.lastError);

export const sentOutcome = (result: SendResult, sentAt: Date): SendOutcome => ({
  status: "SENT",
  providerMessageId: result.providerMessageId,
  providerResponse: result.response,
  sentAt,
  event: "email.sent",
});

/** The sender's domain is not a verified domain of the project (removed, or never verified): nothing is sent unsigned. */
export const unverifiedDomainOutcome = (domain: string): SendOutcome => ({
  status: "FAILED",
  lastError: `DOMAIN_NOT_VERIFIED: ${domain} is not a verified domain of the project`,
  event: "email.failed",
});

/** The recipient was suppressed after the email was enqueued (an earlier email to the address bounced meanwhile). */
export const suppressedRecipientOutcome = (toEmail: string): SendOutcome => ({
  status: "FAILED",
  lastError: `RECIPIENT_SUPPRESSED: ${toEmail} is suppressed`,
  event: "email.failed",
});

/** A temporary failure after `attempts` attempts: tried again later with backoff while the policy allows, failed for good after. */
export function retryOrFail(policy: RetryPolicy, attempts: number, reason: string, now: number = Date.now()): SendOutcome {
  if (canRetry(policy, attempts)) {
    return { status: "PENDING", lastError: reason, nextAttemptAt: new Date(now + retryDelayMs(policy, attempts)), event: "email.deferred" };
  }
  return { status: "FAILED", lastError: `gave up after ${attempts} attempts: ${reason}`, event: "email.failed" };
}

/**
 * What a failed send comes to. Anything but a SendFailure, and a temporary one, is tried again; a
 * permanent refusal of the recipient bounces the email and suppresses the address; any other
 * permanent failure fails the email without blaming the address.
 */
export function outcomeOfSendError(error: unknown, policy: RetryPolicy, attempts: number): SendOutcome {
  if (!(error instanceof SendFailure)) return retryOrFail(policy, attempts, error instanceof Error ? error.message : String(error));
  const reason = error.response ?? error.message;
  if (!error.permanent) return retryOrFail(policy, attempts, reason);
  if (error.recipientRejected) return { status: "BOUNCED", lastError: reason, event: "email.bounce", suppressAddress: true };
  return { status: "FAILED", lastError: reason, event: "email.failed" };
}
