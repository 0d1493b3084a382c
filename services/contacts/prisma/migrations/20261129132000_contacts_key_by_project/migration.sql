-- Hand-written. A primary key that leads with project_id, so that contacts can be distributed by project on Citus
-- (docs/scaling.md): the unique (project_id, id) index that memberships and events reference becomes the key. The id
-- keeps an index of its own, no longer unique (ids are random UUIDs), for the statements that still name a contact by
-- its id alone; on Citus those would reach every shard (docs/scaling.md "What remains").
CREATE INDEX "contacts_id_idx" ON "contacts"("id");
ALTER TABLE "contacts" DROP CONSTRAINT "contacts_pkey";
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_pkey" PRIMARY KEY USING INDEX "contacts_project_id_id_key";
