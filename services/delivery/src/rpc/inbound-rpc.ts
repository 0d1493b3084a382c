import type { ServiceImpl } from "@connectrpc/connect";
import type { InboundService } from "@herald/proto/herald/delivery/v1/inbound_service_pb";
import type { InboundSettings } from "../inbound/inbound-settings.js";

export function createInboundRpc(deps: { inboundSettings: InboundSettings }): ServiceImpl<typeof InboundService> {
  return {
    async getInboundSettings(request) {
      return { settings: await deps.inboundSettings.get(request.projectId) };
    },
    async updateInboundSettings(request) {
      return { settings: await deps.inboundSettings.set(request.projectId, request.enabled) };
    },
  };
}
