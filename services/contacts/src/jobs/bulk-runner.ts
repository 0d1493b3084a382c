import { randomUUID } from "node:crypto";
import type { Logger } from "@herald/platform";
import type { ContactsChanged } from "../contacts/contacts-changed.js";
import { type BulkAction, countExisting, deleteContacts, readBulkJobTargets, recordBulkChunk, setSubscribed } from "../db/bulk-jobs.js";
import type { Db, Tx } from "../db/client.js";
import { insertContactEvents } from "../db/event-records.js";
import { claimJob, finishJob, holdLease, releaseLease } from "../db/job-leases.js";
import { isId } from "../domain/ids.js";
import { subscriptionEventName } from "../domain/subscription.js";
import { pendingContactEvent } from "../events/contact-event-outbox.js";
import { type JobRunner, LeaseLost, maxJobAttempts } from "./job-runner.js";

/** Contacts per transaction: each subscription change writes an event and an outbox row. */
export const bulkChunkSize = 200;

interface ChunkOutcome {
  processed: number;
  succeeded: number;
  unchanged: number;
  notFound: number;
}

/**
 * Runs bulk subscribe, unsubscribe and delete jobs chunk by chunk, each chunk's
 * changes, events and checkpoint (processed) in one transaction under the lease, as
 * imports do. Subscription changes emit contact.subscribed / contact.unsubscribed, and (the contacts
 * trigger) contact.updated; deletions contact.deleted.
 */
export function createBulkRunner(options: {
  db: Db;
  logger: Logger;
  leaseMs: number;
  nudgeOutbox: () => void;
  contactsChanged: ContactsChanged;
}): JobRunner {
  const { db, logger, leaseMs } = options;

  async function applyChunk(tx: Tx, projectId: string, action: BulkAction, ids: string[]): Promise<ChunkOutcome> {
    const known = ids.filter(isId);
    const outcome: ChunkOutcome = { processed: ids.length, succeeded: 0, unchanged: 0, notFound: 0 };
    if (action === "delete") {
      outcome.succeeded = known.length === 0 ? 0 : await deleteContacts(tx, projectId, known);
    } else {
      const subscribed = action === "subscribe";
      const now = new Date();
      const existing = known.length === 0 ? 0 : await countExisting(tx, projectId, known);
      const changed = known.length === 0 ? [] : await setSubscribed(tx, projectId, known, subscribed, now);
      await insertContactEvents(
        tx,
        changed.map((contact) => ({
          ...pendingContactEvent({
            id: randomUUID(),
            name: subscriptionEventName(subscribed),
            projectId,
            contactEmail: contact.email,
            data: {},
            occurredAt: now,
          }),
          contactId: contact.id,
        })),
      );
      outcome.succeeded = changed.length;
      outcome.unchanged = existing - changed.length;
    }
    outcome.notFound = ids.length - outcome.succeeded - outcome.unchanged;
    return outcome;
  }

  async function runBulkJob(claimed: { id: string; attempts: number }, owner: string, signal: AbortSignal): Promise<void> {
    if (claimed.attempts > maxJobAttempts) {
      await finishJob(db, "bulk_jobs", claimed.id, owner, {
        status: "failed",
        failureReason: `The job was interrupted ${maxJobAttempts} times`,
      });
      return;
    }
    const { job, contactIds } = await readBulkJobTargets(db, claimed.id);
    try {
      for (let start = job.processed; start < contactIds.length; start += bulkChunkSize) {
        const ids = contactIds.slice(start, start + bulkChunkSize);
        await db.$transaction(
          async (tx) => {
            if (!(await holdLease(tx, "bulk_jobs", job.id, owner, leaseMs))) throw new LeaseLost(`bulk job ${job.id} was taken over`);
            await recordBulkChunk(tx, job.id, await applyChunk(tx, job.projectId, job.action, ids));
          },
          { maxWait: 10_000, timeout: 60_000 },
        );
        // Every action wrote outbox rows: a subscription's event and contact.updated, or contact.deleted.
        options.nudgeOutbox();
        if (job.action !== "delete") options.contactsChanged(job.projectId, ids);
        if (signal.aborted && start + bulkChunkSize < contactIds.length) return await releaseLease(db, "bulk_jobs", job.id, owner);
      }
    } catch (error) {
      if (error instanceof LeaseLost) {
        logger.warn({ jobId: job.id }, "bulk job taken over by another worker; leaving it");
        return;
      }
      throw error;
    }
    await finishJob(db, "bulk_jobs", job.id, owner, { status: "completed" });
  }

  return {
    kind: "bulk",
    async claim(owner) {
      const claimed = await claimJob(db, "bulk_jobs", owner, leaseMs);
      return claimed && { id: claimed.id, run: (signal) => runBulkJob(claimed, owner, signal) };
    },
  };
}
