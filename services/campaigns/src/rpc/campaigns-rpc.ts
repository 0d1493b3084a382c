import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { CampaignMetric, CampaignSort, type CampaignsService, SortDirection } from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import { type Campaigns, campaignUsesEvent, campaignUsesField, campaignUsesSegment } from "../campaigns/campaigns.js";
import type { CampaignRow } from "../db/campaigns.js";
import type { CampaignStatus as StatusName } from "../domain/campaign-status.js";
import { campaignToProto, fieldsFromProto, statsToProto, statusFromProto, statusToProto } from "./proto-mapping.js";

const pageSizeDefault = 20;
const pageSizeMax = 100;

const rate = (part: number, whole: number) => (whole > 0 ? part / whole : 0);

const metricOf = (metric: CampaignMetric): ((row: CampaignRow) => number) => {
  switch (metric) {
    case CampaignMetric.SENT:
      return (row) => row.sentCount;
    case CampaignMetric.CLICKED:
      return (row) => row.clickedCount;
    case CampaignMetric.OPEN_RATE:
      return (row) => rate(row.openedCount, row.deliveredCount || row.sentCount);
    case CampaignMetric.CLICK_RATE:
      return (row) => rate(row.clickedCount, row.deliveredCount || row.sentCount);
    default:
      return (row) => row.openedCount;
  }
};

const usageOf = (rows: CampaignRow[]) => ({
  campaigns: rows.map((row) => ({ id: row.id, name: row.name, status: statusToProto[row.status as StatusName] })),
});

export function createCampaignsRpc(deps: { info: ServiceInfo; campaigns: Campaigns }): ServiceImpl<typeof CampaignsService> {
  const { campaigns } = deps;
  return {
    getServiceInfo: () => ({ info: deps.info }),

    async listCampaigns(request) {
      const pageSize = request.pageSize <= 0 ? pageSizeDefault : Math.min(request.pageSize, pageSizeMax);
      const page = Math.max(request.page, 1);
      const { rows, total } = await campaigns.list(request.projectId, {
        page,
        pageSize,
        status: statusFromProto(request.status),
        search: request.search,
        sort: request.sort === CampaignSort.NAME ? "name" : request.sort === CampaignSort.UPDATED_AT ? "updatedAt" : "createdAt",
        direction: request.direction === SortDirection.ASC ? "asc" : "desc",
      });
      return { campaigns: rows.map(campaignToProto), page, pageSize, total: BigInt(total), totalPages: Math.ceil(total / pageSize) };
    },
    async createCampaign(request) {
      return { campaign: campaignToProto(await campaigns.create(request.projectId, fieldsFromProto(request.fields))) };
    },
    async getCampaign(request) {
      return { campaign: campaignToProto(await campaigns.get(request.projectId, request.id)) };
    },
    async updateCampaign(request) {
      return { campaign: campaignToProto(await campaigns.update(request.projectId, request.id, fieldsFromProto(request.fields))) };
    },
    async deleteCampaign(request) {
      await campaigns.remove(request.projectId, request.id);
      return {};
    },
    async duplicateCampaign(request) {
      return { campaign: campaignToProto(await campaigns.duplicate(request.projectId, request.id)) };
    },
    async sendCampaign(request) {
      const scheduledFor = request.scheduledFor ? timestampDate(request.scheduledFor) : undefined;
      return { campaign: campaignToProto(await campaigns.send(request.projectId, request.id, scheduledFor)) };
    },
    async cancelCampaign(request) {
      const { campaign, withdrawn } = await campaigns.cancel(request.projectId, request.id);
      return { campaign: campaignToProto(campaign), withdrawn: BigInt(withdrawn) };
    },
    async sendTestEmail(request) {
      return { emailId: await campaigns.sendTest(request.projectId, request.id, request.email) };
    },
    async getCampaignStats(request) {
      return { stats: statsToProto(await campaigns.get(request.projectId, request.id)) };
    },
    async getTopCampaigns(request) {
      const limit = request.limit <= 0 ? 5 : Math.min(request.limit, 50);
      const metric = metricOf(request.metric);
      const rows = await campaigns.sentCampaigns(request.projectId, request.since ? timestampDate(request.since) : undefined);
      const ranked = [...rows].sort((a, b) => metric(b) - metric(a) || (b.sentAt?.getTime() ?? 0) - (a.sentAt?.getTime() ?? 0));
      return { campaigns: ranked.slice(0, limit).map(statsToProto) };
    },
    async listCampaignStats(request) {
      const rows = await campaigns.sentCampaigns(request.projectId, request.since ? timestampDate(request.since) : undefined);
      return { campaigns: rows.map(statsToProto) };
    },
    async listUpcomingCampaigns(request) {
      const limit = request.limit <= 0 ? 20 : Math.min(request.limit, 100);
      return { campaigns: (await campaigns.upcoming(request.projectId, limit)).map(campaignToProto) };
    },
    async listFieldUsage(request) {
      return usageOf(await campaigns.usage(request.projectId, (row) => campaignUsesField(row, request.field)));
    },
    async listEventUsage(request) {
      return usageOf(await campaigns.usage(request.projectId, (row) => campaignUsesEvent(row, request.name)));
    },
    async listSegmentUsage(request) {
      return usageOf(
        await campaigns.usage(request.projectId, (row) => campaignUsesSegment(row, request.segmentId), ["SCHEDULED", "SENDING"]),
      );
    },
  };
}
