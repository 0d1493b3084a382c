import { create } from "@bufbuild/protobuf";
import { createEnvelope, type SqlClient, topics, writeOutboxEvent } from "@herald/kafka";
import { CampaignEventSchema } from "@herald/proto/herald/events/v1/campaign_event_pb";

/** What produces herald.campaign-events.v1 envelopes. */
export const eventSource = "campaigns";

export type CampaignEventType = "campaign.sent" | "campaign.paused";

/** The campaign as its event tells it. */
export interface CampaignFacts {
  id: string;
  projectId: string;
  name: string;
  subject: string;
  /** Recipients handed to delivery so far. */
  recipients: number;
}

/**
 * Records a campaign's event in the outbox, in the caller's transaction: the one that
 * moves the campaign to SENT, or that stops its project's sending. It concerns no
 * contact, so the project id keys it.
 */
export async function writeCampaignEvent(
  tx: SqlClient,
  type: CampaignEventType,
  campaign: CampaignFacts,
  details: { reason?: string; occurredAt?: Date } = {},
): Promise<void> {
  await writeOutboxEvent(
    tx,
    topics.campaignEvents,
    createEnvelope({
      type,
      projectId: campaign.projectId,
      source: eventSource,
      ...(details.occurredAt ? { occurredAt: details.occurredAt } : {}),
      payloadSchema: CampaignEventSchema,
      payload: create(CampaignEventSchema, {
        campaignId: campaign.id,
        name: campaign.name,
        subject: campaign.subject,
        recipients: BigInt(campaign.recipients),
        reason: details.reason ?? "",
      }),
    }),
  );
}
