-- CreateIndex
CREATE INDEX "emails_provider_message_id_idx" ON "emails"("provider_message_id");

