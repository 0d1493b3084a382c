import type { ServiceImpl } from "@connectrpc/connect";
import type { CampaignsService } from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";

export function createCampaignsRpc(deps: { info: ServiceInfo }): Partial<ServiceImpl<typeof CampaignsService>> {
  return {
    getServiceInfo: () => ({ info: deps.info }),
  };
}
