-- Every unique key of messages leads with project_id, so that the table can be distributed by project on Citus
-- (docs/scaling.md, section 4): Citus requires each primary key and unique index of a distributed table to hold the
-- distribution column. Every statement on messages already names the project, so the new keys serve the same lookups,
-- and the primary key serves what the index on project_id alone did.
ALTER TABLE "messages" DROP CONSTRAINT "messages_pkey";
ALTER TABLE "messages" ADD CONSTRAINT "messages_pkey" PRIMARY KEY ("project_id", "id");
DROP INDEX "messages_endpoint_id_event_id_key";
CREATE UNIQUE INDEX "messages_project_id_endpoint_id_event_id_key" ON "messages"("project_id", "endpoint_id", "event_id");
DROP INDEX "messages_project_id_idx";
