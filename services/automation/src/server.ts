import { createHealthState, createRpcServer, type Logger, type Metrics, type RpcServer, serverInterceptors } from "@herald/platform";
import { AutomationService } from "@herald/proto/herald/automation/v1/automation_service_pb";
import { WorkflowsService } from "@herald/proto/herald/automation/v1/workflows_service_pb";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import type { WebhookSecrets } from "./engine/webhook-secrets.js";
import type { Executions } from "./executions/executions.js";
import { createAutomationRpc } from "./rpc/automation-rpc.js";
import { createWorkflowsRpc } from "./rpc/workflows-rpc.js";
import type { Workflows } from "./workflows/workflows.js";

export interface Deps {
  logger: Logger;
  /** RED per RPC; tests that build the server leave it out. */
  metrics?: Metrics;
  info: ServiceInfo;
  workflows: Workflows;
  executions: Executions;
  webhookSecrets: WebhookSecrets;
}

export function build(deps: Deps): RpcServer {
  return createRpcServer({
    health: createHealthState([AutomationService.typeName, WorkflowsService.typeName]),
    interceptors: serverInterceptors(deps),
    logger: deps.logger,
    metrics: deps.metrics,
    routes: (router) => {
      router.service(AutomationService, createAutomationRpc(deps));
      router.service(WorkflowsService, createWorkflowsRpc(deps));
    },
  });
}
