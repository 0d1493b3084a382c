import { markErasedContact } from "@herald/db";
import { createContactErasureConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { eraseContactFromAutomation } from "../db/erasure.js";
import { isId } from "../domain/ids.js";

export const contactErasureGroupId = "automation.contact-erasure";

/**
 * Erases a deleted contact from its workflow executions (eraseContactFromAutomation), on contact.deleted, and remembers
 * the erasure, so that an event about the contact that comes after it starts nothing (createTriggerConsumer).
 */
export function createContactErasureConsumerOfAutomation(deps: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  groupId?: string;
  fromBeginning?: boolean;
}): EventConsumer {
  return createContactErasureConsumer({
    ...deps,
    groupId: deps.groupId ?? contactErasureGroupId,
    isId,
    erase: async (erasure, tx) => {
      await markErasedContact(tx, "automation", erasure.projectId, erasure.contactId);
      const executions = await eraseContactFromAutomation(tx, erasure);
      deps.logger.info({ projectId: erasure.projectId, executions }, "erased a deleted contact's workflow executions");
    },
  });
}
