import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { validationFailed } from "@herald/errors";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import type { WebhooksService } from "@herald/proto/herald/webhooks/v1/webhooks_service_pb";
import { eventTypeCatalogue, exampleEvent } from "../domain/event-types.js";
import type { Webhooks } from "../webhooks/webhooks.js";
import { endpointToProto, messageToProto } from "./proto-mapping.js";

/** The catalogue's examples name a project of no one's. */
const exampleProjectId = "00000000-0000-4000-8000-000000000000";

export function createWebhooksRpc(deps: { info: ServiceInfo; webhooks: Webhooks }): ServiceImpl<typeof WebhooksService> {
  const { webhooks } = deps;
  return {
    getServiceInfo: () => ({ info: deps.info }),

    async listEndpoints(request) {
      const page = await webhooks.list(request.projectId, request.limit, request.cursor);
      return { endpoints: page.endpoints.map(endpointToProto), cursor: page.cursor, hasMore: page.hasMore, total: BigInt(page.total) };
    },
    async createEndpoint(request) {
      const { endpoint, secret } = await webhooks.create(request.projectId, {
        url: request.url,
        description: request.description,
        eventTypes: request.eventTypes,
        enabled: request.enabled,
      });
      return { endpoint: endpointToProto(endpoint), secret };
    },
    async getEndpoint(request) {
      return { endpoint: endpointToProto(await webhooks.get(request.projectId, request.id)) };
    },
    async updateEndpoint(request) {
      const endpoint = await webhooks.update(request.projectId, request.id, {
        url: request.url,
        description: request.description,
        eventTypes: request.updateEventTypes ? request.eventTypes : undefined,
        enabled: request.enabled,
      });
      return { endpoint: endpointToProto(endpoint) };
    },
    async deleteEndpoint(request) {
      await webhooks.remove(request.projectId, request.id);
      return {};
    },
    async rotateSecret(request) {
      const { secret, previousSecretExpiresAt } = await webhooks.rotateSecret(request.projectId, request.id);
      return { secret, previousSecretExpiresAt: timestampFromDate(previousSecretExpiresAt) };
    },
    async listMessages(request) {
      const page = await webhooks.listMessages(request.projectId, request.endpointId, {
        limit: request.limit,
        cursor: request.cursor,
        status: request.status,
      });
      return { messages: page.messages.map(messageToProto), cursor: page.cursor, hasMore: page.hasMore, total: BigInt(page.total) };
    },
    async retryMessage(request) {
      return { message: messageToProto(await webhooks.retry(request.projectId, request.endpointId, request.messageId)) };
    },
    async recoverMessages(request) {
      if (!request.since) {
        throw validationFailed("since is required", [{ field: "since", message: "since is required", code: "required" }]);
      }
      return { queued: BigInt(await webhooks.recover(request.projectId, request.endpointId, timestampDate(request.since))) };
    },
    async sendTestMessage(request) {
      return { message: messageToProto(await webhooks.sendTest(request.projectId, request.endpointId, request.eventType)) };
    },
    listEventTypes: () => ({
      eventTypes: eventTypeCatalogue.map((entry) => ({
        type: entry.type,
        description: entry.description,
        example: { ...exampleEvent(entry.type, exampleProjectId, new Date("2026-01-01T12:00:00.000Z")) },
      })),
    }),
  };
}
