import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { createCoalescer } from "@herald/platform";
import type {
  ContactsService,
  UpsertContactRequestSchema,
  UpsertContactResponse,
} from "@herald/proto/herald/contacts/v1/contacts_service_pb";

export type UpsertContact = (request: MessageInitShape<typeof UpsertContactRequestSchema>) => Promise<UpsertContactResponse>;

/** Upserts per UpsertContacts call: more than the sends of a busy event-loop turn ask for. */
const upsertBatchSize = 256;

/**
 * The contact upserts of concurrent sends, made as shared UpsertContacts calls: each answers or
 * fails as its own UpsertContact would, and the RPC's cost is paid once per batch.
 */
export function createContactUpserts(contacts: Client<typeof ContactsService>): UpsertContact {
  return createCoalescer<MessageInitShape<typeof UpsertContactRequestSchema>, UpsertContactResponse>({
    maxBatch: upsertBatchSize,
    call: async (batch) => (await contacts.upsertContacts({ contacts: batch })).results,
  });
}
