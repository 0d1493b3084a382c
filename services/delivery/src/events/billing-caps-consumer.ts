import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createEventConsumer, type EventConsumer, payloadOf, topics } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import { BillingLimitsChangedSchema } from "@herald/proto/herald/events/v1/project_lifecycle_pb";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { deleteProjectBilling, saveBillingCaps } from "../db/monthly-usage.js";
import { isId } from "../domain/ids.js";

export const billingCapsGroupId = "delivery.billing-caps";

/**
 * Keeps delivery's copy of each project's billing caps (billing_caps), which the enqueue
 * checks: identity announces every change on herald.project-lifecycle.v1 as
 * project.billing_limits_changed with the caps as they now are. One group for every
 * replica, since the copy is in the shared database; a deletion forgets the caps and the
 * month's usage in the same order as the changes.
 */
export function createBillingCapsConsumer(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  groupId?: string;
  /** Tests with a group of their own read the topic from its start. */
  fromBeginning?: boolean;
}): EventConsumer {
  const { logger } = deps;
  return createEventConsumer({
    kafka: deps.kafka,
    groupId: deps.groupId ?? billingCapsGroupId,
    topics: [topics.projectLifecycle],
    db: deps.db,
    logger,
    fromBeginning: deps.fromBeginning,
    handle: async (event, tx) => {
      if (event.type !== "project.billing_limits_changed" && event.type !== "project.deleted") return;
      if (!isId(event.projectId)) {
        logger.warn({ eventId: event.eventId, projectId: event.projectId }, "skipping a lifecycle event of a malformed project id");
        return;
      }
      if (event.type === "project.deleted") {
        await deleteProjectBilling(tx, event.projectId);
        return;
      }
      const caps = payloadOf(event, BillingLimitsChangedSchema);
      if (!caps) {
        logger.warn({ eventId: event.eventId }, "skipping a project.billing_limits_changed event without its caps");
        return;
      }
      const changedAt = event.occurredAt ? timestampDate(event.occurredAt) : new Date();
      await saveBillingCaps(tx, event.projectId, caps, changedAt);
    },
  });
}
