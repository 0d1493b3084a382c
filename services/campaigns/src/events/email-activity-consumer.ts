import { createEventConsumer, type EventConsumer, type EventEnvelope, payloadOf, topics } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import { type EmailActivity, EmailActivitySchema } from "@herald/proto/herald/events/v1/email_activity_pb";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { applyCampaignCounts, type CampaignCount } from "../db/counters.js";
import { counterOf } from "../domain/counters.js";
import { isId } from "../domain/ids.js";

export const emailActivityGroupId = "campaigns.email-activity";

function activityOf(event: EventEnvelope, logger: Logger): EmailActivity | undefined {
  try {
    return payloadOf(event, EmailActivitySchema);
  } catch (error) {
    // A producer's bug: skipped, or it would hold back every event of its chunk for ever.
    logger.warn({ err: error, eventId: event.eventId }, "skipping email activity whose payload cannot be read");
    return undefined;
  }
}

/** The count an event makes: an email activity that moves a counter, of an email of a campaign. */
export function campaignCountOf(event: EventEnvelope, logger: Logger): CampaignCount | undefined {
  const counter = counterOf(event.type);
  if (!counter) return undefined;
  const activity = activityOf(event, logger);
  if (!activity?.campaignId || !isId(activity.campaignId) || !isId(event.projectId) || !activity.emailId) return undefined;
  return { projectId: event.projectId, campaignId: activity.campaignId, emailId: activity.emailId, counter };
}

/**
 * A campaign's counters from delivery's activity, applied once per event (processed_events),
 * the first open and the first click of each email only (campaign_engagements). The activity
 * of emails outside campaigns (most of it: /v1/send and workflows) is passed over without a
 * transaction or a processed_events row, since applying it would change nothing.
 */
export function createEmailActivityConsumer(deps: { kafka: Kafka; db: Db; logger: Logger; groupId?: string }): EventConsumer {
  return createEventConsumer({
    kafka: deps.kafka,
    groupId: deps.groupId ?? emailActivityGroupId,
    topics: [topics.emailActivity],
    db: deps.db,
    logger: deps.logger,
    batchWindowMs: 250,
    accepts: (event) => campaignCountOf(event, deps.logger) !== undefined,
    handleChunk: async (events, tx) => {
      const counts = events.flatMap((event) => campaignCountOf(event, deps.logger) ?? []);
      await applyCampaignCounts(tx, counts);
    },
  });
}
