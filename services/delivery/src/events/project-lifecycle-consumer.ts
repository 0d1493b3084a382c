import { createProjectWipeConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import { deleteProjectActivity } from "../db/activity.js";
import type { Db } from "../db/client.js";
import { deleteProjectDomains } from "../db/domains.js";
import { deleteProjectEmails } from "../db/emails.js";
import { deleteProjectTemplates } from "../db/templates.js";
import { isId } from "../domain/ids.js";
import type { Uploads } from "../uploads/uploads.js";

export const projectLifecycleGroupId = "delivery.project-lifecycle";

/**
 * Forgets a deleted project's sending domains with their DKIM keys, its templates, emails, suppressions and uploaded images.
 * A reset keeps both: a reset wipes the project's data (contacts, events, sends), while
 * domains are configuration the user published in DNS and would otherwise have to
 * verify again, and templates are content the user wrote.
 * Both wipe the project's email activity (the activity feed and send analytics).
 */
export function createProjectLifecycleConsumer(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  /** Unset where images are not kept (tests of the database side alone). */
  uploads?: Pick<Uploads, "deleteProject">;
  groupId?: string;
  /** Tests with a group of their own read the topic from its start. */
  fromBeginning?: boolean;
}): EventConsumer {
  return createProjectWipeConsumer({
    ...deps,
    groupId: deps.groupId ?? projectLifecycleGroupId,
    isProjectId: isId,
    wipe: async ({ projectId, reason }, tx) => {
      // The activity feed and send analytics are the project's data: a reset wipes them as a delete does.
      await deleteProjectActivity(tx, projectId);
      if (reason === "project.reset") return;
      await deleteProjectDomains(tx, projectId);
      await deleteProjectTemplates(tx, projectId);
      // Its queued emails too: with its domains gone they could only fail, and the sent ones are the project's data.
      await deleteProjectEmails(tx, projectId);
      await tx.suppression.deleteMany({ where: { projectId } });
      await tx.projectSettings.deleteMany({ where: { projectId } });
      // Not part of the transaction, but idempotent: should it fail, the rows roll back and the event comes again.
      await deps.uploads?.deleteProject(projectId);
    },
  });
}
