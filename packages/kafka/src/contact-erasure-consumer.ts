import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ContactChangeSchema } from "@herald/proto/herald/events/v1/contact_change_pb";
import type { Kafka } from "kafkajs";
import type { Logger } from "pino";
import { payloadOf } from "./envelope.js";
import { createEventConsumer, type EventConsumer } from "./event-consumer.js";
import type { SqlClient, TransactionalClient } from "./sql-client.js";
import { topics } from "./topics.js";

/** A deleted contact to erase from a service's copies, as contact.deleted announced it. */
export interface ContactErasure {
  projectId: string;
  contactId: string;
  /** The contact's address when it was deleted, as contacts stored it (lower-case). */
  email: string;
  occurredAt: Date;
}

/**
 * A service's consumer of herald.contact-changes.v1 for contact.deleted (GDPR Article 17): each deletion reaches
 * `erase` once, inside the transaction that records the event as applied (createEventConsumer); an erasure must be
 * harmless when applied again besides, since a contact's deletion may be announced by a replayed topic. Events of ids
 * the service could not store (`isId` refuses them) are logged and skipped rather than failing their partition for ever.
 */
export function createContactErasureConsumer<Tx extends SqlClient>(options: {
  kafka: Kafka;
  db: TransactionalClient<Tx>;
  logger: Logger;
  groupId: string;
  /** Tests with a group of their own read the topic from its start. */
  fromBeginning?: boolean;
  isId: (value: string) => boolean;
  erase: (erasure: ContactErasure, tx: Tx) => Promise<void>;
}): EventConsumer {
  const { logger } = options;
  return createEventConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: [topics.contactChanges],
    db: options.db,
    logger,
    fromBeginning: options.fromBeginning,
    // Creations and updates are most of the topic: passed over without a transaction.
    accepts: (event) => event.type === "contact.deleted",
    handle: async (event, tx) => {
      if (!options.isId(event.projectId) || !options.isId(event.contactId)) {
        logger.warn({ eventId: event.eventId }, "skipping a contact.deleted of a malformed project or contact id");
        return;
      }
      const change = payloadOf(event, ContactChangeSchema);
      const occurredAt = event.occurredAt ? timestampDate(event.occurredAt) : new Date();
      await options.erase({ projectId: event.projectId, contactId: event.contactId, email: change?.email ?? "", occurredAt }, tx);
    },
  });
}
