import { createHealthState, createRpcServer, type Logger, type Metrics, type RpcServer, serverInterceptors } from "@herald/platform";
import { CampaignsService } from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import type { Campaigns } from "./campaigns/campaigns.js";
import type { Db } from "./db/client.js";
import { createCampaignsRpc } from "./rpc/campaigns-rpc.js";

export interface Deps {
  db: Db;
  logger: Logger;
  /** RED per RPC; tests that build the server leave it out. */
  metrics?: Metrics;
  info: ServiceInfo;
  campaigns: Campaigns;
}

export function build(deps: Deps): RpcServer {
  return createRpcServer({
    health: createHealthState([CampaignsService.typeName]),
    interceptors: serverInterceptors(deps),
    logger: deps.logger,
    metrics: deps.metrics,
    routes: (router) => router.service(CampaignsService, createCampaignsRpc(deps)),
  });
}
