import { createProjectStatusConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { resumeProject, stopProject } from "../db/stopped-projects.js";
import { isId } from "../domain/ids.js";

export const projectStatusGroupId = "campaigns.project-status";

/**
 * Stops a disabled (or deleted) project's campaigns and lets them go on once it is enabled again
 * (docs/api-decisions.md "Campaigns of a disabled project"): a SCHEDULED one keeps its status and
 * does not start, a SENDING one keeps its status and cursor and enqueues nothing more.
 */
export function createProjectStatusConsumerOfCampaigns(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  groupId?: string;
  fromBeginning?: boolean;
}): EventConsumer {
  return createProjectStatusConsumer({
    kafka: deps.kafka,
    db: deps.db,
    logger: deps.logger,
    fromBeginning: deps.fromBeginning,
    groupId: deps.groupId ?? projectStatusGroupId,
    isProjectId: isId,
    apply: async ({ projectId, stopped, type, occurredAt }, tx) => {
      if (stopped) await stopProject(tx, projectId, type, occurredAt);
      else await resumeProject(tx, projectId);
      deps.logger.info({ projectId, type }, stopped ? "project's campaigns stopped" : "project's campaigns resumed");
    },
  });
}
