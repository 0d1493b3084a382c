import { createEventConsumer, type EventConsumer, topics } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { deleteProjectDomains } from "../db/domains.js";
import { deleteProjectTemplates } from "../db/templates.js";
import { isId } from "../domain/ids.js";

export const projectLifecycleGroupId = "delivery.project-lifecycle";

/**
 * Forgets a deleted project's sending domains with their DKIM keys, its templates, emails and suppressions.
 * A reset keeps both: a reset wipes the project's data (contacts, events, sends), while
 * domains are configuration the user published in DNS and would otherwise have to
 * verify again, and templates are content the user wrote.
 */
export function createProjectLifecycleConsumer(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  groupId?: string;
  /** Tests with a group of their own read the topic from its start. */
  fromBeginning?: boolean;
}): EventConsumer {
  return createEventConsumer({
    kafka: deps.kafka,
    groupId: deps.groupId ?? projectLifecycleGroupId,
    topics: [topics.projectLifecycle],
    db: deps.db,
    logger: deps.logger,
    fromBeginning: deps.fromBeginning,
    handle: async (event, tx) => {
      if (event.type !== "project.deleted") return;
      if (!isId(event.projectId)) {
        deps.logger.warn({ eventId: event.eventId, projectId: event.projectId }, "skipping a lifecycle event of a malformed project id");
        return;
      }
      await deleteProjectDomains(tx, event.projectId);
      await deleteProjectTemplates(tx, event.projectId);
      // Its queued emails too: with its domains gone they could only fail, and the sent ones are the project's data.
      await tx.email.deleteMany({ where: { projectId: event.projectId } });
      await tx.suppression.deleteMany({ where: { projectId: event.projectId } });
    },
  });
}
