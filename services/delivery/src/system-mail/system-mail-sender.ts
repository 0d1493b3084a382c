import { type BackgroundLoop, createBackgroundLoop, type Logger, type PassOutcome } from "@herald/platform";
import type { Db } from "../db/client.js";
import {
  claimDueSystemEmails,
  deferSystemEmail,
  failExpiredSystemEmails,
  markSystemEmailFailed,
  markSystemEmailSent,
  type SystemEmailRow,
} from "../db/system-emails.js";
import { canRetry, type RetryPolicy, retryDelayMs } from "../domain/send-retry.js";
import { htmlOfText } from "../domain/system-email.js";
import { type DkimSigningKey, type MailProvider, SendFailure } from "../providers/mail-provider.js";
import type { Mailbox } from "../providers/message.js";

/** Who account emails come from and how they are signed: SYSTEM_EMAIL_FROM and the SYSTEM_DKIM_* key. */
export interface SystemSender {
  from: Mailbox;
  dkim: DkimSigningKey;
}

export interface SystemMailSender {
  start(): void;
  /** Looks for due emails now (after an enqueue). */
  nudge(): void;
  /** Lets the sends under way finish and records them. */
  stop(): Promise<void>;
}

/** Account emails sent at once by one process: a few an hour is the usual load. */
const claimSize = 10;

/**
 * The worker of system_emails, one per delivery process; replicas share the table as they share the send
 * queue (a claim with a lease, SKIP LOCKED). Each email goes through the same provider as project mail,
 * from the system sender and signed with its key, without tracking, List-Unsubscribe, contact, activity
 * event or metering. Its outcome: SENT, or FAILED (refused for good, out of attempts, or its link expired
 * first), and either way its body is erased; a temporary failure is tried again with the queue's backoff.
 * Without a provider or a system sender nothing is sent, and emails fail, erased, once their links expire.
 */
export function createSystemMailSender(options: {
  db: Db;
  logger: Logger;
  provider: MailProvider | undefined;
  sender: SystemSender | undefined;
  retry: RetryPolicy;
  leaseMs: number;
  pollIntervalMs: number;
  now?: () => Date;
}): SystemMailSender {
  const { db, logger, provider, sender } = options;
  const now = options.now ?? (() => new Date());
  let loop: BackgroundLoop | undefined;

  async function sendOne(row: SystemEmailRow, through: MailProvider, from: SystemSender): Promise<void> {
    if (row.expiresAt.getTime() <= now().getTime()) {
      await markSystemEmailFailed(db, row.id, "expired before it could be sent");
      return;
    }
    try {
      const result = await through.send(
        {
          emailId: row.id,
          from: from.from,
          to: { email: row.toEmail },
          subject: row.subject,
          html: htmlOfText(row.text),
          messageIdDomain: from.dkim.domainName,
          messageId: row.messageId,
        },
        from.dkim,
      );
      await markSystemEmailSent(db, row.id, result.response, now());
      logger.info({ systemEmailId: row.id, kind: row.kind }, "account email sent");
    } catch (error) {
      const failure = error instanceof SendFailure ? error : undefined;
      const reason = failure?.response ?? (error instanceof Error ? error.message : String(error));
      if (failure?.permanent || !canRetry(options.retry, row.attempts)) {
        logger.warn({ systemEmailId: row.id, kind: row.kind, reason }, "an account email failed for good");
        await markSystemEmailFailed(db, row.id, reason);
        return;
      }
      await deferSystemEmail(db, row.id, reason, new Date(now().getTime() + retryDelayMs(options.retry, row.attempts)));
    }
  }

  async function pass(): Promise<PassOutcome> {
    const expired = await failExpiredSystemEmails(db, now());
    if (expired > 0) logger.warn({ expired }, "account emails expired before they could be sent: failed, bodies erased");
    if (!provider || !sender) return "idle";
    const rows = await claimDueSystemEmails(db, options.leaseMs, claimSize);
    await Promise.all(rows.map((row) => sendOne(row, provider, sender)));
    return rows.length === claimSize ? "busy" : "idle";
  }

  return {
    start() {
      if (loop) return;
      if (!provider) logger.warn("no mail provider: account emails are not sent, and fail once their links expire");
      else if (!sender) {
        logger.warn(
          "SYSTEM_EMAIL_FROM or SYSTEM_DKIM_PRIVATE_KEY is not set: account emails are not sent, and fail once their links expire",
        );
      }
      loop = createBackgroundLoop({
        name: "system mail sender",
        logger,
        // Without a way to send, the loop only erases what expired: once a minute is plenty.
        idleMs: provider && sender ? options.pollIntervalMs : Math.max(options.pollIntervalMs, 60_000),
        pass,
      });
      loop.start();
    },
    nudge() {
      loop?.nudge();
    },
    async stop() {
      const stopping = loop;
      loop = undefined;
      await stopping?.stop();
    },
  };
}
