import type { Client } from "@connectrpc/connect";
import { DomainError } from "@herald/errors";
import type { CampaignsService } from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";

/** Refuses to delete a segment that a SCHEDULED or SENDING campaign sends to (docs/decisions.md "Segments in use by campaigns"). */
export type SegmentInUseCheck = (projectId: string, segmentId: string) => Promise<void>;

/**
 * Asks the campaigns service, which owns campaigns, at the moment of the delete: one RPC on a
 * rare path, and no copy of campaign state to keep in step. A campaign that starts using the
 * segment after the answer finds it gone when it fans out, and stops with that reason.
 */
export function createSegmentInUseCheck(campaigns: Client<typeof CampaignsService>): SegmentInUseCheck {
  return async (projectId, segmentId) => {
    const { campaigns: using } = await campaigns.listSegmentUsage({ projectId, segmentId });
    const [first] = using;
    if (!first) return;
    throw new DomainError("conflict", "SEGMENT_IN_USE", `The segment is used by the active campaign "${first.name}"`, {
      details: { campaignId: first.id, campaigns: using.map((campaign) => campaign.id).join(",") },
      suggestion: "Cancel the campaign, or wait until it has sent, before deleting the segment",
    });
  };
}
