-- Hand-written: emails becomes RANGE-partitioned by month on created_at, like email_activity (docs/decisions.md "Which
-- tables are partitioned"), so that the record's expiry drops whole months and the dispatcher's claim reads only the
-- months that hold unsent mail. The rows are copied in this transaction; docs/operations.md "Migrating a large table"
-- gives the procedure without that pause.
ALTER TABLE "emails" RENAME TO "emails_unpartitioned";
ALTER TABLE "emails_unpartitioned" RENAME CONSTRAINT "emails_pkey" TO "emails_unpartitioned_pkey";
DROP INDEX "emails_id_idx";
DROP INDEX "emails_project_id_idempotency_key_key";
DROP INDEX "emails_urgent_due_idx";
DROP INDEX "emails_bulk_due_idx";
DROP INDEX "emails_status_locked_until_idx";
DROP INDEX "emails_project_id_created_at_idx";
DROP INDEX "emails_provider_message_id_idx";
DROP INDEX "emails_content_expiry_idx";
DROP INDEX "emails_project_id_contact_id_created_at_idx";
DROP INDEX "emails_project_id_to_email_created_at_idx";

-- LIKE keeps the columns, defaults and CHECK constraints (emails_status, emails_category, emails_sending_is_leased).
CREATE TABLE "emails" (LIKE "emails_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE ("created_at");
-- The key is the only index whose columns the dispatcher's writes by key (its claim's last step, its outcomes) can use:
-- those are planned once per connection, maybe while the month is still empty, where the planner sees every usable index
-- as costing the same and may take any (docs/decisions.md "Which tables are partitioned"). So every other index leads
-- with a column they do not name, or is partial on a predicate they do not imply.
ALTER TABLE "emails" ADD CONSTRAINT "emails_pkey" PRIMARY KEY ("project_id", "id", "created_at");
CREATE TABLE "emails_default" PARTITION OF "emails" DEFAULT;

-- One partition per UTC month from the oldest row's (at most two years back: older rows wait in the default partition
-- for expiry) to two months ahead; the service's maintenance keeps the window going from there.
DO $$
DECLARE
  this_month timestamp := date_trunc('month', now() AT TIME ZONE 'UTC');
  m timestamp;
BEGIN
  SELECT date_trunc('month', min(created_at) AT TIME ZONE 'UTC') INTO m FROM emails_unpartitioned;
  m := least(greatest(coalesce(m, this_month), this_month - interval '24 months'), this_month);
  WHILE m <= this_month + interval '2 months' LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF emails FOR VALUES FROM (%L) TO (%L)',
      'emails_p' || to_char(m, 'YYYYMM'), m::text || '+00', (m + interval '1 month')::text || '+00');
    m := m + interval '1 month';
  END LOOP;
END
$$;

INSERT INTO "emails" SELECT * FROM "emails_unpartitioned";

-- A project's idempotency keys, which a partitioned table cannot hold unique (its unique keys must hold created_at):
-- written in the statement that stores the email, and gone with the email.
CREATE TABLE "email_idempotency_keys" (
  "project_id" UUID NOT NULL,
  "idempotency_key" TEXT NOT NULL,
  "email_id" UUID NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "email_idempotency_keys_pkey" PRIMARY KEY ("project_id", "idempotency_key")
);
-- The keys of the months retention dropped whole, deleted in batches by age.
CREATE INDEX "email_idempotency_keys_created_at_idx" ON "email_idempotency_keys"("created_at");
INSERT INTO "email_idempotency_keys" (project_id, idempotency_key, email_id, created_at)
SELECT project_id, idempotency_key, id, created_at FROM "emails_unpartitioned" WHERE idempotency_key IS NOT NULL;

DROP TABLE "emails_unpartitioned";

-- Each lane's claim reads its own partial index; lapsed leases and the queue depth read (status, locked_until).
CREATE INDEX "emails_urgent_due_idx" ON "emails" ("next_attempt_at") WHERE "status" = 'PENDING' AND "category" <> 'CAMPAIGN';
CREATE INDEX "emails_bulk_due_idx" ON "emails" ("project_id", "next_attempt_at") WHERE "status" = 'PENDING' AND "category" = 'CAMPAIGN';
CREATE INDEX "emails_status_locked_until_idx" ON "emails" ("status", "locked_until");
-- A provider's report names the email by the id the provider gave it, or by ours alone (a bounce's copy of our
-- Message-ID): only an email handed over has one (db/provider-events.ts).
CREATE INDEX "emails_provider_message_id_idx" ON "emails" ("provider_message_id");
CREATE INDEX "emails_id_idx" ON "emails" ("id") WHERE "status" <> 'PENDING';
-- A campaign's emails: its progress and its withdrawal.
CREATE INDEX "emails_campaign_id_status_idx" ON "emails" ("campaign_id", "status") WHERE "campaign_id" IS NOT NULL;
-- Retention's batches: the emails whose content has yet to expire, and the records done with, by project and age.
-- Partial, for the reason above.
CREATE INDEX "emails_content_expiry_idx" ON "emails" ("project_id", "created_at") WHERE "content_expired_at" IS NULL;
CREATE INDEX "emails_done_idx" ON "emails" ("project_id", "created_at") WHERE "status" NOT IN ('PENDING', 'SENDING');
-- A contact's emails by its id or its address, newest first: its erasure and its data export. They lead with the
-- contact, not the project, for the reason above.
CREATE INDEX "emails_contact_id_project_id_created_at_idx" ON "emails" ("contact_id", "project_id", "created_at");
CREATE INDEX "emails_to_email_project_id_created_at_idx" ON "emails" ("to_email", "project_id", "created_at");
