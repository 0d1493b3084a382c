import { createHealthState, createRpcServer, type Logger, type Metrics, type RpcServer, serverInterceptors } from "@herald/platform";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import { WebhooksService } from "@herald/proto/herald/webhooks/v1/webhooks_service_pb";
import type { Db } from "./db/client.js";
import { createWebhooksRpc } from "./rpc/webhooks-rpc.js";
import type { Webhooks } from "./webhooks/webhooks.js";

export interface Deps {
  db: Db;
  logger: Logger;
  /** RED per RPC; tests that build the server leave it out. */
  metrics?: Metrics;
  info: ServiceInfo;
  webhooks: Webhooks;
}

export function build(deps: Deps): RpcServer {
  return createRpcServer({
    health: createHealthState([WebhooksService.typeName]),
    interceptors: serverInterceptors(deps),
    logger: deps.logger,
    metrics: deps.metrics,
    routes: (router) => router.service(WebhooksService, createWebhooksRpc(deps)),
  });
}
