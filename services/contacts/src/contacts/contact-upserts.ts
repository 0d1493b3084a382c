import { randomUUID } from "node:crypto";
import { validationFailed } from "@herald/errors";
import type { SqlPool } from "../db/client.js";
import { upsertContactByEmail } from "../db/contact-upsert.js";
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
 * Create-or-patch by email, the one write behind POST /contacts, /v1/track calls
 * that set the subscription (and those a track batch could not write), and later
 * /v1/send: a single statement (see upsertContactByEmail), then the outbox relay is
 * nudged when it wrote events.
 */
export function createContactUpserts(deps: {
  pool: SqlPool;
  knownFields: KnownFields;
  nudgeOutbox: () => void;
  contactsChanged: ContactsChanged;
}): ContactUpserts {
  const { pool, knownFields } = deps;
  return {
    async upsert(request) {
      const { projectId, patch, subscribed, event } = request;
      const email = validEmail(request.email);
      const now = event?.occurredAt ?? new Date();
      const newFields = knownFields.unregistered(projectId, patch.set);
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
      const upsert = {
        projectId,
        email,
        subscribed,
        defaultSubscribed: defaultSubscribed(request.source),
        patch,
        now,
        newFields,
        subscriptionEvent,
        trackedEvent: event,
      };
      for (let attempt = 1; attempt <= maxAttempts; attempt++) {
        const result = await upsertContactByEmail(pool, upsert);
        if (!result) continue;
        knownFields.remember(
          projectId,
          newFields.map((field) => field.key),
        );
        if (result.subscriptionChanged || event) deps.nudgeOutbox();
        deps.contactsChanged(projectId, [result.contact.id]);
        return { contact: result.contact, created: result.created };
      }
      throw new Error(`upsert of a contact of project ${projectId} lost ${maxAttempts} races in a row`);
    },
  };
}
