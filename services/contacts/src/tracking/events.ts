import { randomUUID } from "node:crypto";
import { DomainError, validationFailed } from "@herald/errors";
import { type ContactUpserts, validEmail } from "../contacts/contact-upserts.js";
import type { ContactsChanged } from "../contacts/contacts-changed.js";
import type { KnownFields } from "../contacts/known-fields.js";
import type { Db, SqlPool } from "../db/client.js";
import {
  countEventNames,
  countEvents,
  deleteEventBatch,
  type EventFilter,
  type EventNameCount,
  type EventRow,
  type EventStats,
  eventStats,
  listEvents,
} from "../db/events.js";
import { type JsonObject, patchOfData } from "../domain/contact-data.js";
import { eventNameViolation } from "../domain/event-name.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { decodeCursor, encodeCursor, pageLimit } from "../domain/paging.js";
import { pendingContactEvent } from "../events/contact-event-outbox.js";
import { segmentsUsingEvent, type Usage } from "../segments/segment-usage.js";
import { checkDataKeyLimits, type DataKeyLimits } from "./data-key-limits.js";
import { createTrackBatcher } from "./track-batcher.js";

export const eventPageLimits = { fallback: 20, max: 100 };
export const topEventLimits = { fallback: 10, max: 100 };

/** Events deleted per statement by DeleteEvents. */
export const eventDeleteBatchSize = 5_000;

export interface TrackedEvent {
  contactId: string;
  contactCreated: boolean;
  eventId: string;
  createdAt: Date;
}

export interface EventPage {
  events: EventRow[];
  cursor: string;
  hasMore: boolean;
  total: number;
}

export interface Events {
  track(request: {
    projectId: string;
    email: string;
    event: string;
    subscribed: boolean | undefined;
    data: JsonObject | undefined;
  }): Promise<TrackedEvent>;
  list(projectId: string, query: { limit: number; cursor: string; name: string; contactId: string }): Promise<EventPage>;
  stats(projectId: string): Promise<EventStats>;
  names(projectId: string): Promise<EventNameCount[]>;
  usage(projectId: string, name: string): Promise<Usage[]>;
  deleteByName(projectId: string, name: string): Promise<number>;
  top(projectId: string, options: { limit: number; since: Date | undefined }): Promise<EventNameCount[]>;
}

interface EventPosition {
  createdAt: string;
  id: string;
}

const isEventPosition = (value: unknown): value is EventPosition => {
  if (typeof value !== "object" || value === null) return false;
  const { createdAt, id } = value as Record<string, unknown>;
  return typeof createdAt === "string" && !Number.isNaN(Date.parse(createdAt)) && typeof id === "string" && isId(id);
};

export function createEvents(deps: {
  db: Db;
  pool: SqlPool;
  upserts: ContactUpserts;
  knownFields: KnownFields;
  nudgeOutbox: () => void;
  contactsChanged: ContactsChanged;
  /** The caps on the data keys /v1/track writes (a public key's path). */
  dataKeyLimits: DataKeyLimits;
  /** The start of a project's events window: /events shows nothing older. */
  eventsSince: (projectId: string, now: Date) => Promise<Date>;
}): Events {
  const { db, upserts, knownFields } = deps;
  const batcher = createTrackBatcher({
    pool: deps.pool,
    // A call a batch could not write is written alone, exactly as a call that sets the subscription is.
    writeAlone: async (write) => {
      const { contact, created } = await upserts.upsert({ ...write, subscribed: undefined, source: "track", event: write.event });
      return { contactId: contact.id, created };
    },
    written: deps.nudgeOutbox,
  });

  return {
    /**
     * /v1/track: the contact is created or patched by the data rules (source TRACK:
     * a new contact is subscribed unless told otherwise, an existing one keeps its
     * state unless told), and the event is recorded with everything sent, one-off
     * values included, in the same statement. Every call records a new event. A call
     * that leaves the subscription alone (nearly all) shares its statement with the
     * calls that arrive at the same time (createTrackBatcher); one that sets it needs
     * the contact's previous state and goes alone.
     */
    async track(request) {
      const projectId = requireProjectId(request.projectId);
      const violation = eventNameViolation(request.event);
      if (violation) throw validationFailed(violation.message, [violation]);
      const email = validEmail(request.email);
      const patch = patchOfData(request.data);
      await checkDataKeyLimits(db, knownFields, deps.dataKeyLimits, { projectId, email, patch });
      const event = pendingContactEvent({
        id: randomUUID(),
        name: request.event,
        projectId,
        contactEmail: email,
        data: patch.sent,
        occurredAt: new Date(),
      });
      const tracked = { eventId: event.id, createdAt: event.occurredAt };
      if (request.subscribed !== undefined) {
        const { contact, created } = await upserts.upsert({
          projectId,
          email,
          subscribed: request.subscribed,
          source: "track",
          patch,
          event,
        });
        return { ...tracked, contactId: contact.id, contactCreated: created };
      }
      const newFields = knownFields.unregistered(projectId, patch.set);
      const { contactId, created } = await batcher.track({ projectId, email, patch, event, newFields });
      knownFields.remember(
        projectId,
        newFields.map((field) => field.key),
      );
      deps.contactsChanged(projectId, [contactId]);
      return { ...tracked, contactId, contactCreated: created };
    },

    async list(projectId, query) {
      requireProjectId(projectId);
      const limit = pageLimit(query.limit, eventPageLimits);
      const position = query.cursor ? decodeCursor(query.cursor, isEventPosition) : undefined;
      if (query.contactId && !isId(query.contactId)) return { events: [], cursor: "", hasMore: false, total: 0 };
      const filter: EventFilter = {
        name: query.name || undefined,
        contactId: query.contactId || undefined,
        since: await deps.eventsSince(projectId, new Date()),
      };
      const before = position && { createdAt: new Date(position.createdAt), id: position.id };
      const [rows, total] = await Promise.all([
        listEvents(db, projectId, { filter, before, limit: limit + 1 }),
        position ? Promise.resolve(0) : countEvents(db, projectId, filter),
      ]);
      const events = rows.slice(0, limit);
      const last = events.at(-1);
      const hasMore = rows.length > limit;
      const cursor = hasMore && last ? encodeCursor({ createdAt: last.createdAt.toISOString(), id: last.id } satisfies EventPosition) : "";
      return { events, cursor, hasMore, total };
    },

    async stats(projectId) {
      const now = new Date();
      return eventStats(db, requireProjectId(projectId), now, await deps.eventsSince(projectId, now));
    },

    names: async (projectId) => countEventNames(db, requireProjectId(projectId), { since: await deps.eventsSince(projectId, new Date()) }),

    usage: (projectId, name) => segmentsUsingEvent(db, requireProjectId(projectId), name),

    /** Every event of the name, in short batches; 0 when there were none (deleting is idempotent). */
    async deleteByName(projectId, name) {
      requireProjectId(projectId);
      if (name === "") throw new DomainError("invalid-argument", "EVENT_NAME_REQUIRED", "Name the events to delete");
      let deleted = 0;
      let batch: number;
      do {
        batch = await deleteEventBatch(db, projectId, name, eventDeleteBatchSize);
        deleted += batch;
      } while (batch === eventDeleteBatchSize);
      return deleted;
    },

    async top(projectId, options) {
      const window = await deps.eventsSince(requireProjectId(projectId), new Date());
      const since = options.since && options.since > window ? options.since : window;
      return countEventNames(db, projectId, { since, top: pageLimit(options.limit, topEventLimits) });
    },
  };
}
