import { DomainError } from "@herald/errors";

export const campaignStatuses = ["DRAFT", "SCHEDULED", "SENDING", "SENT", "CANCELLED"] as const;
export type CampaignStatus = (typeof campaignStatuses)[number];

/** What a user may do to a campaign in each status (docs/api-decisions.md "Campaigns"). */
const allowed = {
  update: ["DRAFT", "SCHEDULED"],
  delete: ["DRAFT", "SENT", "CANCELLED"],
  send: ["DRAFT"],
  cancel: ["SCHEDULED", "SENDING"],
} as const satisfies Record<string, readonly CampaignStatus[]>;

export type CampaignAction = keyof typeof allowed;

const verbs: Record<CampaignAction, string> = { update: "changed", delete: "deleted", send: "sent", cancel: "cancelled" };

export const mayCampaign = (action: CampaignAction, status: string): boolean => (allowed[action] as readonly string[]).includes(status);

/** 409 CAMPAIGN_STATE_CONFLICT unless the status allows the action. */
export function requireCampaignMay(action: CampaignAction, status: string): void {
  if (mayCampaign(action, status)) return;
  throw new DomainError("conflict", "CAMPAIGN_STATE_CONFLICT", `A ${status} campaign cannot be ${verbs[action]}`, {
    details: { status },
    suggestion: `Only a campaign that is ${allowed[action].join(" or ")} can be ${verbs[action]}`,
  });
}

/**
 * 409 CAMPAIGN_STATE_CONFLICT for a DELETE of a campaign that is SCHEDULED or SENDING: the refusal names the
 * campaign and what makes it active, so that the user knows what to cancel.
 */
export function requireCampaignDeletable(campaign: { id: string; status: string; scheduledFor: Date | null }): void {
  if (mayCampaign("delete", campaign.status)) return;
  const what =
    campaign.status === "SCHEDULED" && campaign.scheduledFor
      ? `is scheduled to send at ${campaign.scheduledFor.toISOString()}`
      : `is ${campaign.status === "SENDING" ? "sending" : campaign.status}`;
  throw new DomainError("conflict", "CAMPAIGN_STATE_CONFLICT", `The campaign ${campaign.id} ${what}: cancel it before deleting it`, {
    details: {
      status: campaign.status,
      campaignId: campaign.id,
      ...(campaign.scheduledFor ? { scheduledFor: campaign.scheduledFor.toISOString() } : {}),
    },
    suggestion: `Cancel it with POST /campaigns/${campaign.id}/cancel, then delete it`,
  });
}

export const campaignNotFound = () => new DomainError("not-found", "CAMPAIGN_NOT_FOUND", "Campaign not found");
