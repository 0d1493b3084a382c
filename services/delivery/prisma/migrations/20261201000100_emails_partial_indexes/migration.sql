-- Two indexes of emails kept to the rows their readers ask for, so that the other versions of a row write no entry
-- in them (docs/benchmarks.md). Their names stay; on the partitioned table each partition's index goes and comes with them.
-- (status, locked_until) serves only unsent mail: lapsed leases (the claim), the queue depth, the months that hold
-- unsent mail (unsentSince) and a project wipe's unsent emails. A sent email's version now skips it, and the index
-- holds the queue, not every email ever sent.
DROP INDEX "emails_status_locked_until_idx";
CREATE INDEX "emails_status_locked_until_idx" ON "emails" ("status", "locked_until") WHERE "status" IN ('PENDING', 'SENDING');
-- A provider's report names the email by an id only an email handed over has: the version stored before the
-- hand-over, whose provider_message_id is null, skips it.
DROP INDEX "emails_provider_message_id_idx";
CREATE INDEX "emails_provider_message_id_idx" ON "emails" ("provider_message_id") WHERE "provider_message_id" IS NOT NULL;
