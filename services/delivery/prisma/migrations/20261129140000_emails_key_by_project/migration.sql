-- Hand-written. A primary key that leads with project_id, so that emails can be distributed by project on Citus
-- (docs/scaling.md), now that the dispatcher's claim, its outcome writes and the release of held emails name each
-- email's project. The id keeps an index of its own, no longer unique (ids are random UUIDs), for the statements that
-- can only name an email by its id: a provider's event (its own message id, or the id in our Message-ID). Both builds
-- hold writes to emails meanwhile (docs/operations.md "Upgrade").
CREATE INDEX "emails_id_idx" ON "emails"("id");
ALTER TABLE "emails" DROP CONSTRAINT "emails_pkey";
ALTER TABLE "emails" ADD CONSTRAINT "emails_pkey" PRIMARY KEY ("project_id", "id");

-- Each lane's claim reads its own partial index (emails_urgent_due_idx, emails_bulk_due_idx), and the queue depth reads
-- unsent rows through (status, locked_until): (status, next_attempt_at) served no statement, but cost every write of a
-- status and, on a queue of only urgent mail, tied with the urgent lane's index in the planner's costs.
DROP INDEX "emails_status_next_attempt_at_idx";
