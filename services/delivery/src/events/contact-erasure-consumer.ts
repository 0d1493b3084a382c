import { createContactErasureConsumer, type EventConsumer } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { Db } from "../db/client.js";
import { eraseContactFromDelivery } from "../db/erasure.js";
import type { AddressHash } from "../domain/address-hash.js";
import { isId } from "../domain/ids.js";

export const contactErasureGroupId = "delivery.contact-erasure";

/**
 * Erases a deleted contact from the emails sent to it, their activity and the messages received from it,
 * and the addresses of its suppressions (eraseContactFromDelivery), on contact.deleted: docs/decisions.md "Erasing a contact".
 */
export function createContactErasureConsumerOfDelivery(deps: {
  kafka: Kafka;
  db: Db;
  addressHash: AddressHash;
  logger: Logger;
  groupId?: string;
  fromBeginning?: boolean;
}): EventConsumer {
  return createContactErasureConsumer({
    ...deps,
    groupId: deps.groupId ?? contactErasureGroupId,
    isId,
    erase: async (erasure, tx) => {
      const erased = await eraseContactFromDelivery(tx, deps.addressHash, erasure);
      deps.logger.info({ projectId: erasure.projectId, ...erased }, "erased a deleted contact's emails and activity");
    },
  });
}
