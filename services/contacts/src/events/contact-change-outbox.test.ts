import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { wipeBatch } from "../db/project-wipes.js";
import type { JsonObject } from "../domain/contact-data.js";
import { type ContactsHarness, contactChangesOf, newProjectId, randomEmail, startContacts } from "../test-support/contacts-harness.js";

/** JSON as Postgres stores it: no NUL in strings, -0 written as 0, and no key the decoder would take for a prototype. */
const storable = (value: unknown) => {
  const text = JSON.stringify(value);
  return !text.includes("\\u0000") && !text.includes('"__proto__"');
};
const asStored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const jsonData = fc
  .dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 })
  .filter(storable)
  .map((data) => asStored(data) as JsonObject);

/**
 * The contacts trigger (migration 20261128203000_contact_changes) encodes each change's EventEnvelope in
 * SQL: what it writes must be what the generated code reads, for any data a contact may hold.
 */
describe("contact changes written by the contacts trigger", () => {
  let harness: ContactsHarness;

  beforeAll(async () => {
    harness = await startContacts(inject("herald"), { worker: false });
  });

  afterAll(() => harness?.stop());

  const insertContact = async (projectId: string, email: string, subscribed: boolean, data: JsonObject) =>
    (
      await harness.pool.query<{ id: string }>(
        "INSERT INTO contacts (project_id, email, subscribed, data, updated_at) VALUES ($1, $2, $3, $4, now()) RETURNING id::text AS id",
        [projectId, email, subscribed, JSON.stringify(data)],
      )
    ).rows[0]?.id ?? "";

  it("encodes any data as a ContactChange the generated code decodes to the same, and names exactly the keys an update changed", async () => {
    await fc.assert(
      fc.asyncProperty(jsonData, jsonData, fc.boolean(), async (before, after, subscribed) => {
        const projectId = newProjectId();
        const email = randomEmail("encoded");
        const contactId = await insertContact(projectId, email, subscribed, before);
        await harness.pool.query("UPDATE contacts SET data = $2 WHERE id = $1::uuid", [contactId, JSON.stringify(after)]);
        const [created, updated, ...rest] = await contactChangesOf(harness.db, projectId);
        expect(created?.envelope).toMatchObject({ type: "contact.created", projectId, contactId, source: "contacts" });
        expect(created?.key).toBe(contactId);
        expect(created?.payload).toMatchObject({ email, subscribed, data: before, changedFields: [] });
        const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])]
          .filter((key) => !isDeepStrictEqual(before[key], after[key]))
          .sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : Buffer.from(a) > Buffer.from(b) ? 1 : 0));
        if (changed.length === 0) {
          expect(updated).toBeUndefined();
        } else {
          expect(updated?.envelope).toMatchObject({ type: "contact.updated", contactId });
          expect(updated?.payload).toMatchObject({ email, subscribed, data: after, changedFields: changed });
        }
        expect(rest).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it("encodes lengths of several bytes: long text, and data whose entries are long", async () => {
    const projectId = newProjectId();
    const data = {
      note: "é".repeat(20_000),
      list: Array.from({ length: 200 }, (_, index) => ({ index, label: `item ${index}` })),
      big: 1.7976931348623157e308,
      tiny: 5e-324,
    };
    await insertContact(projectId, randomEmail("long"), true, data);
    const [created] = await contactChangesOf(harness.db, projectId);
    expect(created?.payload?.data).toEqual(data);
  });

  it("carries the change's time, and a unique event id per change", async () => {
    const projectId = newProjectId();
    const contactId = await insertContact(projectId, randomEmail("timed"), true, {});
    await harness.pool.query("UPDATE contacts SET subscribed = false WHERE id = $1::uuid", [contactId]);
    const [created, updated] = await contactChangesOf(harness.db, projectId);
    const [row] = (await harness.pool.query<{ created_at: Date }>("SELECT created_at FROM contacts WHERE id = $1::uuid", [contactId])).rows;
    expect(created?.envelope.occurredAt && timestampMs(created.envelope.occurredAt)).toBe(row?.created_at.getTime());
    expect(updated?.payload?.changedFields).toEqual(["subscribed"]);
    expect(created?.envelope.eventId).not.toBe(updated?.envelope.eventId);
  });

  it("a project wipe deletes contacts without a contact.deleted each", async () => {
    const projectId = newProjectId();
    const kept = newProjectId();
    for (const id of [projectId, kept]) await insertContact(id, randomEmail("wiped"), true, { a: 1 });
    expect(await wipeBatch(harness.db, "contacts", { id: newProjectId(), projectId, cutoff: null }, 100)).toBe(1);
    expect((await contactChangesOf(harness.db, projectId)).map((event) => event.envelope.type)).toEqual(["contact.created"]);
    // The setting held for the wipe's transaction only: a delete after it is a contact.deleted again.
    await harness.pool.query("DELETE FROM contacts WHERE project_id = $1::uuid", [kept]);
    expect((await contactChangesOf(harness.db, kept)).map((event) => event.envelope.type)).toEqual(["contact.created", "contact.deleted"]);
  });
});

const timestampMs = (timestamp: { seconds: bigint; nanos: number }) => Number(timestamp.seconds) * 1000 + timestamp.nanos / 1_000_000;
