import { Code } from "@connectrpc/connect";
import { ContactSource, FieldType } from "@herald/proto/herald/contacts/v1/resources_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ContactsHarness, expectFailure, newProjectId, randomEmail, startContacts } from "../test-support/contacts-harness.js";

describe("ContactsService: the field registry", () => {
  let harness: ContactsHarness;

  beforeAll(async () => {
    // No memory of registered keys, so that every write asks the registry (the races below need it).
    harness = await startContacts(inject("herald"), { worker: false, env: { FIELD_CACHE_TTL_MS: "0" } });
  });

  afterAll(() => harness?.stop());

  const upsert = (projectId: string, data: Record<string, unknown>, email = randomEmail()) =>
    harness.contacts.upsertContact({ projectId, email, source: ContactSource.API, data: data as never });

  const fieldsOf = async (projectId: string) =>
    Object.fromEntries((await harness.contacts.listFields({ projectId })).fields.map((field) => [field.field, field]));

  it("fixes each key's type with its first non-null value and stores later values as sent", async () => {
    const projectId = newProjectId();
    await upsert(projectId, { age: null, plan: "pro" });
    await upsert(projectId, { age: 41, vip: true, since: "2024-05-01", seen: "2024-05-01T10:00:00.000Z", profile: { tier: "gold" } });
    const { contact } = await upsert(projectId, { age: "forty", vip: "yes", plan: 3 });
    expect(contact?.data).toMatchObject({ age: "forty", vip: "yes", plan: 3 });
    const fields = await fieldsOf(projectId);
    expect(Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, field.type]))).toEqual({
      email: FieldType.STRING,
      subscribed: FieldType.BOOLEAN,
      createdAt: FieldType.DATE,
      updatedAt: FieldType.DATE,
      "data.age": FieldType.NUMBER,
      "data.plan": FieldType.STRING,
      "data.vip": FieldType.BOOLEAN,
      "data.since": FieldType.DATE,
      "data.seen": FieldType.DATE,
      "data.profile": FieldType.STRING,
    });
  });

  it("settles two first values racing on one type", async () => {
    for (let round = 0; round < 5; round++) {
      const projectId = newProjectId();
      await Promise.all(Array.from({ length: 10 }, (_, index) => upsert(projectId, { score: index % 2 === 0 ? index : `s${index}` })));
      const rows = await harness.db.contactField.findMany({ where: { projectId, key: "score" } });
      expect(rows).toHaveLength(1);
      expect(["number", "string"]).toContain(rows[0]?.type);
    }
  });

  it("lists standard and custom fields with their coverage", async () => {
    const projectId = newProjectId();
    expect(await fieldsOf(projectId)).toMatchObject({ email: { isCustom: false, coverage: 1 } });
    await upsert(projectId, { plan: "pro", age: 3 });
    await upsert(projectId, { plan: "free" });
    await upsert(projectId, { other: true });
    const { contact } = await upsert(projectId, { plan: "team" });
    const fields = await fieldsOf(projectId);
    expect(fields["data.plan"]).toMatchObject({ isCustom: true, coverage: 0.75 });
    expect(fields["data.age"]?.coverage).toBeCloseTo(0.25);
    expect(fields.subscribed).toMatchObject({ isCustom: false, coverage: 1 });
    // A key no contact has any more stays registered, with coverage 0.
    await harness.contacts.updateContact({ projectId, contactId: contact?.id ?? "", data: { plan: null } });
    await harness.contacts.updateContact({ projectId, contactId: contact?.id ?? "", data: { gone: 1 } });
    await harness.contacts.updateContact({ projectId, contactId: contact?.id ?? "", data: { gone: null } });
    expect((await fieldsOf(projectId))["data.gone"]).toMatchObject({ type: FieldType.NUMBER, coverage: 0 });
  });

  it("pages through the distinct values of a field", async () => {
    const projectId = newProjectId();
    for (const plan of ["pro", "free", "pro", "team", "free", "enterprise"]) await upsert(projectId, { plan });
    const first = await harness.contacts.listFieldValues({ projectId, field: "data.plan", limit: 3 });
    expect(first.values.map((value) => value.kind.value)).toEqual(["enterprise", "free", "pro"]);
    expect(first.hasMore).toBe(true);
    const second = await harness.contacts.listFieldValues({ projectId, field: "data.plan", limit: 3, cursor: first.cursor });
    expect(second.values.map((value) => value.kind.value)).toEqual(["team"]);
    expect(second.hasMore).toBe(false);
    const subscribed = await harness.contacts.listFieldValues({ projectId, field: "subscribed" });
    expect(subscribed.values.map((value) => value.kind.value)).toEqual([true]);
    expect((await harness.contacts.listFieldValues({ projectId, field: "email", limit: 500 })).values).toHaveLength(6);
    await expectFailure(harness.contacts.listFieldValues({ projectId, field: "data.nothing" }), Code.NotFound, "FIELD_NOT_FOUND");
    await expectFailure(harness.contacts.listFieldValues({ projectId, field: "bogus" }), Code.NotFound, "FIELD_NOT_FOUND");
  });

  it("answers usage of a field (no segments reference any yet)", async () => {
    const projectId = newProjectId();
    await upsert(projectId, { plan: "pro" });
    expect((await harness.contacts.getFieldUsage({ projectId, field: "data.plan" })).usages).toEqual([]);
    expect((await harness.contacts.getFieldUsage({ projectId, field: "email" })).usages).toEqual([]);
    await expectFailure(harness.contacts.getFieldUsage({ projectId, field: "data.nope" }), Code.NotFound, "FIELD_NOT_FOUND");
  });

  it("deletes a field from every contact in batches, then from the registry", async () => {
    const projectId = newProjectId();
    // 2,500 contacts: more than two batches of 1,000.
    await harness.db.$executeRaw`
      INSERT INTO contacts (project_id, email, subscribed, data, created_at)
      SELECT ${projectId}::uuid, 'bulk' || n || '@example.com', true,
        CASE WHEN n % 5 = 0 THEN '{"keep": 1}'::jsonb ELSE jsonb_build_object('doomed', n, 'keep', 1) END,
        now() - n * interval '1 second'
      FROM generate_series(1, 2500) AS n`;
    await upsert(projectId, { doomed: 1, keep: 2 });
    const { contactsUpdated } = await harness.contacts.deleteField({ projectId, field: "data.doomed" });
    expect(contactsUpdated).toBe(2001n);
    const [left] = await harness.db.$queryRaw<Array<{ doomed: bigint; kept: bigint }>>`
      SELECT count(*) FILTER (WHERE data ? 'doomed') AS doomed, count(*) FILTER (WHERE data ? 'keep') AS kept
      FROM contacts WHERE project_id = ${projectId}::uuid`;
    expect(left).toEqual({ doomed: 0n, kept: 2501n });
    expect((await fieldsOf(projectId))["data.doomed"]).toBeUndefined();
    await expectFailure(harness.contacts.deleteField({ projectId, field: "data.doomed" }), Code.NotFound, "FIELD_NOT_FOUND");
    await expectFailure(harness.contacts.deleteField({ projectId, field: "email" }), Code.InvalidArgument, "FIELD_NOT_DELETABLE");
    await expectFailure(harness.contacts.deleteField({ projectId, field: "createdAt" }), Code.InvalidArgument, "FIELD_NOT_DELETABLE");
    // A later value registers the key afresh, with its own type.
    await upsert(projectId, { doomed: "back" });
    expect((await fieldsOf(projectId))["data.doomed"]?.type).toBe(FieldType.STRING);
  });
});
