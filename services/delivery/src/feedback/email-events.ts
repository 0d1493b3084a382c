import type { Db } from "../db/client.js";
import { applyProviderEvent, recordNotification, suppressAddresses } from "../db/provider-events.js";
import type { AddressHash } from "../domain/address-hash.js";
import { isId } from "../domain/ids.js";
import { type EmailActivityType, writeEmailActivity } from "../events/email-activity-outbox.js";

/** What a report from the mail system (SES through SNS, a DSN or a feedback report over SMTP) says of one email. */
export interface ProviderEmailEvent {
  type: Extract<EmailActivityType, "email.bounce" | "email.complaint" | "email.delivery" | "email.deferred">;
  /** The id the provider gave the message (our email's provider_message_id), when the report names it. */
  providerMessageId: string | undefined;
  /** Our email's id, when the report carries it (the X-Herald-Email-ID header, a return path). */
  emailId: string | undefined;
  /** The recipients it is about, lower-case; empty means the email's own recipient. */
  recipients: string[];
  /** Shown on the activity and kept with a suppression. */
  reason: string;
  /** A permanent bounce or a complaint: the recipients are not sent to again. */
  suppress: boolean;
  occurredAt: Date;
}

export type EmailEventRecorder = ReturnType<typeof createEmailEventRecorder>;

/**
 * Records a provider's report on its email, in one transaction: the report is marked as
 * applied (reports arrive at least once: `consumer` and `reportId` recognise a repeat), the
 * email's status moves forward, a permanent bounce or a complaint suppresses the address, and
 * the activity event is written with its outbox row. False when it was a repeat or names no
 * email of this deployment.
 */
export function createEmailEventRecorder(deps: { db: Db; addressHash: AddressHash; nudgeOutbox: () => void }) {
  return {
    async record(consumer: string, reportId: string, event: ProviderEmailEvent): Promise<boolean> {
      const emailId = event.emailId && isId(event.emailId) ? event.emailId : undefined;
      const recorded = await deps.db.$transaction(async (tx) => {
        if (!(await recordNotification(tx, consumer, reportId))) return false;
        const email = await applyProviderEvent(tx, event, emailId);
        if (!email) return false;
        if (event.suppress) {
          const addresses = event.recipients.length > 0 ? event.recipients : [email.toEmail];
          await suppressAddresses(
            tx,
            deps.addressHash,
            email,
            addresses,
            event.type === "email.complaint" ? "complaint" : "bounce",
            event.reason,
          );
        }
        await writeEmailActivity(tx, event.type, email, { reason: event.reason, occurredAt: event.occurredAt });
        return true;
      });
      if (recorded) deps.nudgeOutbox();
      return recorded;
    },
  };
}
