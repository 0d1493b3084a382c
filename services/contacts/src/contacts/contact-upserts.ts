import { randomUUID } from "node:crypto";
import { createGroupCommit } from "@herald/db";
import { validationFailed } from "@herald/errors";
import type { SqlPool } from "../db/client.js";
import { type ContactUpsert, upsertContactByEmail } from "../db/contact-upsert.js";
import { type PlainContactUpsert, upsertPlainContacts } from "../db/contact-upserts-batch.js";
import type { ContactRow } from "../db/contacts.js";
import type { DataPatch } from "../domain/contact-data.js";
import { emailViolation, normalizeEmail } from "../domain/email-address.js";
import { type ContactSource, defaultSubscribed, subscriptionEventName } from "../domain/subscription.js";
import { type PendingContactEvent, pendingContactEvent } from "../events/contact-event-outbox.js";
import type { ContactsChanged } from "./contacts-changed.js";
import type { KnownFields } from "./known-fields.js";

export interface ContactUpsertRequest {
  projectId: string;
  email: string;
  subscribed: boolean | undefined;
  source: ContactSource;
  patch: DataPatch;
  /** Records this event on the contact in the same statement (TrackEvent). */
  event?: PendingContactEvent;
}

export interface ContactUpsertResult {
  contact: ContactRow;
  created: boolean;
}

export interface ContactUpserts {
  upsert(request: ContactUpsertRequest): Promise<ContactUpsertResult>;
}

/** The email as stored, or VALIDATION_ERROR on the `email` field. */
export function validEmail(raw: string, field = "email"): string {
  const email = normalizeEmail(raw);
  const violation = emailViolation(email, field);
  if (violation) throw validationFailed(violation.message, [violation]);
  return email;
}

// A retry happens only when another statement created the same contact in the same instant; a third is unheard of.
const maxAttempts = 5;

/**
 * Create-or-patch by email, the one write behind POST /contacts, /v1/send, and /v1/track
 * calls that set the subscription (and those a track batch could not write). A call that
 * sets the subscription or records an event is a single statement (upsertContactByEmail),
 * after which the outbox relay is nudged when it wrote events. The others (most of
 * /v1/send's) are written together with the calls that arrive meanwhile, one statement
 * and one commit for all (upsertPlainContacts), or alone when their batch fails.
 */
export function createContactUpserts(deps: {
  pool: SqlPool;
  knownFields: KnownFields;
  nudgeOutbox: () => void;
  contactsChanged: ContactsChanged;
}): ContactUpserts {
  const { pool, knownFields } = deps;

  async function upsertAlone(upsert: ContactUpsert) {
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const result = await upsertContactByEmail(pool, upsert);
      if (result) return result;
    }
    throw new Error(`upsert of a contact of project ${upsert.projectId} lost ${maxAttempts} races in a row`);
  }

  const plainUpserts = createGroupCommit({
    writeBatch: (writes: PlainContactUpsert[]) => upsertPlainContacts(pool, writes, new Date()),
    writeAlone: (write: PlainContactUpsert) =>
      upsertAlone({ ...write, subscribed: undefined, now: new Date(), subscriptionEvent: undefined, trackedEvent: undefined }),
  });

  return {
    async upsert(request) {
      const { projectId, patch, subscribed, event } = request;
      const email = validEmail(request.email);
      const now = event?.occurredAt ?? new Date();
      const newFields = knownFields.unregistered(projectId, patch.set);
      const defaultState = defaultSubscribed(request.source);
      let result: { contact: ContactRow; created: boolean; subscriptionChanged?: boolean };
      if (subscribed === undefined && !event) {
        result = await plainUpserts.write({ projectId, email, defaultSubscribed: defaultState, patch, newFields });
      } else {
        const subscriptionEvent =
          subscribed === undefined
            ? undefined
            : pendingContactEvent({
                id: randomUUID(),
                name: subscriptionEventName(subscribed),
                projectId,
                contactEmail: email,
                data: {},
                occurredAt: now,
              });
        result = await upsertAlone({
          projectId,
          email,
          subscribed,
          defaultSubscribed: defaultState,
          patch,
          now,
          newFields,
          subscriptionEvent,
          trackedEvent: event,
        });
      }
      knownFields.remember(
        projectId,
        newFields.map((field) => field.key),
      );
      // A created contact's contact.created is in the outbox too (the contacts trigger); a changed one's is left to the relay's poll.
      if (result.subscriptionChanged || event || result.created) deps.nudgeOutbox();
      deps.contactsChanged(projectId, [result.contact.id]);
      return { contact: result.contact, created: result.created };
    },
  };
}
