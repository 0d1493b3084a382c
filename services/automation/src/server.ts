import { createHealthState, createRpcServer, type Logger, type RpcServer, serverInterceptors } from "@herald/platform";
import { AutomationService } from "@herald/proto/herald/automation/v1/automation_service_pb";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import type { Db } from "./db/client.js";
import { createAutomationRpc } from "./rpc/automation-rpc.js";

export interface Deps {
  db: Db;
  logger: Logger;
  info: ServiceInfo;
}

export function build(deps: Deps): RpcServer {
  return createRpcServer({
    health: createHealthState([AutomationService.typeName]),
    interceptors: serverInterceptors(deps),
    routes: (router) => router.service(AutomationService, createAutomationRpc(deps)),
  });
}
