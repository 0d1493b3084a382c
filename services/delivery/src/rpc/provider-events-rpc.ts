import type { ServiceImpl } from "@connectrpc/connect";
import type { ProviderEventsService } from "@herald/proto/herald/delivery/v1/provider_events_service_pb";
import type { SesNotifications } from "../feedback/ses-notifications.js";

export function createProviderEventsRpc(deps: { sesNotifications: SesNotifications }): ServiceImpl<typeof ProviderEventsService> {
  return {
    async handleSesNotification(request) {
      return { outcome: await deps.sesNotifications.handle(request.body) };
    },
  };
}
