-- campaign_engagements carries its campaign's project and its key leads with it, so that the table can be distributed
-- by project on Citus beside the other tables that grow with traffic (docs/scaling.md, section 4). Existing rows take
-- their campaign's project; a row whose campaign is gone counted toward nothing any more, and goes.
ALTER TABLE "campaign_engagements" ADD COLUMN "project_id" UUID;
UPDATE "campaign_engagements" e SET "project_id" = c."project_id" FROM "campaigns" c WHERE c."id" = e."campaign_id";
DELETE FROM "campaign_engagements" WHERE "project_id" IS NULL;
ALTER TABLE "campaign_engagements" ALTER COLUMN "project_id" SET NOT NULL;
ALTER TABLE "campaign_engagements" DROP CONSTRAINT "campaign_engagements_pkey";
ALTER TABLE "campaign_engagements" ADD CONSTRAINT "campaign_engagements_pkey" PRIMARY KEY ("project_id", "campaign_id", "email_id", "kind");
