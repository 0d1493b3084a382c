import type { ServiceImpl } from "@connectrpc/connect";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import type { IdentityService } from "@herald/proto/herald/identity/v1/identity_service_pb";

export function createIdentityRpc(deps: { info: ServiceInfo }): Partial<ServiceImpl<typeof IdentityService>> {
  return {
    getServiceInfo: () => ({ info: deps.info }),
  };
}
