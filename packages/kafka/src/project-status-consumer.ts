import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ProjectLifecycleSchema } from "@herald/proto/herald/events/v1/project_lifecycle_pb";
import type { Kafka } from "kafkajs";
import type { Logger } from "pino";
import { payloadOf } from "./envelope.js";
import { createEventConsumer, type EventConsumer } from "./event-consumer.js";
import type { SqlClient, TransactionalClient } from "./sql-client.js";
import { topics } from "./topics.js";

/**
 * The lifecycle events that stop a project's background work (a deleted project's wipe may come later, from
 * another consumer group) or let it go on. project.suspended is the reputation guard's: sending stops, and the
 * service decides what that means for its work (campaigns pause; workflows run, and their sends are refused).
 * Identity publishes the project's state after each change: disabled wins over suspended, which wins over enabled.
 */
export type ProjectStatusEvent = "project.disabled" | "project.suspended" | "project.enabled" | "project.deleted";

/**
 * A service's consumer of herald.project-lifecycle.v1 for the events that stop or resume a
 * project's background work (campaign fan-outs, workflow steps): each reaches `stop` or `resume` once,
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
  /** What the service stops, for its log: "campaigns", "workflows". */
  work: string;
  /** project.disabled, project.suspended, project.deleted: the project's work must not go on; `detail` is a suspension's reason. */
  stop: (tx: Tx, projectId: string, reason: Exclude<ProjectStatusEvent, "project.enabled">, at: Date, detail: string) => Promise<void>;
  /** project.enabled: the project's work goes on where it stopped. */
  resume: (tx: Tx, projectId: string) => Promise<void>;
}): EventConsumer {
  const { logger } = options;
  return createEventConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: [topics.projectLifecycle],
    db: options.db,
    logger,
    fromBeginning: options.fromBeginning,
    accepts: (event) =>
      event.type === "project.disabled" ||
      event.type === "project.suspended" ||
      event.type === "project.enabled" ||
      event.type === "project.deleted",
    handle: async (event, tx) => {
      const type = event.type as ProjectStatusEvent;
      if (!options.isProjectId(event.projectId)) {
        logger.warn({ eventId: event.eventId, projectId: event.projectId }, "skipping a lifecycle event of a malformed project id");
        return;
      }
      const occurredAt = event.occurredAt ? timestampDate(event.occurredAt) : new Date();
      if (type === "project.enabled") await options.resume(tx, event.projectId);
      else await options.stop(tx, event.projectId, type, occurredAt, type === "project.suspended" ? suspensionReasonOf(event) : "");
      logger.info({ projectId: event.projectId, type }, `project's ${options.work} ${type === "project.enabled" ? "resumed" : "stopped"}`);
    },
  });
}

/** The reason a project.suspended carries; a payload that cannot be read still suspends, with a general reason. */
function suspensionReasonOf(event: Parameters<typeof payloadOf>[0]): string {
  try {
    return payloadOf(event, ProjectLifecycleSchema)?.reason || "Sending is suspended by the reputation guard";
  } catch {
    return "Sending is suspended by the reputation guard";
  }
}
