import { erasedContactsAmong } from "@herald/db";
import { createEventConsumer, type EventConsumer, type TransactionalClient } from "@herald/kafka";
import type { LoadingCache, Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { insertMessages, type NewMessage, type Tx } from "../db/messages.js";
import { newMessageId } from "../domain/endpoint-input.js";
import { subscribes } from "../domain/event-types.js";
import { isId } from "../domain/ids.js";
import { factTopics, webhookEventOf } from "./facts.js";

export const factsGroupId = "webhooks.facts";

/** A project's enabled endpoints, as the fan-out matches facts against them. */
export type EndpointsOfProject = LoadingCache<string, Array<{ id: string; eventTypes: string[] }>>;

/**
 * Fans Herald's facts out to endpoints: each fact that is a webhook event becomes one message per enabled endpoint of
 * its project that takes its type, in the transaction that records the event as applied (processed_events), so that a
 * redelivered fact queues nothing twice; (endpoint, event) is unique besides. A chunk's messages go in one statement.
 */
export function createFactConsumer(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  endpoints: EndpointsOfProject;
  /** The wait before a message's first attempt (WEBHOOK_RETRY_SCHEDULE's first entry). */
  firstWaitMs: number;
  /** Told when messages were queued, so that the dispatcher claims them at once. */
  onQueued: () => void;
  groupId?: string;
  fromBeginning?: boolean;
}): EventConsumer {
  // The dispatcher is told once a chunk's messages are committed (a claim before the commit would not see them).
  let queuedInChunk = false;
  const db: TransactionalClient<Tx> = {
    async $transaction(fn, options) {
      queuedInChunk = false;
      const result = await deps.db.$transaction(fn, options);
      if (queuedInChunk) deps.onQueued();
      return result;
    },
  };
  return createEventConsumer({
    kafka: deps.kafka,
    groupId: deps.groupId ?? factsGroupId,
    topics: [...factTopics],
    db,
    logger: deps.logger,
    fromBeginning: deps.fromBeginning,
    batchWindowMs: 50,
    // Facts of projects without endpoints (most of them) are passed over without a transaction.
    accepts: async (event) => isId(event.projectId) && (await deps.endpoints.get(event.projectId)).length > 0,
    handleChunk: async (events, tx) => {
      const messages: NewMessage[] = [];
      const nextAttemptAt = new Date(Date.now() + deps.firstWaitMs);
      // A fact about a contact erased before it got here goes out as any message waiting at the erasure does: once.
      const erased = await erasedContactsAmong(
        tx,
        "webhooks",
        events
          .filter((envelope) => envelope.contactId)
          .map((envelope) => ({ projectId: envelope.projectId, contactId: envelope.contactId })),
      );
      for (const envelope of events) {
        const event = webhookEventOf(envelope);
        if (!event) continue;
        const ofErased = erased.has(`${envelope.projectId} ${envelope.contactId}`);
        for (const endpoint of await deps.endpoints.get(envelope.projectId)) {
          if (!subscribes(endpoint.eventTypes, event.type)) continue;
          messages.push({
            id: newMessageId(),
            projectId: envelope.projectId,
            endpointId: endpoint.id,
            eventId: envelope.eventId,
            eventType: event.type,
            payload: { ...event },
            nextAttemptAt,
            // The endpoint is owed the deletion; the contact's erasure redacts it once delivered (eraseContactFromMessages).
            redactWhenSettled: event.type === "contact.deleted" || ofErased,
          });
        }
      }
      if ((await insertMessages(tx, messages)) > 0) queuedInChunk = true;
    },
  });
}
