import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { type BackgroundLoop, createBackgroundLoop, type Logger, type PassOutcome } from "@herald/platform";
import type { SystemMailService } from "@herald/proto/herald/delivery/v1/system_mail_service_pb";
import {
  claimPendingAuthEmails,
  deferAuthEmail,
  failExpiredAuthEmails,
  markAuthEmailHandedOver,
  type PendingAuthEmail,
} from "../db/auth-emails.js";
import type { Db } from "../db/client.js";

export interface AccountMail {
  start(): void;
  /** Hands over what is waiting now (after a commit that queued an email). */
  nudge(): void;
  stop(): Promise<void>;
}

/** Emails handed over in one pass; a few an hour is the usual load. */
const claimSize = 20;
/** How long a claim keeps other replicas off an email: longer than one call may take. */
const leaseMs = 30_000;
/** After a failed hand-over: 1 s, 2 s, 4 s … at most a minute. The links live an hour. */
const retryDelayMs = (attempts: number) => Math.min(60_000, 1_000 * 2 ** Math.min(attempts - 1, 10));

/**
 * The hand-over of account emails to delivery, which sends them (docs/decisions.md "Account emails"): each
 * row of auth_emails goes to SystemMailService.SendSystemEmail with its own id as the idempotency key, so
 * that a call repeated after a lost answer queues nothing twice; once delivery has it, its body, which
 * holds the one-time link, is erased here and only the token's digest stays. Delivery away: tried again
 * with backoff until the link expires; then the email is given up and its body erased as well.
 */
export function createAccountMail(deps: {
  db: Db;
  logger: Logger;
  systemMail: Client<typeof SystemMailService>;
  /** How often an idle hand-over looks for emails a nudge did not announce (another replica's, retries). */
  pollIntervalMs: number;
  now?: () => Date;
}): AccountMail {
  const { db, logger } = deps;
  const now = deps.now ?? (() => new Date());
  let loop: BackgroundLoop | undefined;

  async function handOver(email: PendingAuthEmail): Promise<void> {
    try {
      await deps.systemMail.sendSystemEmail({
        idempotencyKey: email.id,
        kind: email.kind,
        to: email.to,
        subject: email.subject,
        text: email.text,
        expiresAt: timestampFromDate(email.expiresAt),
      });
    } catch (error) {
      const reason = ConnectError.from(error);
      // A refusal of the email itself will not change: kept for an operator, and given up when its link expires.
      const level = reason.code === Code.InvalidArgument ? "error" : "warn";
      logger[level]({ err: reason, authEmailId: email.id, kind: email.kind }, "an account email could not be handed to delivery");
      await deferAuthEmail(db, email.id, reason.message, new Date(now().getTime() + retryDelayMs(email.attempts)));
      return;
    }
    await markAuthEmailHandedOver(db, email.id, now());
    logger.info({ authEmailId: email.id, kind: email.kind }, "account email handed to delivery");
  }

  async function pass(): Promise<PassOutcome> {
    const expired = await failExpiredAuthEmails(db, now());
    if (expired > 0) logger.warn({ expired }, "account emails expired before delivery accepted them: given up, bodies erased");
    const emails = await claimPendingAuthEmails(db, leaseMs, claimSize, now());
    await Promise.all(emails.map(handOver));
    return emails.length === claimSize ? "busy" : "idle";
  }

  return {
    start() {
      if (loop) return;
      loop = createBackgroundLoop({ name: "account mail hand-over", logger, idleMs: deps.pollIntervalMs, pass });
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
