import { forgetProjectErasures } from "@herald/db";
import { createProjectWipeConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { deleteProjectEndpoints } from "../db/endpoints.js";
import { isId } from "../domain/ids.js";

export const projectLifecycleGroupId = "webhooks.project-lifecycle";

/**
 * Forgets a project's endpoints and their messages (and its remembered erasures) when it is reset (those that existed at the reset) or deleted:
 * a reset starts the project over, and its endpoints' secrets and logs are part of what it had.
 */
export function createProjectLifecycleConsumer(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  /** Told which project's endpoints changed, so that the fan-out's cache forgets them. */
  onWiped: (projectId: string) => void;
  groupId?: string;
  fromBeginning?: boolean;
}): EventConsumer {
  return createProjectWipeConsumer({
    kafka: deps.kafka,
    db: deps.db,
    logger: deps.logger,
    fromBeginning: deps.fromBeginning,
    groupId: deps.groupId ?? projectLifecycleGroupId,
    isProjectId: isId,
    wipe: async ({ projectId, reason, occurredAt }, tx) => {
      const wiped = await deleteProjectEndpoints(tx, projectId, reason === "project.reset" ? occurredAt : null);
      await forgetProjectErasures(tx, projectId);
      deps.onWiped(projectId);
      if (wiped > 0) deps.logger.info({ projectId, reason, endpoints: wiped }, "project's webhook endpoints wiped");
    },
  });
}
