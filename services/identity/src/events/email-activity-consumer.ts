import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createEventConsumer, type EventConsumer, payloadOf, topics } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import { type EmailActivity, EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { applyEmailActivities, type EmailActivityCount } from "../db/usage.js";
import { type ActivityCategory, effectOfEmailActivity } from "../domain/email-activity-effect.js";
import { isId } from "../domain/ids.js";
import type { ReputationGuard } from "../projects/reputation-guard.js";

export const emailActivityGroupId = "identity.email-activity";

const categoryNames: Record<EmailCategory, ActivityCategory> = {
  [EmailCategory.UNSPECIFIED]: "unspecified",
  [EmailCategory.TRANSACTIONAL]: "transactional",
  [EmailCategory.CAMPAIGN]: "campaign",
  [EmailCategory.WORKFLOW]: "workflow",
  [EmailCategory.INBOUND]: "inbound",
};

/**
 * Meters sends per billing category and keeps the daily reputation counts, from delivery's activity; the
 * reputation guard then judges the projects whose counts the chunk changed, in the same transaction.
 */
export function createEmailActivityConsumer(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  fromBeginning?: boolean;
  /** Tests that share a broker with a running identity use a group of their own. */
  groupId?: string;
  guard?: ReputationGuard;
}): EventConsumer {
  return createEventConsumer({
    kafka: deps.kafka,
    groupId: deps.groupId ?? emailActivityGroupId,
    topics: [topics.emailActivity],
    db: deps.db,
    logger: deps.logger,
    fromBeginning: deps.fromBeginning,
    // Counters and the reputation guard's judgement may trail the sends by a second: the broker gathers up to that
    // much activity per chunk, and a chunk's statements cost the same for a few events as for a hundred.
    batchWindowMs: 1_000,
    handleChunk: async (events, tx) => {
      const counts: EmailActivityCount[] = [];
      for (const event of events) {
        let activity: EmailActivity | undefined;
        try {
          activity = payloadOf(event, EmailActivitySchema);
        } catch (error) {
          // A producer's bug: skipped, or it would hold back every event of its chunk for ever.
          deps.logger.warn({ err: error, eventId: event.eventId }, "skipping email activity whose payload cannot be read");
          continue;
        }
        const effect = effectOfEmailActivity(event.type, categoryNames[activity?.category ?? EmailCategory.UNSPECIFIED] ?? "unspecified", {
          refusedAtHandover: activity?.refusedAtHandover ?? false,
        });
        if (!effect.usage && !effect.daily) continue;
        if (!isId(event.projectId)) {
          deps.logger.warn({ eventId: event.eventId, projectId: event.projectId }, "skipping email activity of a malformed project id");
          continue;
        }
        counts.push({ projectId: event.projectId, occurredAt: event.occurredAt ? timestampDate(event.occurredAt) : new Date(), effect });
      }
      await applyEmailActivities(tx, counts);
      const judged = new Set(counts.flatMap((count) => (count.effect.daily ? [count.projectId] : [])));
      if (deps.guard && judged.size > 0) await deps.guard(tx, [...judged]);
    },
  });
}
