import type { Logger } from "@herald/platform";
import type pg from "pg";
import type { Db } from "../db/client.js";
import { claimDueEmails, type EmailRow, releaseEmails, type SendingOutcome, type StoredAttachment, suppressedAmong } from "../db/emails.js";
import { type OutcomeWrite, recordOutcomes } from "../db/outcomes.js";
import { domainOfAddress } from "../domain/email-input.js";
import { canRetry, type RetryPolicy, retryDelayMs } from "../domain/send-retry.js";
import { createKeyedTokenBuckets, createTokenBucket } from "../domain/token-bucket.js";
import { type EmailActivityType, emailActivityEvent } from "../events/email-activity-outbox.js";
import { type DkimSigningKey, type MailProvider, SendFailure } from "../providers/mail-provider.js";
import type { OutgoingEmail } from "../providers/message.js";
import { decryptPrivateKey } from "../sending-domains/dkim-keys.js";

export interface DispatcherOptions {
  db: Db;
  /** Connections without Prisma, for the claims and the suppression checks. */
  pool: pg.Pool;
  /** The connection outcomes are recorded on (createOutcomesPool). */
  outcomesPool: pg.Pool;
  logger: Logger;
  /** Undefined when SMTP_URL is unset: the dispatcher then sends nothing and emails wait PENDING. */
  provider: MailProvider | undefined;
  /** Opens the domains' DKIM keys (DKIM_ENCRYPTION_KEY). */
  encryptionKey: Buffer;
  /** Emails handed to the provider at once by this dispatcher. */
  concurrency: number;
  /** Emails a second, all projects together, for this dispatcher. */
  ratePerSecond: number;
  /** Emails a second for one project, for this dispatcher. */
  projectRatePerSecond: number;
  /** How long a claim lasts: an email still SENDING after it is claimed again by any dispatcher. */
  leaseMs: number;
  retry: RetryPolicy;
  /** How often an idle dispatcher looks for due emails (enqueues in this process wake it at once). */
  pollIntervalMs: number;
  /** How long a sending domain's key (or its absence) is remembered. */
  domainCacheTtlMs?: number;
  /** Called after a transaction wrote to the outbox. */
  nudgeOutbox?: () => void;
  /** The envelope sender of an email (a return path of BOUNCE_DOMAIN); unset: its From address. */
  returnPathOf?: (emailId: string) => string;
}

/** Outcomes written in one transaction at most. */
const maxOutcomeBatch = 200;

export interface Dispatcher {
  start(): void;
  /** Looks for due emails now (after an enqueue). */
  nudge(): void;
  /** Stops claiming, lets the sends in flight finish and records their outcomes. */
  stop(): Promise<void>;
  /**
   * Stops as a killed process would: no more claims, and the sends in flight are abandoned
   * without recording anything, so their emails stay SENDING until their lease lapses. For tests.
   */
  kill(): void;
  /** Emails handed to the provider and not yet recorded. */
  readonly inFlight: number;
}

const reasonOf = (outcome: SendingOutcome): string => (outcome.status === "SENT" ? "" : outcome.lastError);

type Outcome = SendingOutcome & { event: EmailActivityType; suppressAddress?: boolean };

