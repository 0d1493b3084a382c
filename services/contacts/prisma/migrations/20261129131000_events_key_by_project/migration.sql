-- Hand-written. Keys that hold project_id, so that events can be distributed by project on Citus (docs/scaling.md):
-- the primary key leads with it and takes the place of the (project_id, created_at, id) index that /events' pages
-- read, and the contact's foreign key names the project too (contacts' (project_id, id) is unique since
-- 20261129120000_memberships_by_project). Both rebuild over every partition and hold writes to events meanwhile
-- (docs/operations.md "Upgrade").
ALTER TABLE "events" DROP CONSTRAINT "events_pkey";
ALTER TABLE "events" ADD CONSTRAINT "events_pkey" PRIMARY KEY ("project_id", "created_at", "id");
DROP INDEX "events_project_id_created_at_id_idx";

ALTER TABLE "events" DROP CONSTRAINT "events_contact_id_fkey";
ALTER TABLE "events" ADD CONSTRAINT "events_contact_id_fkey" FOREIGN KEY ("project_id", "contact_id") REFERENCES "contacts"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
