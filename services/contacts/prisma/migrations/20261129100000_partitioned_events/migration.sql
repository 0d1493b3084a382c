-- Hand-written: events becomes RANGE-partitioned by month on created_at (docs/operations.md "Time partitions"), so
-- that expiry drops whole months and queries bounded in time read only theirs. A partitioned table's unique keys
-- hold the partition key: the primary key becomes (id, created_at). The rows are copied in this transaction, which
-- holds the table for as long as the copy takes; docs/operations.md "Migrating a large table" gives the procedure
-- without that pause, for a deployment whose events table is too large to copy during a deploy.
ALTER TABLE "events" RENAME TO "events_unpartitioned";
ALTER TABLE "events_unpartitioned" RENAME CONSTRAINT "events_pkey" TO "events_unpartitioned_pkey";
ALTER TABLE "events_unpartitioned" RENAME CONSTRAINT "events_contact_id_fkey" TO "events_unpartitioned_contact_id_fkey";
DROP INDEX "events_project_id_created_at_id_idx";
DROP INDEX "events_project_id_name_created_at_id_idx";
DROP INDEX "events_contact_id_created_at_id_idx";

CREATE TABLE "events" (LIKE "events_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE ("created_at");
ALTER TABLE "events" ADD CONSTRAINT "events_pkey" PRIMARY KEY ("id", "created_at");
-- Catches what no month covers (a far-future or long-past time); the service moves or expires those rows.
CREATE TABLE "events_default" PARTITION OF "events" DEFAULT;

-- One partition per UTC month from the oldest row's (at most two years back: older rows wait in the default
-- partition for expiry) to two months ahead; the service's maintenance keeps the window going from there.
DO $$
DECLARE
  this_month timestamp := date_trunc('month', now() AT TIME ZONE 'UTC');
  m timestamp;
BEGIN
  SELECT date_trunc('month', min(created_at) AT TIME ZONE 'UTC') INTO m FROM events_unpartitioned;
  m := least(greatest(coalesce(m, this_month), this_month - interval '24 months'), this_month);
  WHILE m <= this_month + interval '2 months' LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
      'events_p' || to_char(m, 'YYYYMM'), m::text || '+00', (m + interval '1 month')::text || '+00');
    m := m + interval '1 month';
  END LOOP;
END
$$;

INSERT INTO "events" SELECT * FROM "events_unpartitioned";
DROP TABLE "events_unpartitioned";

-- The same indexes as before, now one per partition.
CREATE INDEX "events_project_id_created_at_id_idx" ON "events"("project_id", "created_at", "id");
CREATE INDEX "events_project_id_name_created_at_id_idx" ON "events"("project_id", "name", "created_at", "id");
CREATE INDEX "events_contact_id_created_at_id_idx" ON "events"("contact_id", "created_at", "id");
ALTER TABLE "events" ADD CONSTRAINT "events_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
