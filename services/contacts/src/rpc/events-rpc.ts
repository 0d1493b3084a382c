import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EventsService } from "@herald/proto/herald/contacts/v1/events_service_pb";
import type { Events } from "../tracking/events.js";
import { eventNameToProto, eventToProto, usageToProto } from "./proto-mapping.js";

export function createEventsRpc(deps: { events: Events }): ServiceImpl<typeof EventsService> {
  const { events } = deps;
  return {
    async trackEvent(request) {
      const tracked = await events.track({
        projectId: request.projectId,
        email: request.email,
        event: request.event,
        subscribed: request.subscribed,
        data: request.data,
      });
      return {
        contactId: tracked.contactId,
        eventId: tracked.eventId,
        createdAt: timestampFromDate(tracked.createdAt),
        contactCreated: tracked.contactCreated,
      };
    },

    async listEvents(request) {
      const page = await events.list(request.projectId, {
        limit: request.limit,
        cursor: request.cursor,
        name: request.name,
        contactId: request.contactId,
      });
      return { events: page.events.map(eventToProto), cursor: page.cursor, hasMore: page.hasMore, total: BigInt(page.total) };
    },

    async getEventStats(request) {
      const stats = await events.stats(request.projectId);
      return {
        total: BigInt(stats.total),
        last24Hours: BigInt(stats.last24Hours),
        last7Days: BigInt(stats.last7Days),
        last30Days: BigInt(stats.last30Days),
        distinctNames: BigInt(stats.distinctNames),
        contactsWithEvents: BigInt(stats.contactsWithEvents),
      };
    },

    async listEventNames(request) {
      return { names: (await events.names(request.projectId)).map(eventNameToProto) };
    },

    async getEventUsage(request) {
      return { usages: (await events.usage(request.projectId, request.name)).map(usageToProto) };
    },

    async deleteEvents(request) {
      return { deleted: BigInt(await events.deleteByName(request.projectId, request.name)) };
    },

    async getTopEvents(request) {
      const top = await events.top(request.projectId, {
        limit: request.limit,
        since: request.since ? timestampDate(request.since) : undefined,
      });
      return { events: top.map(eventNameToProto) };
    },
  };
}
