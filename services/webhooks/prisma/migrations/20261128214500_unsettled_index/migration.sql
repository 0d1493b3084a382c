-- The messages not yet settled, oldest first, as a partial index that Prisma cannot express: what
-- herald_webhook_oldest_pending_seconds reads at every scrape, however many delivered messages the table keeps.
CREATE INDEX "messages_unsettled_created_at_idx" ON "messages" ("created_at") WHERE "status" IN ('pending', 'delivering');
