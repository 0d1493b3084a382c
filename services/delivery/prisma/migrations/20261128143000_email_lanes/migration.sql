-- The send queue's lanes (docs/decisions.md "Lanes, fair share and destinations"), as partial indexes that
-- Prisma cannot express: the urgent lane (transactional and workflow mail) read in the order it fell due,
-- whatever campaign mail waits; the bulk lane (campaign mail) by project, for the claim's round of projects.
CREATE INDEX "emails_urgent_due_idx" ON "emails" ("next_attempt_at") WHERE "status" = 'PENDING' AND "category" <> 'CAMPAIGN';
CREATE INDEX "emails_bulk_due_idx" ON "emails" ("project_id", "next_attempt_at") WHERE "status" = 'PENDING' AND "category" = 'CAMPAIGN';
