import type { Logger } from "@herald/platform";
import type pg from "pg";
import type { EmailRow } from "../db/emails.js";
import { type OutcomeWrite, recordOutcomes } from "../db/outcomes.js";
import type { AddressHash } from "../domain/address-hash.js";
import { reasonOf, type SendOutcome } from "../domain/send-outcome.js";
import { emailActivityEvent } from "../events/email-activity-outbox.js";

/** Outcomes written in one transaction at most. */
const maxOutcomeBatch = 200;

export interface OutcomeWriterOptions {
  /** The connection outcomes are recorded on (createOutcomesPool). */
  pool: pg.Pool;
  logger: Logger;
  /** Called after a batch, and so its outbox rows, was written. */
  onWritten?: () => void;
}

export interface OutcomeWriter {
  /** Records an outcome and its event; resolves once written (or given up on), never rejects. */
  record(write: OutcomeWrite): Promise<void>;
  /** Stops retrying failed writes, as a killed process would (the dispatcher's kill()). */
  abandon(): void;
}

/** One claimed email's outcome as recordOutcomes writes it: the status change, its event, and the suppression a bounce adds. */
export function outcomeWriteOf(row: EmailRow, outcome: SendOutcome, addressHash: AddressHash): OutcomeWrite {
  const { event, suppressAddress, ...change } = outcome;
  return {
    projectId: row.projectId,
    emailId: row.id,
    emailCreatedAt: row.createdAt,
    outcome: change,
    // The dispatcher's bounce is the relay's refusal of the handed-over email: no email.sent came before it.
    event: emailActivityEvent(event, row, { reason: reasonOf(change), ...(event === "email.bounce" ? { refusedAtHandover: true } : {}) }),
    ...(suppressAddress
      ? { suppress: { projectId: row.projectId, email: row.toEmail, emailHash: addressHash(row.toEmail), detail: reasonOf(change) } }
      : {}),
  };
}

/**
 * The dispatcher's outcome recording, in batches (db/outcomes.ts): while one batch is being
 * written, the outcomes that arrive meanwhile gather for the next, so that under load an outcome
 * costs a share of one statement and one commit rather than a transaction of its own.
 */
export function createOutcomeWriter(options: OutcomeWriterOptions): OutcomeWriter {
  const { pool, logger } = options;
  const unrecorded: Array<{ write: OutcomeWrite; done: () => void }> = [];
  let writing: Promise<void> | undefined;
  let abandoned = false;

  /** Writes a batch; retried a few times, since an unrecorded send is sent again after the lease. */
  async function writeBatch(writes: OutcomeWrite[]): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await recordOutcomes(pool, writes);
        options.onWritten?.();
        return;
      } catch (error) {
        if (tries >= 5 || abandoned) {
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

  return {
    record(write) {
      return new Promise((resolve) => {
        unrecorded.push({ write, done: resolve });
        writeUnrecorded();
      });
    },
    abandon() {
      abandoned = true;
    },
  };
}
