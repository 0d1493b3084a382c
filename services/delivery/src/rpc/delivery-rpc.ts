import type { ServiceImpl } from "@connectrpc/connect";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import type { DeliveryService } from "@herald/proto/herald/delivery/v1/delivery_service_pb";

export function createDeliveryRpc(deps: { info: ServiceInfo; mailProvider?: string }): Partial<ServiceImpl<typeof DeliveryService>> {
  return {
    getServiceInfo: () => ({ info: deps.info, mailProvider: deps.mailProvider ?? "" }),
  };
}
