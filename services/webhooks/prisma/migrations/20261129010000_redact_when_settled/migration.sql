-- A message whose payload names an erased contact, still to go out: redacted once delivered or failed for good.
ALTER TABLE "messages" ADD COLUMN "redact_when_settled" BOOLEAN NOT NULL DEFAULT false;
