-- Hand-written: email_activity becomes RANGE-partitioned by month on occurred_at (docs/operations.md "Time
-- partitions"), so that expiry drops whole months and the feed's queries read only the months they reach. A
-- partitioned table's unique keys hold the partition key: the primary key becomes (id, occurred_at). The rows are
-- copied in this transaction; docs/operations.md "Migrating a large table" gives the procedure without that pause.
ALTER TABLE "email_activity" RENAME TO "email_activity_unpartitioned";
ALTER TABLE "email_activity_unpartitioned" RENAME CONSTRAINT "email_activity_pkey" TO "email_activity_unpartitioned_pkey";
DROP INDEX "email_activity_project_id_occurred_at_id_idx";
DROP INDEX "email_activity_project_id_type_occurred_at_idx";
DROP INDEX "email_activity_project_id_email_id_idx";
DROP INDEX "email_activity_project_id_contact_id_idx";

-- LIKE keeps the columns, defaults and CHECK constraints (email_activity_type, email_activity_category).
CREATE TABLE "email_activity" (LIKE "email_activity_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE ("occurred_at");
ALTER TABLE "email_activity" ADD CONSTRAINT "email_activity_pkey" PRIMARY KEY ("id", "occurred_at");
-- Catches what no month covers (a far-future or long-past time); the service moves or expires those rows.
CREATE TABLE "email_activity_default" PARTITION OF "email_activity" DEFAULT;

-- One partition per UTC month from the oldest row's (at most two years back: older rows wait in the default
-- partition for expiry) to two months ahead; the service's maintenance keeps the window going from there.
DO $$
DECLARE
  this_month timestamp := date_trunc('month', now() AT TIME ZONE 'UTC');
  m timestamp;
BEGIN
  SELECT date_trunc('month', min(occurred_at) AT TIME ZONE 'UTC') INTO m FROM email_activity_unpartitioned;
  m := least(greatest(coalesce(m, this_month), this_month - interval '24 months'), this_month);
  WHILE m <= this_month + interval '2 months' LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF email_activity FOR VALUES FROM (%L) TO (%L)',
      'email_activity_p' || to_char(m, 'YYYYMM'), m::text || '+00', (m + interval '1 month')::text || '+00');
    m := m + interval '1 month';
  END LOOP;
END
$$;

INSERT INTO "email_activity" SELECT * FROM "email_activity_unpartitioned";
DROP TABLE "email_activity_unpartitioned";

-- The same indexes as before, now one per partition.
CREATE INDEX "email_activity_project_id_occurred_at_id_idx" ON "email_activity"("project_id", "occurred_at" DESC, "id" DESC);
CREATE INDEX "email_activity_project_id_type_occurred_at_idx" ON "email_activity"("project_id", "type", "occurred_at");
CREATE INDEX "email_activity_project_id_email_id_idx" ON "email_activity"("project_id", "email_id");
CREATE INDEX "email_activity_project_id_contact_id_idx" ON "email_activity"("project_id", "contact_id");
