import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Endpoint, EndpointSchema, type Message, MessageSchema } from "@herald/proto/herald/webhooks/v1/webhooks_service_pb";
import type { EndpointWithStats } from "../db/endpoints.js";
import type { MessageRow } from "../db/messages.js";
import { secretPrefixOf } from "../domain/endpoint-input.js";

export const endpointToProto = (row: EndpointWithStats): Endpoint =>
  create(EndpointSchema, {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    disabledReason: row.disabledReason ?? "",
    secretPrefix: secretPrefixOf(row.secret),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    ...(row.failingSince ? { failingSince: timestampFromDate(row.failingSince) } : {}),
    stats: { pending: BigInt(row.stats.pending), delivered: BigInt(row.stats.delivered), failed: BigInt(row.stats.failed) },
  });

export const messageToProto = (row: MessageRow): Message =>
  create(MessageSchema, {
    id: row.id,
    eventType: row.eventType,
    eventId: row.eventId,
    status: row.status,
    attempts: row.attempts.map((attempt) => ({
      at: timestampFromDate(new Date(attempt.at)),
      ...(attempt.statusCode === null ? {} : { statusCode: attempt.statusCode }),
      durationMs: BigInt(attempt.durationMs),
      response: attempt.response,
      error: attempt.error ?? "",
    })),
    ...(row.nextAttemptAt && (row.status === "pending" || row.status === "delivering")
      ? { nextAttemptAt: timestampFromDate(row.nextAttemptAt) }
      : {}),
    createdAt: timestampFromDate(row.createdAt),
    ...(row.deliveredAt ? { deliveredAt: timestampFromDate(row.deliveredAt) } : {}),
    payload: row.payload,
  });
