import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Logger, type RetentionSetting, settleItems } from "@herald/platform";
import { RetentionWindowSchema } from "@herald/proto/herald/common/v1/retention_pb";
import {
  type EventsService,
  type TrackEventRequest,
  type TrackEventResponse,
  TrackEventResponseSchema,
} from "@herald/proto/herald/contacts/v1/events_service_pb";
import type { EventRetentionSettings } from "../tracking/event-retention.js";
import type { Events } from "../tracking/events.js";
import { eventNameToProto, eventToProto, usageToProto } from "./proto-mapping.js";

const retentionToProto = (setting: RetentionSetting) =>
  create(RetentionWindowSchema, {
    days: setting.days,
    custom: setting.custom,
    defaultDays: setting.window.defaultDays,
    minDays: setting.window.minDays,
    maxDays: setting.window.maxDays,
  });

export function createEventsRpc(deps: {
  events: Events;
  retention: EventRetentionSettings;
  logger: Logger;
}): ServiceImpl<typeof EventsService> {
  const { events, retention } = deps;

  async function track(request: TrackEventRequest): Promise<TrackEventResponse> {
    const tracked = await events.track({
      projectId: request.projectId,
      email: request.email,
      event: request.event,
      subscribed: request.subscribed,
      data: request.data,
    });
    return create(TrackEventResponseSchema, {
      contactId: tracked.contactId,
      eventId: tracked.eventId,
      createdAt: timestampFromDate(tracked.createdAt),
      contactCreated: tracked.contactCreated,
    });
  }

  return {
    trackEvent: track,

    /** Every item runs as its own TrackEvent at once; the track batcher writes the concurrent ones together. */
    async trackEvents(request, context) {
      return { results: await settleItems(request.events, track, { okCase: "tracked", logger: deps.logger, procedure: context.url }) };
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

    async getEventRetention(request) {
      return { events: retentionToProto(await retention.get(request.projectId)) };
    },

    async setEventRetention(request) {
      return { events: retentionToProto(await retention.set(request.projectId, request.days)) };
    },
  };
}
