import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Kafka } from "kafkajs";
import type { Logger } from "pino";
import { createEventConsumer, type EventConsumer } from "./event-consumer.js";
import type { SqlClient, TransactionalClient } from "./sql-client.js";
import { topics } from "./topics.js";

/** Whether a project's background work may run, as a project-lifecycle event announced it. */
export interface ProjectStatusChange {
  projectId: string;
  /**
   * project.disabled and project.deleted stop the project's background work (a deleted project's
   * wipe may come later, from another consumer group); project.enabled lets it go on.
   */
  stopped: boolean;
  type: "project.disabled" | "project.enabled" | "project.deleted";
  occurredAt: Date;
}

/**
 * A service's consumer of herald.project-lifecycle.v1 for the events that stop or resume a
 * project's background work (campaign fan-outs, workflow steps): each reaches `apply` once,
 * inside the transaction that records the event as applied (createEventConsumer), in the
 * project's order (the topic is keyed by project id). Built like createProjectWipeConsumer.
 */
export function createProjectStatusConsumer<Tx extends SqlClient>(options: {
  kafka: Kafka;
  db: TransactionalClient<Tx>;
  logger: Logger;
  groupId: string;
  /** Tests with a group of their own read the topic from its start. */
  fromBeginning?: boolean;
  isProjectId: (value: string) => boolean;
  apply: (change: ProjectStatusChange, tx: Tx) => Promise<void>;
}): EventConsumer {
  const { logger } = options;
  return createEventConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: [topics.projectLifecycle],
    db: options.db,
    logger,
    fromBeginning: options.fromBeginning,
    accepts: (event) => event.type === "project.disabled" || event.type === "project.enabled" || event.type === "project.deleted",
    handle: async (event, tx) => {
      const type = event.type as ProjectStatusChange["type"];
      if (!options.isProjectId(event.projectId)) {
        logger.warn({ eventId: event.eventId, projectId: event.projectId }, "skipping a lifecycle event of a malformed project id");
        return;
      }
      const occurredAt = event.occurredAt ? timestampDate(event.occurredAt) : new Date();
      await options.apply({ projectId: event.projectId, stopped: type !== "project.enabled", type, occurredAt }, tx);
    },
  });
}
