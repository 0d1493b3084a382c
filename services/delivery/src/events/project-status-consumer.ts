import { createProjectStatusConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { forgetSuspendedProject, resumeSuspendedProject, suspendProject } from "../db/suspended-projects.js";
import { isId } from "../domain/ids.js";

export const projectStatusGroupId = "delivery.project-status";

/**
 * Keeps suspended_projects from identity's status events: project.suspended adds the project, project.enabled
 * removes it and makes its held emails due, project.deleted forgets it. project.disabled changes nothing here:
 * the gateway refuses a disabled project's keys, and a suspension under it still holds (identity publishes
 * project.suspended again when the owner enables it).
 */
export function createProjectStatusConsumerOfDelivery(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  groupId?: string;
  fromBeginning?: boolean;
}): EventConsumer {
  return createProjectStatusConsumer({
    ...deps,
    groupId: deps.groupId ?? projectStatusGroupId,
    isProjectId: isId,
    work: "sending",
    stop: async (tx, projectId, reason, at, detail) => {
      if (reason === "project.suspended") await suspendProject(tx, projectId, detail, at);
      else if (reason === "project.deleted") await forgetSuspendedProject(tx, projectId);
    },
    resume: resumeSuspendedProject,
  });
}
