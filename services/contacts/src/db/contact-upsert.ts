import type { DataPatch } from "../domain/contact-data.js";
import type { FieldType } from "../domain/field-type.js";
import { contactEventsTopic, contactIdFieldTag, type PendingContactEvent } from "../events/contact-event-outbox.js";
import { queryRows, type SqlPool } from "./client.js";
import { inFieldLockOrder } from "./contact-fields.js";
import { type ContactRow, contactColumns } from "./contacts.js";
import { Prisma } from "./generated/client.js";
import { jsonObjectOf } from "./json.js";

export interface ContactUpsert {
  projectId: string;
  /** Normalised and valid. */
  email: string;
  /** As given; undefined keeps an existing contact's state. */
  subscribed: boolean | undefined;
  /** A new contact's state when `subscribed` is undefined. */
  defaultSubscribed: boolean;
  patch: DataPatch;
  now: Date;
  /** Keys of `patch.set` the registry may not know yet, with the type their value implies. */
  newFields: Array<{ key: string; type: FieldType }>;
  /** Written when `subscribed` changes an existing contact's state (prepared only when `subscribed` is given). */
  subscriptionEvent: PendingContactEvent | undefined;
  /** A tracked event recorded on the contact in the same statement. */
  trackedEvent: PendingContactEvent | undefined;
}

export interface UpsertedContact {
  contact: ContactRow;
  created: boolean;
  subscriptionChanged: boolean;
}

/** The outbox payload of an event on the upserted contact: the envelope completed with the id assigned here. */
const envelopeSql = (event: PendingContactEvent) =>
  Prisma.sql`${event.envelopeWithoutContact}::bytea || ${contactIdFieldTag}::bytea || convert_to(u.id::text, 'UTF8')`;

/** The event row and its outbox row, for each contact the `source` CTE yields. */
function eventCtes(name: string, event: PendingContactEvent, source: string): Prisma.Sql {
  const from = Prisma.raw(`${source} u`);
  return Prisma.sql`,
  ${Prisma.raw(`${name}_event`)} AS (
    INSERT INTO events (id, project_id, contact_id, name, data, created_at)
    SELECT ${event.id}::uuid, ${event.projectId}::uuid, u.id, ${event.name}, ${JSON.stringify(event.data)}::jsonb, ${event.occurredAt}
    FROM ${from}
  ),
  ${Prisma.raw(`${name}_outbox`)} AS (
    INSERT INTO outbox_events (event_id, topic, key, payload, headers)
    SELECT ${event.id}::uuid, ${contactEventsTopic}, u.id::text, ${envelopeSql(event)}, ${event.headers}::jsonb
    FROM ${from}
  )`;
}

/**
 * Creates or patches the contact of (project, email) in ONE statement: a call that sets
 * the subscription or records an event (and one its batch could not write) pays one
 * round trip, and a single statement is atomic without a transaction around it. It inserts, or on conflict patches data as
 * `(data || set) - remove` and keeps `subscribed` unless given; writes the tracked
 * event if any and its outbox row; and registers new keys (ON CONFLICT DO NOTHING:
 * of two first values racing, one type wins). `xmax = 0` is how Postgres tells a
 * row this statement inserted from one it updated.
 *
 * When `subscribed` is given, the statement also locks the existing row first
 * (`existing`), so that the state it replaces is known, and writes the subscription
 * event when an existing contact's state changed. If another statement created the
 * contact after this one's snapshot, that previous state is unknown here: the update
 * is refused and undefined returned, and the caller runs the statement again, which
 * then sees the row. Without `subscribed` no state can change, so nothing is locked
 * beforehand and nothing is ever refused.
 *
 * The contacts trigger writes each created or changed contact's contact.created or contact.updated in
 * this same statement (events/contact-change-outbox.ts); a contact whose data the call left as it was gets none.
 */
export async function upsertContactByEmail(pool: SqlPool, upsert: ContactUpsert): Promise<UpsertedContact | undefined> {
  const { projectId, email, patch, now, subscriptionEvent } = upsert;
  const set = JSON.stringify(patch.set);
  const subscribed = upsert.subscribed ?? null;
  const watched = upsert.subscribed !== undefined;
  const existing = watched
    ? Prisma.sql`existing AS (
      SELECT id, subscribed FROM contacts WHERE project_id = ${projectId}::uuid AND email = ${email} FOR NO KEY UPDATE
    ),`
    : Prisma.empty;
  const newFields = inFieldLockOrder(upsert.newFields);
  const fields =
    newFields.length === 0
      ? Prisma.empty
      : Prisma.sql`,
  registered AS (
    INSERT INTO contact_fields (project_id, key, type)
    SELECT ${projectId}::uuid, f.key, f.type
    FROM unnest(${newFields.map((field) => field.key)}::text[], ${newFields.map((field) => field.type)}::text[]) AS f(key, type)
    ON CONFLICT (project_id, key) DO NOTHING
  )`;
  const rows = await queryRows<ContactRow & { created: boolean; changed: boolean }>(
    pool,
    Prisma.sql`
    WITH ${existing}
    upserted AS (
      INSERT INTO contacts AS c (project_id, email, subscribed, data, created_at, updated_at)
      SELECT ${projectId}::uuid, ${email}, COALESCE(${subscribed}::boolean, ${upsert.defaultSubscribed}), ${set}::jsonb, ${now}, ${now}
      ${watched ? Prisma.sql`FROM (SELECT count(*) FROM existing) AS after_lock` : Prisma.empty}
      ON CONFLICT (project_id, email) DO UPDATE SET
        data = (c.data || ${set}::jsonb) - ${patch.remove}::text[],
        subscribed = COALESCE(${subscribed}::boolean, c.subscribed),
        updated_at = ${now}
      ${watched ? Prisma.sql`WHERE EXISTS (SELECT 1 FROM existing)` : Prisma.empty}
      RETURNING ${contactColumns("c")}, c.id AS uuid, (c.xmax = 0) AS created
    ),
    changed AS (
      ${
        watched
          ? Prisma.sql`SELECT u.uuid AS id FROM upserted u JOIN existing x ON x.id = u.uuid WHERE x.subscribed <> u.subscribed`
          : Prisma.sql`SELECT NULL::uuid AS id WHERE false`
      }
    )${watched && subscriptionEvent ? eventCtes("subscription", subscriptionEvent, "changed") : Prisma.empty}${
      upsert.trackedEvent ? eventCtes("tracked", upsert.trackedEvent, "(SELECT uuid AS id FROM upserted)") : Prisma.empty
    }${fields}
    SELECT u.id, u.email, u.subscribed, u."snoozedUntil", u.data, u."createdAt", u."updatedAt", u.created,
      EXISTS (SELECT 1 FROM changed) AS changed
    FROM upserted u`,
  );
  const [row] = rows;
  if (!row) return undefined;
  const { created, changed, ...contact } = row;
  return { contact: { ...contact, data: jsonObjectOf(contact.data) }, created, subscriptionChanged: changed };
}
