import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createEventConsumer, type EventConsumer, topics } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { requestProjectWipe } from "../db/project-wipes.js";
import { isId } from "../domain/ids.js";

export const projectLifecycleGroupId = "contacts.project-lifecycle";

/**
 * Hears of project resets and deletions and records a wipe of the project's
 * contacts, events, fields and jobs, which the job worker (polling) carries out in
 * batches: the consumer's own transaction stays short however much data there is.
 * A reset wipes what existed when it happened (data written after it stays); a
 * deletion wipes everything.
 */
export function createProjectLifecycleConsumer(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  /** Tests that share a broker with a running contacts service use a group of their own. */
  groupId?: string;
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
      if (event.type !== "project.reset" && event.type !== "project.deleted") return;
      if (!isId(event.projectId)) {
        deps.logger.warn({ eventId: event.eventId, projectId: event.projectId }, "skipping a lifecycle event of a malformed project id");
        return;
      }
      const cutoff = event.type === "project.reset" ? (event.occurredAt ? timestampDate(event.occurredAt) : new Date()) : null;
      await requestProjectWipe(tx, { projectId: event.projectId, reason: event.type, cutoff });
    },
  });
}
