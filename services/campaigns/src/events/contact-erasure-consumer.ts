import { createContactErasureConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { eraseContactFromCampaigns } from "../db/erasure.js";
import { isId } from "../domain/ids.js";

export const contactErasureGroupId = "campaigns.contact-erasure";

/** Erases a deleted contact from what campaigns keep of their recipients (eraseContactFromCampaigns), on contact.deleted. */
export function createContactErasureConsumerOfCampaigns(deps: {
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
      const cursors = await eraseContactFromCampaigns(tx, erasure);
      if (cursors > 0) deps.logger.info({ projectId: erasure.projectId, cursors }, "erased a deleted contact from fan-out cursors");
    },
  });
}