/**
 * The send queue's worker, one per process; any number of replicas run together. It
 * claims due emails with a lease (claimDueEmails), sends each through the provider with
 * the sending domain's DKIM key, and records the outcome and its email-activity event in
 * one transaction right after the provider answers. What it guarantees and what it does
 * not (at least once to the relay) is in docs/decisions.md "The email record is the queue".
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { db, logger, provider } = options;
  const global = createTokenBucket({ ratePerSecond: options.ratePerSecond });
  const projects = createKeyedTokenBuckets({ ratePerSecond: options.projectRatePerSecond });
  const domainCacheTtlMs = options.domainCacheTtlMs ?? 30_000;
  const keys = new Map<string, { expiresAt: number; key: DkimSigningKey | null }>();
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let killed = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let nudged = false;
  let waitingForSlot = false;
  let failures = 0;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      wake = undefined;
    });

  /** The project's verified domain's key for the sender's domain, or null when there is none. */
  async function signingKeyOf(projectId: string, domain: string): Promise<DkimSigningKey | null> {
    const cacheKey = `${projectId} ${domain}`;
    const cached = keys.get(cacheKey);
    if (cached && cached.expiresAt > Date.now()) return cached.key;
    const row = await db.domain.findFirst({ where: { projectId, domain, verified: true } });
    const key = row
      ? {
          domainName: row.domain,
          keySelector: row.selector,
          privateKey: decryptPrivateKey(options.encryptionKey, row.privateKeyEncrypted, row.id),
        }
      : null;
    if (keys.size > 10_000) keys.clear();
    keys.set(cacheKey, { expiresAt: Date.now() + domainCacheTtlMs, key });
    return key;
  }

  function outgoingOf(row: EmailRow, domain: string): OutgoingEmail {
    const attachments = (row.attachments as unknown as StoredAttachment[]).map((attachment) => ({
      filename: attachment.filename,
      contentType: attachment.contentType,
      content: Buffer.from(attachment.content, "base64"),
    }));
    const listUnsubscribe = row.listUnsubscribe as { url: string; mailto?: string } | null;
    return {
      emailId: row.id,
      from: { email: row.fromEmail, ...(row.fromName ? { name: row.fromName } : {}) },
      to: { email: row.toEmail, ...(row.toName ? { name: row.toName } : {}) },
      ...(row.replyTo ? { replyTo: { email: row.replyTo } } : {}),
      subject: row.subject,
      html: row.html,
      headers: row.headers as Record<string, string>,
      attachments,
      ...(listUnsubscribe ? { listUnsubscribe } : {}),
      messageIdDomain: domain,
      messageId: row.messageId,
      ...(options.returnPathOf ? { returnPath: options.returnPathOf(row.id) } : {}),
    };
  }

  function retryOrFail(row: EmailRow, reason: string): Outcome {
    if (canRetry(options.retry, row.attempts)) {
      return {
        status: "PENDING",
        lastError: reason,
        nextAttemptAt: new Date(Date.now() + retryDelayMs(options.retry, row.attempts)),
        event: "email.deferred",
      };
    }
    return { status: "FAILED", lastError: `gave up after ${row.attempts} attempts: ${reason}`, event: "email.failed" };
  }

  /** Sends one claimed email; never throws. */
  async function attempt(row: EmailRow, sender: MailProvider): Promise<Outcome> {
    const domain = domainOfAddress(row.fromEmail);
    let key: DkimSigningKey | null;
    try {
      key = await signingKeyOf(row.projectId, domain);
    } catch (error) {
      logger.warn({ err: error, emailId: row.id, domain }, "cannot load the sending domain's key");
      return retryOrFail(row, `cannot load the DKIM key of ${domain}`);
    }
    if (!key) {
      return {
        status: "FAILED",
        lastError: `DOMAIN_NOT_VERIFIED: ${domain} is not a verified domain of the project`,
        event: "email.failed",
      };
    }
    try {
      const result = await sender.send(outgoingOf(row, domain), key);
      return {
        status: "SENT",
        providerMessageId: result.providerMessageId,
        providerResponse: result.response,
        sentAt: new Date(),
        event: "email.sent",
      };
    } catch (error) {
      if (!(error instanceof SendFailure)) return retryOrFail(row, error instanceof Error ? error.message : String(error));
      const reason = error.response ?? error.message;
      if (!error.permanent) return retryOrFail(row, reason);
      if (error.recipientRejected) return { status: "BOUNCED", lastError: reason, event: "email.bounce", suppressAddress: true };
      return { status: "FAILED", lastError: reason, event: "email.failed" };
    }
  }

  /**
   * Outcomes waiting to be recorded. They are written in batches (db/outcomes.ts): while
   * one batch is being written, the outcomes that arrive meanwhile gather for the next.
   */
  const unrecorded: Array<{ write: OutcomeWrite; done: () => void }> = [];
  let writing: Promise<void> | undefined;

  /** Writes a batch; retried a few times, since an unrecorded send is sent again after the lease. */
  async function writeBatch(writes: OutcomeWrite[]): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await recordOutcomes(options.outcomesPool, writes);
        options.nudgeOutbox?.();
        return;
      } catch (error) {
        if (tries >= 5 || killed) {
          logger.error(
            { err: error, emails: writes.length },
            "cannot record the outcome of sent emails; they are sent again once their lease lapses",
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** tries));
      }
    }
  }

  function writeUnrecorded(): void {
    if (writing) return;
    writing = (async () => {
      // The outcomes of this turn of the event loop join the first batch.
      await new Promise((resolve) => setImmediate(resolve));
      while (unrecorded.length > 0) {
        const batch = unrecorded.splice(0, maxOutcomeBatch);
        await writeBatch(batch.map((item) => item.write));
        for (const item of batch) item.done();
      }
    })().finally(() => {
      writing = undefined;
      if (unrecorded.length > 0) writeUnrecorded();
    });
  }

  /** Records an outcome and its event; resolves once written (or given up on). */
  function record(row: EmailRow, outcome: Outcome): Promise<void> {
    const { event, suppressAddress, ...change } = outcome;
    const write: OutcomeWrite = {
      emailId: row.id,
      outcome: change,
      event: emailActivityEvent(event, row, { reason: reasonOf(change) }),
      ...(suppressAddress ? { suppress: { projectId: row.projectId, email: row.toEmail, detail: reasonOf(change) } } : {}),
    };
    return new Promise((resolve) => {
      unrecorded.push({ write, done: resolve });
      writeUnrecorded();
    });
  }

  function track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => logger.error({ err: error }, "email dispatch failed"));
    inFlight.add(tracked);
    void tracked.finally(() => {
      inFlight.delete(tracked);
      // The loop waits for slots while all are taken: it claims again once half are free, in one statement.
      if (waitingForSlot && inFlight.size <= options.concurrency / 2) wake?.();
    });
  }

  async function dispatch(rows: EmailRow[], sender: MailProvider): Promise<void> {
    const suppressed = await suppressedAmong(options.pool, rows);
    const throttled: string[] = [];
    let throttleMs = 0;
    for (const row of rows) {
      if (suppressed.has(`${row.projectId} ${row.toEmail}`)) {
        // Suppressed after it was enqueued (an earlier email to the address bounced meanwhile).
        track(record(row, { status: "FAILED", lastError: `RECIPIENT_SUPPRESSED: ${row.toEmail} is suppressed`, event: "email.failed" }));
        continue;
      }
      const bucket = projects.bucket(row.projectId);
      if (bucket.take(1) === 0) {
        throttled.push(row.id);
        throttleMs = Math.max(throttleMs, bucket.msUntilNext());
        global.refund(1);
        continue;
      }
      track(
        attempt(row, sender).then(async (outcome) => {
          if (!killed) await record(row, outcome);
        }),
      );
    }
    await releaseEmails(db, throttled, Math.max(throttleMs, 10));
  }

  async function run(sender: MailProvider): Promise<void> {
    while (running) {
      nudged = false;
      let waitMs = options.pollIntervalMs;
      try {
        const slots = options.concurrency - inFlight.size;
        waitingForSlot = slots <= 0;
        if (slots <= 0) {
          waitMs = options.pollIntervalMs * 4;
        } else {
          const granted = global.take(slots);
          if (granted === 0) {
            waitMs = Math.max(global.msUntilNext(), 1);
          } else {
            const rows = await claimDueEmails(options.pool, options.leaseMs, granted);
            global.refund(granted - rows.length);
            if (failures > 0) logger.info({ afterAttempts: failures }, "email dispatcher can reach the database again");
            failures = 0;
            // Killed: the claimed rows stay SENDING, as a dead process leaves them. Stopping: they are sent and recorded first.
            if (killed) return;
            if (rows.length > 0) await dispatch(rows, sender);
            // A full claim means more may be due: go again at once (a slot or a token permitting).
            if (rows.length === granted) waitMs = 0;
          }
        }
      } catch (error) {
        failures++;
        if (failures === 1 || failures % 20 === 0) logger.warn({ err: error, attempts: failures }, "email dispatcher cannot claim emails");
        waitMs = Math.min(options.pollIntervalMs * 2 ** failures, 10_000);
      }
      if (!running) return;
      if (waitMs > 0 && !nudged) await sleep(waitMs);
    }
  }

  return {
    start() {
      if (running) return;
      if (!provider) {
        logger.warn("SMTP_URL is not set: no email is sent; enqueued emails wait PENDING until a delivery process with SMTP_URL runs");
        return;
      }
      running = true;
      killed = false;
      loop = run(provider);
    },
    nudge() {
      nudged = true;
      wake?.();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      await Promise.all(inFlight);
    },
    kill() {
      killed = true;
      running = false;
      wake?.();
    },
    get inFlight() {
      return inFlight.size;
    },
  };
}
