import { createProjectStatusConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { resumeProject, stopProject } from "../db/stopped-projects.js";
import { isId } from "../domain/ids.js";

export const projectStatusGroupId = "automation.project-status";

/**
 * Keeps automation's list of stopped projects (stopped_projects) from herald.project-lifecycle.v1:
 * project.disabled and project.deleted add the project, project.enabled removes it. The engine's
 * claims and the trigger consumer pass over a stopped project's work (docs/api-decisions.md
 * "Campaigns and workflows of a disabled project").
 */
export function createProjectStatusConsumerOfAutomation(deps: {
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
      deps.logger.info({ projectId, type }, stopped ? "project's workflows stopped" : "project's workflows resumed");
    },
  });
}
