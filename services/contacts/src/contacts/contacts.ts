import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { isUniqueViolation } from "@herald/db";
import { DomainError, validationFailed } from "@herald/errors";
import type { Db } from "../db/client.js";
import { registerFields } from "../db/contact-fields.js";
import {
  type ContactFilter,
  type ContactRow,
  countContacts,
  deleteContact,
  findContact,
  findContactsByEmail,
  listContacts,
  lockContact,
  updateContact,
} from "../db/contacts.js";
import { insertContactEvents } from "../db/event-records.js";
import { type DataPatch, type JsonObject, patchOfData } from "../domain/contact-data.js";
import { type ContactOrder, type ContactPosition, contactCursorOf, isContactPositionIn } from "../domain/contact-order.js";
import { normalizeEmail } from "../domain/email-address.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { decodeCursor, pageLimit } from "../domain/paging.js";
import { searchParts } from "../domain/search-parts.js";
import type { ContactSource } from "../domain/subscription.js";
import { subscriptionEventName } from "../domain/subscription.js";
import { pendingContactEvent } from "../events/contact-event-outbox.js";
import { type ContactUpsertResult, type ContactUpserts, validEmail } from "./contact-upserts.js";
import type { ContactsChanged } from "./contacts-changed.js";
import type { KnownFields } from "./known-fields.js";
import type { SearchTrigrams } from "./search-trigrams.js";

export const contactPageLimits = { fallback: 20, max: 100 };

/** SPEC.md "Limits": POST /contacts/lookup. */
export const maxLookupEmails = 500;

export interface ContactPage {
  contacts: ContactRow[];
  cursor: string;
  hasMore: boolean;
  /** On the first page only; 0 on later ones. */
  total: number;
}

export interface ContactQuery {
  limit: number;
  cursor: string;
  search: string;
  subscribed: boolean | undefined;
  /** Unknown values were already mapped to the defaults. */
  order: ContactOrder;
}

export interface Contacts {
  upsert(request: {
    projectId: string;
    email: string;
    subscribed: boolean | undefined;
    data: JsonObject | undefined;
    source: ContactSource;
  }): Promise<ContactUpsertResult & { patch: DataPatch }>;
  get(projectId: string, contactId: string): Promise<ContactRow>;
  update(
    projectId: string,
    contactId: string,
    change: { email: string | undefined; subscribed: boolean | undefined; data: JsonObject | undefined },
  ): Promise<ContactRow>;
  delete(projectId: string, contactId: string): Promise<void>;
  list(projectId: string, query: ContactQuery): Promise<ContactPage>;
  lookup(projectId: string, emails: string[]): Promise<{ contacts: ContactRow[]; missing: string[] }>;
}

export const contactNotFound = () => new DomainError("not-found", "CONTACT_NOT_FOUND", "Contact not found");

const emailTaken = (email: string) =>
  new DomainError("conflict", "EMAIL_TAKEN", "The email is already used by another contact", { details: { email } });

export function createContacts(deps: {
  db: Db;
  upserts: ContactUpserts;
  knownFields: KnownFields;
  nudgeOutbox: () => void;
  contactsChanged: ContactsChanged;
  searchTrigrams: SearchTrigrams;
}): Contacts {
  const { db, upserts, knownFields } = deps;

  return {
    async upsert(request) {
      const patch = patchOfData(request.data);
      const result = await upserts.upsert({ ...request, projectId: requireProjectId(request.projectId), patch });
      return { ...result, patch };
    },

    async get(projectId, contactId) {
      requireProjectId(projectId);
      const contact = isId(contactId) ? await findContact(db, projectId, contactId) : undefined;
      if (!contact) throw contactNotFound();
      return contact;
    },

    async update(projectId, contactId, change) {
      requireProjectId(projectId);
      if (!isId(contactId)) throw contactNotFound();
      const email = change.email === undefined ? undefined : validEmail(change.email);
      const patch = patchOfData(change.data);
      const newFields = knownFields.unregistered(projectId, patch.set);
      const now = new Date();
      const { contact, changed } = await db
        .$transaction(async (tx) => {
          const before = await lockContact(tx, projectId, contactId);
          if (!before) throw contactNotFound();
          const after = await updateContact(tx, projectId, contactId, {
            email,
            subscribed: change.subscribed,
            set: patch.set,
            remove: patch.remove,
            now,
          });
          const subscriptionChanged = after.subscribed !== before.subscribed;
          if (subscriptionChanged) {
            const event = pendingContactEvent({
              id: randomUUID(),
              name: subscriptionEventName(after.subscribed),
              projectId,
              contactEmail: after.email,
              data: {},
              occurredAt: now,
            });
            await insertContactEvents(tx, [{ ...event, contactId }]);
          }
          await registerFields(tx, projectId, newFields);
          // The contacts trigger wrote a contact.updated for any change, with the subscription's event if any.
          const changed = subscriptionChanged || after.email !== before.email || !isDeepStrictEqual(after.data, before.data);
          return { contact: after, changed };
        })
        .catch((error: unknown) => {
          if (email !== undefined && isUniqueViolation(error)) throw emailTaken(email);
          throw error;
        });
      knownFields.remember(
        projectId,
        newFields.map((field) => field.key),
      );
      if (changed) deps.nudgeOutbox();
      deps.contactsChanged(projectId, [contactId]);
      return contact;
    },

    async delete(projectId, contactId) {
      requireProjectId(projectId);
      if (!isId(contactId) || !(await deleteContact(db, projectId, contactId))) throw contactNotFound();
      deps.nudgeOutbox();
    },

    async list(projectId, query) {
      requireProjectId(projectId);
      const limit = pageLimit(query.limit, contactPageLimits);
      const after: ContactPosition | undefined = query.cursor ? decodeCursor(query.cursor, isContactPositionIn(query.order)) : undefined;
      const search = query.search.trim().toLowerCase();
      const filter: ContactFilter = {
        search,
        searchParts: searchParts(search, deps.searchTrigrams.common()),
        subscribed: query.subscribed,
      };
      const [rows, total] = await Promise.all([
        listContacts(db, projectId, { filter, order: query.order, after, limit: limit + 1 }),
        after ? Promise.resolve(0) : countContacts(db, projectId, filter),
      ]);
      const contacts = rows.slice(0, limit);
      const last = contacts.at(-1);
      const hasMore = rows.length > limit;
      const cursor =
        hasMore && last
          ? contactCursorOf({
              ...query.order,
              value: query.order.sort === "email" ? last.email : last.createdAt.toISOString(),
              id: last.id,
            })
          : "";
      return { contacts, cursor, hasMore, total };
    },

    async lookup(projectId, emails) {
      requireProjectId(projectId);
      if (emails.length > maxLookupEmails) {
        throw validationFailed(`At most ${maxLookupEmails} emails per lookup`, [
          { field: "emails", message: `At most ${maxLookupEmails} emails per lookup`, code: "too_many", received: String(emails.length) },
        ]);
      }
      const requested = [...new Set(emails.map(normalizeEmail).filter((email) => email !== ""))];
      const found = new Map((await findContactsByEmail(db, projectId, requested)).map((contact) => [contact.email, contact]));
      return {
        contacts: requested.flatMap((email) => found.get(email) ?? []),
        missing: requested.filter((email) => !found.has(email)),
      };
    },
  };
}
