-- Hand-written (Prisma cannot express INCLUDE). A segment's event filter reads the project's events of one name in a
-- window for their contact ids: with contact_id carried in the index, that is an index-only scan, where it was a heap
-- fetch of each event, scattered over the month's partition (277,777 events of 5 million contacts: 510 ms read from
-- the heap, 33 ms from the index; docs/benchmarks.md). The index rebuilds over every partition and holds writes to
-- events meanwhile (docs/operations.md "Upgrade").
DROP INDEX "events_project_id_name_created_at_id_idx";
CREATE INDEX "events_project_id_name_created_at_id_idx" ON "events"("project_id", "name", "created_at", "id") INCLUDE ("contact_id");
