import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { createEnvelope } from "@herald/kafka";
import { createLogger } from "@herald/platform";
import { EmailActivitySchema } from "@herald/proto/herald/events/v1/email_activity_pb";
import { describe, expect, it } from "vitest";
import { campaignCountOf } from "./email-activity-consumer.js";

const logger = createLogger({ name: "campaign-counts-test", level: "silent" });
const projectId = randomUUID();
const campaignId = randomUUID();
const emailId = randomUUID();

const activity = (type: string, fields: { campaignId?: string; emailId?: string }) =>
  createEnvelope({
    type,
    projectId,
    source: "delivery",
    payloadSchema: EmailActivitySchema,
    payload: create(EmailActivitySchema, {
      emailId: fields.emailId ?? "",
      campaignId: fields.campaignId ?? "",
      recipient: "a@example.com",
    }),
  });

describe("which email activity moves a campaign's counters", () => {
  it("counts the activity of a campaign's email, on the counter of its type", () => {
    expect(campaignCountOf(activity("email.sent", { campaignId, emailId }), logger)).toEqual({
      projectId,
      campaignId,
      emailId,
      counter: "sent_count",
    });
    expect(campaignCountOf(activity("email.open", { campaignId, emailId }), logger)?.counter).toBe("opened_count");
  });

  it("passes over the activity of emails outside campaigns, of types no counter takes, and what cannot be read", () => {
    // /v1/send and workflows: the consumer applies none of it, so it writes no processed_events row for it.
    expect(campaignCountOf(activity("email.sent", { emailId }), logger)).toBeUndefined();
    expect(campaignCountOf(activity("email.failed", { campaignId, emailId }), logger)).toBeUndefined();
    expect(campaignCountOf(activity("email.sent", { campaignId: "not-an-id", emailId }), logger)).toBeUndefined();
    expect(campaignCountOf(activity("email.sent", { campaignId }), logger)).toBeUndefined();
    const notActivity = createEnvelope({
      type: "email.sent",
      projectId,
      source: "delivery",
      payloadSchema: StructSchema,
      payload: create(StructSchema),
    });
    expect(campaignCountOf(notActivity, logger)).toBeUndefined();
  });
});
