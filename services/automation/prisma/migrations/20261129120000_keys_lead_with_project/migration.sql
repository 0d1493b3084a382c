-- The keys of executions, their step runs and the entrants lead with project_id, so that these tables can be
-- distributed by project on Citus (docs/scaling.md, section 4): Citus requires each primary key and unique index of a
-- distributed table, and each foreign key between two of them, to hold the distribution column. The engine names the
-- project in every statement on them. Entrants gain the column, filled from their workflow; those of a workflow that
-- is gone can no longer refuse anyone's re-entry, and go.
ALTER TABLE "workflow_entrants" ADD COLUMN "project_id" TEXT;
UPDATE "workflow_entrants" e SET "project_id" = w."project_id" FROM "workflows" w WHERE w."id" = e."workflow_id";
DELETE FROM "workflow_entrants" WHERE "project_id" IS NULL;
ALTER TABLE "workflow_entrants" ALTER COLUMN "project_id" SET NOT NULL;
ALTER TABLE "workflow_entrants" DROP CONSTRAINT "workflow_entrants_pkey";
ALTER TABLE "workflow_entrants" ADD CONSTRAINT "workflow_entrants_pkey" PRIMARY KEY ("project_id", "workflow_id", "contact_id");

ALTER TABLE "workflow_step_runs" DROP CONSTRAINT "workflow_step_runs_execution_id_fkey";
ALTER TABLE "workflow_executions" DROP CONSTRAINT "workflow_executions_pkey";
ALTER TABLE "workflow_executions" ADD CONSTRAINT "workflow_executions_pkey" PRIMARY KEY ("project_id", "id");
DROP INDEX "workflow_executions_workflow_id_trigger_event_id_key";
CREATE UNIQUE INDEX "workflow_executions_project_id_workflow_id_trigger_event_id_key"
  ON "workflow_executions"("project_id", "workflow_id", "trigger_event_id");

ALTER TABLE "workflow_step_runs" DROP CONSTRAINT "workflow_step_runs_pkey";
ALTER TABLE "workflow_step_runs" ADD CONSTRAINT "workflow_step_runs_pkey" PRIMARY KEY ("project_id", "id");
DROP INDEX "workflow_step_runs_execution_id_created_at_idx";
CREATE INDEX "workflow_step_runs_project_id_execution_id_created_at_idx" ON "workflow_step_runs"("project_id", "execution_id", "created_at");
ALTER TABLE "workflow_step_runs" ADD CONSTRAINT "workflow_step_runs_project_id_execution_id_fkey" FOREIGN KEY ("project_id", "execution_id")
  REFERENCES "workflow_executions"("project_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
