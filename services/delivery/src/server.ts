import { createHealthState, createRpcServer, type Logger, type RpcServer, serverInterceptors } from "@herald/platform";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import { DeliveryService } from "@herald/proto/herald/delivery/v1/delivery_service_pb";
import type { Db } from "./db/client.js";
import { createDeliveryRpc } from "./rpc/delivery-rpc.js";

export interface Deps {
  db: Db;
  logger: Logger;
  info: ServiceInfo;
}

export function build(deps: Deps): RpcServer {
  return createRpcServer({
    health: createHealthState([DeliveryService.typeName]),
    interceptors: serverInterceptors(deps),
    routes: (router) => router.service(DeliveryService, createDeliveryRpc(deps)),
  });
}
