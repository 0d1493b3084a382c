import { randomUUID } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { topics } from "@herald/kafka";
import { ContactSort, SortDirection } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type ContactsHarness,
  expectFailure,
  newProjectId,
  outboxOf,
  randomEmail,
  startContacts,
} from "../test-support/contacts-harness.js";

describe("ContactsService: contacts", () => {
  let harness: ContactsHarness;

  beforeAll(async () => {
    harness = await startContacts(inject("herald"), { worker: false });
  });

  afterAll(() => harness?.stop());

  const upsert = (projectId: string, email: string, extra: Record<string, unknown> = {}) =>
    harness.contacts.upsertContact({ projectId, email, source: ContactSource.API, ...extra });

  it("creates a contact by email, then patches the same one, applying the data rules", async () => {
    const projectId = newProjectId();
    const email = randomEmail("Ann");
    const first = await upsert(projectId, `  ${email.toUpperCase()} `, {
      data: { plan: "free", age: 41, city: "Lyon", email: "dropped@example.com", herald_id: "x", locale: "fr" },
    });
    expect(first.created).toBe(true);
    expect(first.contact).toMatchObject({
      email: email.toLowerCase(),
      subscribed: true,
      data: { plan: "free", age: 41, city: "Lyon", locale: "fr" },
    });
    expect(first.contact?.snoozedUntil).toBeUndefined();

    const second = await upsert(projectId, email, {
      data: { plan: "pro", city: null, age: "", coupon: { value: "X", persistent: false }, profile: { tier: "gold" } },
    });
    expect(second.created).toBe(false);
    expect(second.contact?.id).toBe(first.contact?.id);
    expect(second.contact?.data).toEqual({ plan: "pro", age: 41, locale: "fr", profile: { tier: "gold" } });
    // A send renders with the one-off value over the stored data; the contact never keeps it.
    expect(second.variables).toEqual({ plan: "pro", age: 41, locale: "fr", profile: { tier: "gold" }, coupon: "X" });
    const [createdAt, updatedAt] = [first.contact?.createdAt, second.contact?.updatedAt];
    if (!createdAt || !updatedAt) throw new Error("timestamps are missing");
    expect(timestampDate(updatedAt).getTime()).toBeGreaterThanOrEqual(timestampDate(createdAt).getTime());
    // Another project's contact of the same address is another contact.
    const elsewhere = await upsert(newProjectId(), email);
    expect(elsewhere.created).toBe(true);
    expect(elsewhere.contact?.id).not.toBe(first.contact?.id);
  });

  it("upserts a batch with UpsertContacts, each item answering or failing as its own UpsertContact would", async () => {
    const projectId = newProjectId();
    const [first, second] = [randomEmail(), randomEmail()];
    const { results } = await harness.contacts.upsertContacts({
      contacts: [
        { projectId, email: first, source: ContactSource.SEND, data: { plan: "pro" } },
        { projectId, email: "not an address", source: ContactSource.SEND },
        { projectId, email: second, source: ContactSource.API },
      ],
    });
    expect(results.map((result) => result.outcome.case)).toEqual(["upserted", "failed", "upserted"]);
    expect(results[0]?.outcome.value).toMatchObject({ created: true, contact: { email: first, subscribed: false, data: { plan: "pro" } } });
    expect(results[1]?.outcome.value).toMatchObject({ code: Code.InvalidArgument, detail: { code: "VALIDATION_ERROR" } });
    expect(results[2]?.outcome.value).toMatchObject({ created: true, contact: { email: second, subscribed: true } });
    // The same item alone fails the same way.
    await expectFailure(upsert(projectId, "not an address"), Code.InvalidArgument, "VALIDATION_ERROR");

    const tooMany = Array.from({ length: 1_001 }, () => ({ projectId, email: randomEmail(), source: ContactSource.API }));
    await expectFailure(harness.contacts.upsertContacts({ contacts: tooMany }), Code.InvalidArgument, "BATCH_TOO_LARGE");
  });

  it("defaults a new contact's subscription by source and keeps an existing one's when omitted", async () => {
    const projectId = newProjectId();
    for (const [source, subscribed] of [
      [ContactSource.API, true],
      [ContactSource.TRACK, true],
      [ContactSource.IMPORT, true],
      [ContactSource.SEND, false],
      [ContactSource.UNSPECIFIED, true],
    ] as const) {
      const email = randomEmail();
      const created = await harness.contacts.upsertContact({ projectId, email, source });
      expect(created.contact?.subscribed).toBe(subscribed);
      const again = await harness.contacts.upsertContact({ projectId, email, source: ContactSource.SEND });
      expect(again.contact?.subscribed).toBe(subscribed);
    }
    const unsubscribed = await upsert(projectId, randomEmail(), { subscribed: false });
    expect(unsubscribed.contact?.subscribed).toBe(false);
  });

  it("creates exactly one contact when 20 upserts of a new email race", async () => {
    const projectId = newProjectId();
    const email = randomEmail("race");
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => upsert(projectId, email, { data: { [`k${index}`]: index } })),
    );
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.contact?.id)).size).toBe(1);
    const rows = await harness.db.contact.findMany({ where: { projectId } });
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0]?.data as object)).toHaveLength(20);
  });

  it("writes upserts that arrive together in one batch, each with its own data, default state and answer", async () => {
    const [projectId, otherProject] = [newProjectId(), newProjectId()];
    const existing = randomEmail("kept");
    await upsert(projectId, existing, { subscribed: false, data: { plan: "free", city: "Lyon" } });
    const fresh = Array.from({ length: 30 }, (_, index) => randomEmail(`fresh${index}`));
    const answers = await Promise.all([
      ...fresh.map((email, index) =>
        harness.contacts.upsertContact({
          projectId: index % 2 === 0 ? projectId : otherProject,
          email,
          source: index % 3 === 0 ? ContactSource.SEND : ContactSource.API,
          data: { position: index, note: { value: `n${index}`, persistent: false } },
        }),
      ),
      upsert(projectId, existing, { data: { plan: "pro", city: null } }),
    ]);
    fresh.forEach((email, index) => {
      const answer = answers[index];
      expect(answer?.created).toBe(true);
      expect(answer?.contact).toMatchObject({ email: email.toLowerCase(), subscribed: index % 3 !== 0, data: { position: index } });
      expect(answer?.variables).toEqual({ position: index, note: `n${index}` });
    });
    const kept = answers.at(-1);
    expect(kept?.created).toBe(false);
    // The existing contact keeps its state, and its data is patched.
    expect(kept?.contact).toMatchObject({ subscribed: false, data: { plan: "pro" } });
    expect(await harness.db.contact.count({ where: { projectId } })).toBe(16);
    expect(await harness.db.contact.count({ where: { projectId: otherProject } })).toBe(15);
    const fields = await harness.db.contactField.findMany({ where: { projectId: otherProject } });
    expect(fields.map((field) => [field.key, field.type])).toEqual([["position", "number"]]);
  });

  it("answers each of several upserts of one contact written together with its own values", async () => {
    const projectId = newProjectId();
    const email = randomEmail("orders");
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) => upsert(projectId, email, { data: { order: `A-${index}`, [`seen${index}`]: true } })),
    );
    answers.forEach((answer, index) => {
      expect(answer.contact?.data).toMatchObject({ order: `A-${index}`, [`seen${index}`]: true });
      expect(answer.variables).toMatchObject({ order: `A-${index}` });
    });
    expect(answers.filter((answer) => answer.created)).toHaveLength(1);
    const [stored] = await harness.db.contact.findMany({ where: { projectId } });
    expect(Object.keys(stored?.data as object)).toHaveLength(13);
  });

  it("emits contact.subscribed / contact.unsubscribed on each change of an existing contact, through the outbox", async () => {
    const projectId = newProjectId();
    const email = randomEmail();
    const { contact } = await upsert(projectId, email);
    const id = contact?.id ?? "";
    await upsert(projectId, email, { subscribed: true });
    expect(await outboxOf(harness.db, projectId)).toEqual([]);

    await upsert(projectId, email, { subscribed: false });
    await harness.contacts.updateContact({ projectId, contactId: id, subscribed: false });
    await harness.contacts.updateContact({ projectId, contactId: id, subscribed: true });
    const published = await outboxOf(harness.db, projectId);
    expect(published.map((event) => event.envelope.type)).toEqual(["contact.unsubscribed", "contact.subscribed"]);
    for (const event of published) {
      expect(event).toMatchObject({ topic: topics.contactEvents, key: id });
      expect(event.envelope).toMatchObject({ contactId: id, projectId, source: "contacts" });
      expect(event.payload).toMatchObject({ eventId: event.envelope.eventId, contactEmail: email });
    }
    const records = await harness.db.event.findMany({ where: { contactId: id }, orderBy: { createdAt: "asc" } });
    expect(records.map((record) => [record.id, record.name])).toEqual(
      published.map((event) => [event.envelope.eventId, event.envelope.type]),
    );
  });

  it("refuses an invalid email with VALIDATION_ERROR on the email field", async () => {
    const projectId = newProjectId();
    const failure = await expectFailure(upsert(projectId, "not an email"), Code.InvalidArgument, "VALIDATION_ERROR");
    expect(failure.findDetails).toBeDefined();
    await expectFailure(upsert(projectId, ""), Code.InvalidArgument, "VALIDATION_ERROR");
    await expectFailure(upsert("not-a-uuid", randomEmail()), Code.InvalidArgument, "INVALID_PROJECT_ID");
  });

  it("gets, updates and deletes by id, within the project only", async () => {
    const projectId = newProjectId();
    const { contact } = await upsert(projectId, randomEmail(), { data: { a: 1, b: 2 } });
    const contactId = contact?.id ?? "";
    expect((await harness.contacts.getContact({ projectId, contactId })).contact?.id).toBe(contactId);
    await expectFailure(harness.contacts.getContact({ projectId: newProjectId(), contactId }), Code.NotFound, "CONTACT_NOT_FOUND");
    await expectFailure(harness.contacts.getContact({ projectId, contactId: "nope" }), Code.NotFound, "CONTACT_NOT_FOUND");

    const newEmail = randomEmail("renamed");
    const updated = await harness.contacts.updateContact({
      projectId,
      contactId,
      email: ` ${newEmail.toUpperCase()}`,
      data: { a: null, c: 3 },
    });
    expect(updated.contact).toMatchObject({ email: newEmail, data: { b: 2, c: 3 }, subscribed: true });
    // No data leaves data as it is.
    expect((await harness.contacts.updateContact({ projectId, contactId })).contact?.data).toEqual({ b: 2, c: 3 });
    await expectFailure(harness.contacts.updateContact({ projectId, contactId, email: "bad" }), Code.InvalidArgument, "VALIDATION_ERROR");
    await expectFailure(
      harness.contacts.updateContact({ projectId, contactId: randomUUID(), subscribed: false }),
      Code.NotFound,
      "CONTACT_NOT_FOUND",
    );

    await harness.contacts.deleteContact({ projectId, contactId });
    await expectFailure(harness.contacts.getContact({ projectId, contactId }), Code.NotFound, "CONTACT_NOT_FOUND");
    await expectFailure(harness.contacts.deleteContact({ projectId, contactId }), Code.NotFound, "CONTACT_NOT_FOUND");
  });

  it("refuses to change an email to one another contact uses: 409 EMAIL_TAKEN", async () => {
    const projectId = newProjectId();
    const taken = randomEmail("taken");
    await upsert(projectId, taken);
    const { contact } = await upsert(projectId, randomEmail());
    const failure = await expectFailure(
      harness.contacts.updateContact({ projectId, contactId: contact?.id ?? "", email: taken.toUpperCase(), subscribed: false }),
      Code.AlreadyExists,
      "EMAIL_TAKEN",
    );
    expect(failure.rawMessage).toContain("already used");
    // Nothing of the refused change was kept.
    expect((await harness.contacts.getContact({ projectId, contactId: contact?.id ?? "" })).contact?.subscribed).toBe(true);
    // Its own address is no conflict.
    await harness.contacts.updateContact({ projectId, contactId: contact?.id ?? "", email: contact?.email });
  });

  it("maps snoozed_until when it is set", async () => {
    const projectId = newProjectId();
    const { contact } = await upsert(projectId, randomEmail());
    const until = new Date("2030-01-01T00:00:00.000Z");
    await harness.db.contact.update({ where: { projectId_id: { projectId, id: contact?.id ?? "" } }, data: { snoozedUntil: until } });
    const found = await harness.contacts.getContact({ projectId, contactId: contact?.id ?? "" });
    expect(found.contact?.snoozedUntil && timestampDate(found.contact.snoozedUntil)).toEqual(until);
  });

  it("looks up at most 500 emails, in the order asked, normalised", async () => {
    const projectId = newProjectId();
    const [a, b] = [randomEmail("a"), randomEmail("b")];
    await upsert(projectId, a);
    await upsert(projectId, b);
    const missing = randomEmail("missing");
    const found = await harness.contacts.lookupContacts({ projectId, emails: [b.toUpperCase(), missing, ` ${a}`, b] });
    expect(found.contacts.map((contact) => contact.email)).toEqual([b, a]);
    expect(found.missing).toEqual([missing]);
    await harness.contacts.lookupContacts({ projectId, emails: Array.from({ length: 500 }, () => randomEmail()) });
    const failure = await expectFailure(
      harness.contacts.lookupContacts({ projectId, emails: Array.from({ length: 501 }, () => randomEmail()) }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
    expect(failure.rawMessage).toContain("500");
  });

  describe("listing", () => {
    const projectId = newProjectId();
    const emails: string[] = [];

    beforeAll(async () => {
      for (let index = 0; index < 45; index++) {
        const email = `list-${String(index).padStart(2, "0")}-${index % 3 === 0 ? "vip" : "std"}@example.com`;
        emails.push(email);
        await upsert(projectId, email, { subscribed: index % 5 !== 0 });
      }
    });

    async function everyPage(request: Record<string, unknown>, onPage?: (page: number) => Promise<void>) {
      const seen: string[] = [];
      const totals: bigint[] = [];
      let cursor = "";
      for (let page = 0; ; page++) {
        const answer = await harness.contacts.listContacts({ projectId, ...request, cursor });
        seen.push(...answer.contacts.map((contact) => contact.email));
        totals.push(answer.total);
        await onPage?.(page);
        if (!answer.hasMore) {
          expect(answer.cursor).toBe("");
          break;
        }
        cursor = answer.cursor;
      }
      return { seen, totals };
    }

    it("pages newest first by default, 20 at a time, with the total on the first page only", async () => {
      const { seen, totals } = await everyPage({});
      expect(seen).toEqual([...emails].reverse());
      expect(totals).toEqual([45n, 0n, 0n]);
    });

    it("clamps the limit to 100 and takes 0 as the default", async () => {
      expect((await harness.contacts.listContacts({ projectId, limit: 1_000 })).contacts).toHaveLength(45);
      const answer = await harness.contacts.listContacts({ projectId, limit: 0 });
      expect(answer.contacts).toHaveLength(20);
      expect(answer.hasMore).toBe(true);
      expect((await harness.contacts.listContacts({ projectId, limit: 7 })).contacts).toHaveLength(7);
    });

    it("sorts by email or createdAt in either direction, and falls back to the defaults", async () => {
      const byEmail = await everyPage({ sort: ContactSort.EMAIL, direction: SortDirection.ASC, limit: 10 });
      expect(byEmail.seen).toEqual([...emails].sort());
      const byEmailDesc = await everyPage({ sort: ContactSort.EMAIL, limit: 10 });
      expect(byEmailDesc.seen).toEqual([...emails].sort().reverse());
      const oldestFirst = await everyPage({ direction: SortDirection.ASC, limit: 10 });
      expect(oldestFirst.seen).toEqual(emails);
      const unknown = await everyPage({ sort: 99 as ContactSort, direction: 42 as SortDirection });
      expect(unknown.seen).toEqual([...emails].reverse());
    });

    it("filters by a case-insensitive substring of the email and by subscription", async () => {
      const vip = await everyPage({ search: "VIP", limit: 5 });
      expect(vip.seen).toEqual(emails.filter((email) => email.includes("vip")).reverse());
      expect(vip.totals[0]).toBe(15n);
      expect((await harness.contacts.listContacts({ projectId, search: "%" })).total).toBe(0n);
      const unsubscribed = await everyPage({ subscribed: false });
      expect(unsubscribed.seen).toEqual(emails.filter((_, index) => index % 5 === 0).reverse());
      expect(unsubscribed.totals[0]).toBe(9n);
    });

    it("stays stable while contacts are added between pages", async () => {
      const { seen } = await everyPage({ direction: SortDirection.ASC, limit: 10 }, async (page) => {
        if (page < 3) await upsert(projectId, `list-zz-added-${page}-${randomUUID()}@example.com`);
      });
      // Every contact that existed at the start shows once; added ones may show only after them.
      expect(seen.slice(0, 45)).toEqual(emails);
      expect(new Set(seen).size).toBe(seen.length);
      const newestFirst = await everyPage({ limit: 10 }, async (page) => {
        if (page < 3) await upsert(projectId, `list-zz-late-${page}-${randomUUID()}@example.com`);
      });
      expect(newestFirst.seen.filter((email) => emails.includes(email))).toEqual([...emails].reverse());
      expect(new Set(newestFirst.seen).size).toBe(newestFirst.seen.length);
    });

    it("refuses a cursor it did not make, or one of another order", async () => {
      await expectFailure(harness.contacts.listContacts({ projectId, cursor: "garbage" }), Code.InvalidArgument, "INVALID_CURSOR");
      const { cursor } = await harness.contacts.listContacts({ projectId, limit: 5 });
      await expectFailure(
        harness.contacts.listContacts({ projectId, cursor, sort: ContactSort.EMAIL }),
        Code.InvalidArgument,
        "INVALID_CURSOR",
      );
    });
  });
});
