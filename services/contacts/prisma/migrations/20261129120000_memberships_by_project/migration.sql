-- segment_members' keys lead with project_id, so that memberships can be distributed by project on Citus beside their
-- contacts (docs/scaling.md, section 4): its primary key, its index by contact, and its foreign keys, which now name
-- the project on both sides. Contacts and segments keep their primary keys for now, and gain the unique
-- (project_id, id) that the composite foreign keys reference (the contacts one replaces the plain index on the same
-- columns). A membership whose project is not its contact's or its segment's could only be corrupt, and goes.
DELETE FROM "segment_members" m USING "contacts" c WHERE c."id" = m."contact_id" AND c."project_id" <> m."project_id";
DELETE FROM "segment_members" m USING "segments" s WHERE s."id" = m."segment_id" AND s."project_id" <> m."project_id";

CREATE UNIQUE INDEX "contacts_project_id_id_key" ON "contacts"("project_id", "id");
DROP INDEX "contacts_project_id_id_idx";
CREATE UNIQUE INDEX "segments_project_id_id_key" ON "segments"("project_id", "id");

ALTER TABLE "segment_members" DROP CONSTRAINT "segment_members_segment_id_fkey";
ALTER TABLE "segment_members" DROP CONSTRAINT "segment_members_contact_id_fkey";
ALTER TABLE "segment_members" DROP CONSTRAINT "segment_members_pkey";
ALTER TABLE "segment_members" ADD CONSTRAINT "segment_members_pkey" PRIMARY KEY ("project_id", "segment_id", "contact_id");
DROP INDEX "segment_members_contact_id_idx";
CREATE INDEX "segment_members_project_id_contact_id_idx" ON "segment_members"("project_id", "contact_id");
ALTER TABLE "segment_members" ADD CONSTRAINT "segment_members_project_id_segment_id_fkey" FOREIGN KEY ("project_id", "segment_id")
  REFERENCES "segments"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "segment_members" ADD CONSTRAINT "segment_members_project_id_contact_id_fkey" FOREIGN KEY ("project_id", "contact_id")
  REFERENCES "contacts"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
