import { createProjectWipeConsumer, type EventConsumer } from "@herald/kafka";
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
  return createProjectWipeConsumer({
    ...deps,
    groupId: deps.groupId ?? projectLifecycleGroupId,
    isProjectId: isId,
    wipe: async ({ projectId, reason, occurredAt }, tx) => {
      await requestProjectWipe(tx, { projectId, reason, cutoff: reason === "project.reset" ? occurredAt : null });
      // A reset keeps the project's settings, as delivery's do; a deletion leaves none.
      if (reason !== "project.reset") await tx.projectRetention.deleteMany({ where: { projectId } });
    },
  });
}
