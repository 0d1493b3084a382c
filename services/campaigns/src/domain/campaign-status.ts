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

export const campaignNotFound = () => new DomainError("not-found", "CAMPAIGN_NOT_FOUND", "Campaign not found");
