import type { ServiceImpl } from "@connectrpc/connect";
import { CampaignEmailOutcome, type CampaignSendsService } from "@herald/proto/herald/delivery/v1/campaign_sends_service_pb";
import type { CampaignSends } from "../campaign-sends/campaign-sends.js";

const outcomeToProto = {
  enqueued: CampaignEmailOutcome.ENQUEUED,
  "already-enqueued": CampaignEmailOutcome.ALREADY_ENQUEUED,
  suppressed: CampaignEmailOutcome.SUPPRESSED,
} as const;

export function createCampaignSendsRpc(deps: { campaignSends: CampaignSends }): ServiceImpl<typeof CampaignSendsService> {
  const { campaignSends } = deps;
  return {
    async checkSender(request) {
      await campaignSends.checkSender(request.projectId, request.from);
      return {};
    },
    async enqueueCampaignEmails(request) {
      const results = await campaignSends.enqueue(request.projectId, {
        campaignId: request.campaignId,
        from: { email: request.from?.email ?? "", ...(request.from?.name ? { name: request.from.name } : {}) },
        ...(request.replyTo?.email ? { replyTo: { email: request.replyTo.email } } : {}),
        markers: {
          unsubscribeUrl: request.markers?.unsubscribeUrl ?? "",
          subscribeUrl: request.markers?.subscribeUrl ?? "",
          manageUrl: request.markers?.manageUrl ?? "",
        },
        emails: request.emails,
      });
      return {
        results: results.map((result) => ({
          outcome: outcomeToProto[result.outcome],
          emailId: result.outcome === "suppressed" ? "" : result.emailId,
        })),
      };
    },
    async withdrawCampaignEmails(request) {
      return { withdrawn: BigInt(await campaignSends.withdraw(request.projectId, request.campaignId)) };
    },
    async getCampaignProgress(request) {
      const { queued, total } = await campaignSends.progress(request.projectId, request.campaignId);
      return { queued: BigInt(queued), total: BigInt(total) };
    },
  };
}
