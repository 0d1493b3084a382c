import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { type Logger, settleItems } from "@herald/platform";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import type {
  ContactsService,
  UpsertContactRequest,
  UpsertContactResponseSchema,
} from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import type { ContactExportPart } from "../contacts/contact-export.js";
import type { Contacts } from "../contacts/contacts.js";
import type { Fields } from "../contacts/fields.js";
import { variablesOf } from "../domain/contact-data.js";
import {
  contactOrderFromProto,
  contactToProto,
  eventToProto,
  fieldToProto,
  jsonToValue,
  segmentMembershipToProto,
  sourceFromProto,
  usageToProto,
} from "./proto-mapping.js";

export function createContactsRpc(deps: {
  info: ServiceInfo;
  contacts: Contacts;
  fields: Fields;
  /** exportContact bound to the service's database. */
  exportContact: (projectId: string, contactId: string, pageSize: number) => AsyncGenerator<ContactExportPart>;
  logger: Logger;
}): ServiceImpl<typeof ContactsService> {
  const { contacts, fields } = deps;

  async function upsert(request: UpsertContactRequest): Promise<MessageInitShape<typeof UpsertContactResponseSchema>> {
    const { contact, created, patch } = await contacts.upsert({
      projectId: request.projectId,
      email: request.email,
      subscribed: request.subscribed,
      data: request.data,
      source: sourceFromProto(request.source),
    });
    return { contact: contactToProto(contact), created, variables: variablesOf(contact.data, patch) };
  }

  return {
    getServiceInfo: () => ({ info: deps.info }),

    upsertContact: upsert,

    /** Every item runs as its own UpsertContact at once; the upsert batcher writes the concurrent ones together. */
    async upsertContacts(request, context) {
      return { results: await settleItems(request.contacts, upsert, { okCase: "upserted", logger: deps.logger, procedure: context.url }) };
    },

    async getContact(request) {
      return { contact: contactToProto(await contacts.get(request.projectId, request.contactId)) };
    },

    async updateContact(request) {
      const contact = await contacts.update(request.projectId, request.contactId, {
        email: request.email,
        subscribed: request.subscribed,
        data: request.data,
      });
      return { contact: contactToProto(contact) };
    },

    async *exportContact(request) {
      for await (const part of deps.exportContact(request.projectId, request.contactId, request.pageSize)) {
        if (part.case === "contact") yield { part: { case: "contact", value: contactToProto(part.value) } };
        else if (part.case === "events") yield { part: { case: "events", value: { events: part.value.map(eventToProto) } } };
        else yield { part: { case: "segments", value: { memberships: part.value.map(segmentMembershipToProto) } } };
      }
    },

    async deleteContact(request) {
      await contacts.delete(request.projectId, request.contactId);
      return {};
    },

    async listContacts(request) {
      const page = await contacts.list(request.projectId, {
        limit: request.limit,
        cursor: request.cursor,
        search: request.search,
        subscribed: request.subscribed,
        order: contactOrderFromProto(request.sort, request.direction),
      });
      return { contacts: page.contacts.map(contactToProto), cursor: page.cursor, hasMore: page.hasMore, total: BigInt(page.total) };
    },

    async lookupContacts(request) {
      const { contacts: found, missing } = await contacts.lookup(request.projectId, request.emails);
      return { contacts: found.map(contactToProto), missing };
    },

    async listFields(request) {
      return { fields: (await fields.list(request.projectId)).map(fieldToProto) };
    },

    async listFieldValues(request) {
      const page = await fields.values(request.projectId, request.field, { limit: request.limit, cursor: request.cursor });
      return { values: page.values.map(jsonToValue), cursor: page.cursor, hasMore: page.hasMore };
    },

    async getFieldUsage(request) {
      return { usages: (await fields.usage(request.projectId, request.field)).map(usageToProto) };
    },

    async deleteField(request) {
      const { contactsUpdated } = await fields.delete(request.projectId, request.field);
      return { contactsUpdated: BigInt(contactsUpdated) };
    },
  };
}
