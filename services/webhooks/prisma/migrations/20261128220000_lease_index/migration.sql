-- The messages in flight by the end of their lease, as a partial index that Prisma cannot express: the dispatcher's
-- look for lapsed leases (a process that died mid-call) reads only these few rows, however many the table keeps.
CREATE INDEX "messages_delivering_locked_until_idx" ON "messages" ("locked_until") WHERE "status" = 'delivering';
