import { markErasedContact } from "@herald/db";
import { createContactErasureConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { eraseContactFromMessages } from "../db/messages.js";
import { isId } from "../domain/ids.js";

export const contactErasureGroupId = "webhooks.contact-erasure";

/**
 * Erases a deleted contact from the messages that name it (eraseContactFromMessages), on contact.deleted, and remembers
 * the erasure for the facts about the contact that come after it (markErasedContact).
 */
export function createContactErasureConsumerOfWebhooks(deps: {
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
      await markErasedContact(tx, "webhooks", erasure.projectId, erasure.contactId);
      const messages = await eraseContactFromMessages(tx, erasure);
      deps.logger.info({ projectId: erasure.projectId, ...messages }, "erased a deleted contact from webhook messages");
    },
  });
}
