-- A contact's executions, for its erasure (contact.deleted) and its data export.
CREATE INDEX "workflow_executions_project_id_contact_id_idx" ON "workflow_executions"("project_id", "contact_id");
