import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Kafka } from "kafkajs";
import type { Logger } from "pino";
import { createEventConsumer, type EventConsumer } from "./event-consumer.js";
import type { SqlClient, TransactionalClient } from "./sql-client.js";
import { topics } from "./topics.js";

/** A project's data to wipe, as a project-lifecycle event announced it. */
export interface ProjectWipe {
  projectId: string;
  /** A reset wipes the data the project had when it happened; a deletion wipes the project. */
  reason: "project.reset" | "project.deleted";
  /** When identity made the change (the event's occurredAt; now, for an event without one). */
  occurredAt: Date;
}

/**
 * A service's consumer of herald.project-lifecycle.v1, for the two events that wipe a
 * project's data there: each reset or deletion reaches `wipe` once, inside the
 * transaction that records the event as applied (createEventConsumer). An event of a
 * project id the service could not store (`isProjectId` refuses it) is logged and
 * skipped rather than failing its partition for ever.
 */
export function createProjectWipeConsumer<Tx extends SqlClient>(options: {
  kafka: Kafka;
  db: TransactionalClient<Tx>;
  logger: Logger;
  groupId: string;
  /** Tests with a group of their own read the topic from its start. */
  fromBeginning?: boolean;
  isProjectId: (value: string) => boolean;
  wipe: (wipe: ProjectWipe, tx: Tx) => Promise<void>;
}): EventConsumer {
  const { logger } = options;
  return createEventConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: [topics.projectLifecycle],
    db: options.db,
    logger,
    fromBeginning: options.fromBeginning,
    handle: async (event, tx) => {
      if (event.type !== "project.reset" && event.type !== "project.deleted") return;
      if (!options.isProjectId(event.projectId)) {
        logger.warn({ eventId: event.eventId, projectId: event.projectId }, "skipping a lifecycle event of a malformed project id");
        return;
      }
      const occurredAt = event.occurredAt ? timestampDate(event.occurredAt) : new Date();
      await options.wipe({ projectId: event.projectId, reason: event.type, occurredAt }, tx);
    },
  });
}
