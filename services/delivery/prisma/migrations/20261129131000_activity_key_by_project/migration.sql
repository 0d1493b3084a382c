-- Hand-written. A primary key that holds project_id, so that email_activity can be distributed by project on Citus
-- (docs/scaling.md). It leads with project_id and the time, and takes the place of the (project_id, occurred_at DESC,
-- id DESC) index that /activity's pages read (an index reads as well backwards). It rebuilds over every partition and
-- holds writes to email_activity meanwhile (docs/operations.md "Upgrade").
ALTER TABLE "email_activity" DROP CONSTRAINT "email_activity_pkey";
ALTER TABLE "email_activity" ADD CONSTRAINT "email_activity_pkey" PRIMARY KEY ("project_id", "occurred_at", "id");
DROP INDEX "email_activity_project_id_occurred_at_id_idx";
