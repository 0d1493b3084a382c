import type { ServiceImpl } from "@connectrpc/connect";
import type { AutomationService } from "@herald/proto/herald/automation/v1/automation_service_pb";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";

export function createAutomationRpc(deps: { info: ServiceInfo }): Partial<ServiceImpl<typeof AutomationService>> {
  return {
    getServiceInfo: () => ({ info: deps.info }),
  };
}
