import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { Contact, ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type Page = { data: Contact[]; cursor: string; hasMore: boolean; total: number };

describe("contacts through the REST API", () => {
  let project: CreatedProject;
  let key: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "crm")).cookie, "CRM");
    key = project.secretKey;
  });

  it("upserts by email: 201 with _meta.isNew, then 200 with isUpdate, data patched", async () => {
    const created = await call<Contact>("POST", "/contacts", {
      key,
      body: { email: "  Ada@Example.COM ", data: { plan: "pro", age: 36, locale: "en" } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      email: "ada@example.com",
      subscribed: true,
      snoozedUntil: null,
      _meta: { isNew: true, isUpdate: false },
    });
    expect(created.body.data).toEqual({ plan: "pro", age: 36, locale: "en" });

    const updated = await call<Contact>("POST", "/contacts", {
      key,
      body: {
        email: "ada@example.com",
        data: {
          plan: null,
          city: "London",
          age: "",
          id: "x",
          herald_email: "y",
          unsubscribeUrl: "z",
          once: { value: 1, persistent: false },
        },
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body._meta).toEqual({ isNew: false, isUpdate: true });
    expect(updated.body.id).toBe(created.body.id);
    // null deletes, "" keeps, reserved keys and one-off values are not stored.
    expect(updated.body.data).toEqual({ age: 36, locale: "en", city: "London" });
  });

  it("answers 400 { error } without an email, and 422 for an invalid one", async () => {
    const missing = await call<{ error: string }>("POST", "/contacts", { key, body: { data: { a: 1 } } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: expect.any(String) });
    const invalid = await call<ErrorBody>("POST", "/contacts", { key, body: { email: "not-an-email" } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.code).toBe("VALIDATION_ERROR");
  });

  it("creates exactly one contact from 20 concurrent upserts of one new email", async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        call<Contact>("POST", "/contacts", { key, body: { email: "race@example.com", data: { [`k${index}`]: index } } }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(19);
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    const contact = await call<Contact>("GET", `/contacts/${answers[0]?.body.id}`, { key });
    expect(Object.keys(contact.body.data)).toHaveLength(20);
  });

  it("reads, patches and deletes a contact; 409 on an email used by another contact", async () => {
    const a = (await call<Contact>("POST", "/contacts", { key, body: { email: "first@example.com" } })).body;
    await call("POST", "/contacts", { key, body: { email: "second@example.com" } });
    const clash = await call<ErrorBody>("PATCH", `/contacts/${a.id}`, { key, body: { email: "SECOND@example.com" } });
    expect(clash.status).toBe(409);
    const patched = await call<Contact>("PATCH", `/contacts/${a.id}`, {
      key,
      body: { email: "renamed@example.com", subscribed: false, data: { x: 1 } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ email: "renamed@example.com", subscribed: false, data: { x: 1 } });
    expect((await call("DELETE", `/contacts/${a.id}`, { key })).status).toBe(204);
    expect((await call<ErrorBody>("GET", `/contacts/${a.id}`, { key })).status).toBe(404);
  });

  it("lists with a cursor: limits clamped, total on the first page only, sort and direction with fallbacks", async () => {
    const listing = await createProject(call, (await signUp(call, "lister")).cookie, "Listing");
    for (let index = 0; index < 25; index++) {
      await call("POST", "/contacts", {
        key: listing.secretKey,
        body: { email: `p${String(index).padStart(2, "0")}@list.test`, subscribed: index % 2 === 0 },
      });
    }
    const first = await call<Page>("GET", "/contacts?limit=10", { key: listing.secretKey });
    expect(first.body.data).toHaveLength(10);
    expect(first.body).toMatchObject({ hasMore: true, total: 25 });
    expect(first.body.data[0]?.email).toBe("p24@list.test");
    const second = await call<Page>("GET", `/contacts?limit=10&cursor=${encodeURIComponent(first.body.cursor)}`, {
      key: listing.secretKey,
    });
    expect(second.body.total).toBe(0);
    expect(second.body.data[0]?.email).toBe("p14@list.test");

    const clamped = await call<Page>("GET", "/contacts?limit=1000", { key: listing.secretKey });
    expect(clamped.body.data).toHaveLength(25);
    expect((await call<Page>("GET", "/contacts", { key: listing.secretKey })).body.data).toHaveLength(20);

    const byEmail = await call<Page>("GET", "/contacts?sort=email&dir=asc&limit=3", { key: listing.secretKey });
    expect(byEmail.body.data.map((contact) => contact.email)).toEqual(["p00@list.test", "p01@list.test", "p02@list.test"]);
    const fallback = await call<Page>("GET", "/contacts?sort=shoeSize&dir=sideways&limit=1", { key: listing.secretKey });
    expect(fallback.body.data[0]?.email).toBe("p24@list.test");

    const search = await call<Page>("GET", "/contacts?search=P1", { key: listing.secretKey });
    expect(search.body.total).toBe(10);
    const unsubscribed = await call<Page>("GET", "/contacts?subscribed=false&limit=100", { key: listing.secretKey });
    expect(unsubscribed.body.data.every((contact) => !contact.subscribed)).toBe(true);
    expect(unsubscribed.body.total).toBe(12);
  });

  it("looks up which addresses are contacts, at most 500 per call", async () => {
    await call("POST", "/contacts", { key, body: { email: "known@example.com" } });
    const answer = await call<{ found: Array<{ email: string }>; missing: string[] }>("POST", "/contacts/lookup", {
      key,
      body: { emails: ["KNOWN@example.com", "unknown@example.com"] },
    });
    expect(answer.body.found.map((entry) => entry.email)).toEqual(["known@example.com"]);
    expect(answer.body.missing).toEqual(["unknown@example.com"]);
    const tooMany = await call<ErrorBody>("POST", "/contacts/lookup", {
      key,
      body: { emails: Array.from({ length: 501 }, (_, i) => `a${i}@x.test`) },
    });
    expect(tooMany.status).toBe(422);
  });

  it("infers field types from the first value and reports coverage, values and deletion", async () => {
    const fields = await createProject(call, (await signUp(call, "fields")).cookie, "Fields");
    const k = fields.secretKey;
    await call("POST", "/contacts", {
      key: k,
      body: { email: "f1@x.test", data: { score: 10, vip: true, since: "2024-01-31", note: "hi" } },
    });
    await call("POST", "/contacts", { key: k, body: { email: "f2@x.test", data: { score: "high", since: "2024-02-01T10:00:00Z" } } });
    const answer = await call<{ fields: Array<{ field: string; type: string; isCustom: boolean; coverage: number }> }>(
      "GET",
      "/contacts/fields",
      { key: k },
    );
    const byName = Object.fromEntries(answer.body.fields.map((field) => [field.field, field]));
    expect(byName.email).toMatchObject({ type: "string", isCustom: false, coverage: 1 });
    expect(byName["data.score"]).toMatchObject({ type: "number", isCustom: true, coverage: 1 });
    expect(byName["data.vip"]).toMatchObject({ type: "boolean", coverage: 0.5 });
    expect(byName["data.since"]).toMatchObject({ type: "date" });
    expect(byName["data.note"]).toMatchObject({ type: "string" });

    const values = await call<{ data: unknown[] }>("GET", "/contacts/fields/data.score/values", { key: k });
    expect(values.body.data).toEqual(expect.arrayContaining([10, "high"]));

    const removed = await call<{ contactsUpdated: number }>("DELETE", "/contacts/fields/data.score", { key: k });
    expect(removed.body.contactsUpdated).toBe(2);
    const after = await call<{ fields: Array<{ field: string }> }>("GET", "/contacts/fields", { key: k });
    expect(after.body.fields.map((field) => field.field)).not.toContain("data.score");
    const usage = await call("GET", "/contacts/fields/data.vip/usage", { key: k });
    expect(usage.body).toEqual({ segments: [], campaigns: [], workflows: [] });
  });

  it("lets another project's key reach none of these contacts", async () => {
    const mine = (await call<Contact>("POST", "/contacts", { key, body: { email: "private@example.com" } })).body;
    const other = await createProject(call, (await signUp(call, "intruder")).cookie, "Intruder");
    expect((await call("GET", `/contacts/${mine.id}`, { key: other.secretKey })).status).toBe(404);
    expect((await call("PATCH", `/contacts/${mine.id}`, { key: other.secretKey, body: { subscribed: false } })).status).toBe(404);
    expect((await call("DELETE", `/contacts/${mine.id}`, { key: other.secretKey })).status).toBe(404);
    const list = await call<Page>("GET", "/contacts?search=private", { key: other.secretKey });
    expect(list.body.total).toBe(0);
    expect((await call<Contact>("GET", `/contacts/${mine.id}`, { key })).body.email).toBe("private@example.com");
  });
});
