import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { Contact, ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type Segment = {
  id: string;
  name: string;
  description: string;
  type: "DYNAMIC" | "STATIC";
  condition: Record<string, unknown> | null;
  trackMembership: boolean;
  memberCount: number;
  projectId: string;
  createdAt: string;
  updatedAt: string;
};
type MembersPage = { data: Contact[]; total: number; page: number; pageSize: number };
type Usages = { segments: Array<{ id: string; name: string }>; campaigns: unknown[]; workflows: unknown[] };

/** One filter wrapped in the tree SPEC.md shows: AND of one group. */
const where = (field: string, operator: string, value?: unknown) => ({
  logic: "AND",
  groups: [{ filters: [value === undefined ? { field, operator } : { field, operator, value }] }],
});

describe("segments through the REST API", () => {
  let project: CreatedProject;
  let key: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "segments")).cookie, "Segments");
    key = project.secretKey;
  });

  const createSegment = (body: Record<string, unknown>, k = key) => call<Segment & ErrorBody>("POST", "/segments", { key: k, body });
  const addContact = async (email: string, data: Record<string, unknown> = {}) =>
    (await call<Contact>("POST", "/contacts", { key, body: { email, data } })).body;

  it("creates, reads, lists newest first, patches and deletes a segment", async () => {
    // No contact of the project is on this plan: memberCount is 0 whatever the other tests created.
    const condition = where("data.plan", "equals", "platinum");
    const created = await createSegment({ name: "Platinum customers", description: "Paying on the platinum plan", condition });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: "Platinum customers",
      description: "Paying on the platinum plan",
      type: "DYNAMIC",
      condition,
      trackMembership: false,
      memberCount: 0,
      projectId: project.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(created.body.createdAt))).toBe(false);
    const second = (await createSegment({ name: "Second", condition: where("data.plan", "equals", "free") })).body;
    const third = (await createSegment({ name: "Third", type: "STATIC" })).body;
    expect(second.description).toBe("");

    const list = await call<Segment[]>("GET", "/segments", { key });
    expect(list.status).toBe(200);
    const ids = [created.body.id, second.id, third.id];
    expect(list.body.map((segment) => segment.id).filter((id) => ids.includes(id))).toEqual([third.id, second.id, created.body.id]);
    expect(list.body.find((segment) => segment.id === created.body.id)).toEqual(created.body);

    const read = await call<Segment>("GET", `/segments/${created.body.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);

    const renamed = await call<Segment>("PATCH", `/segments/${created.body.id}`, {
      key,
      body: { name: "Platinum plan", description: "Renamed", trackMembership: true },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Platinum plan", description: "Renamed", trackMembership: true, condition });
    expect(Date.parse(renamed.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));

    const enterprise = where("data.plan", "equals", "enterprise");
    const reconditioned = await call<Segment>("PATCH", `/segments/${created.body.id}`, { key, body: { condition: enterprise } });
    expect(reconditioned.status).toBe(200);
    expect(reconditioned.body).toMatchObject({ name: "Platinum plan", condition: enterprise, trackMembership: true });

    const deleted = await call("DELETE", `/segments/${created.body.id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    const gone = await call<ErrorBody>("GET", `/segments/${created.body.id}`, { key });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ success: false, error: { code: "SEGMENT_NOT_FOUND", statusCode: 404 } });
    expect((await call<ErrorBody>("DELETE", `/segments/${created.body.id}`, { key })).status).toBe(404);
    expect((await call<Segment[]>("GET", "/segments", { key })).body.map((segment) => segment.id)).not.toContain(created.body.id);
  });

  it("answers 404 for an unknown segment id, whatever its form", async () => {
    for (const id of [randomUUID(), "not-a-uuid"]) {
      for (const [method, path, body] of [
        ["GET", `/segments/${id}`, undefined],
        ["PATCH", `/segments/${id}`, { name: "x" }],
        ["DELETE", `/segments/${id}`, undefined],
        ["GET", `/segments/${id}/contacts`, undefined],
        ["POST", `/segments/${id}/members`, { emails: ["a@x.test"] }],
        ["DELETE", `/segments/${id}/members`, { emails: ["a@x.test"] }],
        ["POST", `/segments/${id}/refresh`, undefined],
        ["POST", `/segments/${id}/compute`, undefined],
      ] as const) {
        const answer = await call<ErrorBody>(method, path, { key, body });
        expect(answer.status, `${method} ${path}`).toBe(404);
        expect(answer.body.error.code).toBe("SEGMENT_NOT_FOUND");
      }
    }
  });

  it("checks name and description lengths: 100 and 500 characters pass, one more is a 422", async () => {
    const condition = where("email", "contains", "@");
    expect((await createSegment({ name: "n".repeat(100), description: "d".repeat(500), condition })).status).toBe(201);

    const longName = await createSegment({ name: "n".repeat(101), condition });
    expect(longName.status).toBe(422);
    expect(longName.body.error.code).toBe("VALIDATION_ERROR");
    expect(longName.body.error.errors).toEqual([expect.objectContaining({ field: "name" })]);

    const longDescription = await createSegment({ name: "Long description", description: "d".repeat(501), condition });
    expect(longDescription.status).toBe(422);
    expect(longDescription.body.error.errors).toEqual([expect.objectContaining({ field: "description" })]);

    const noName = await createSegment({ condition });
    expect(noName.status).toBe(422);
    expect(noName.body.error.errors).toEqual([expect.objectContaining({ field: "name", code: "required" })]);
    expect((await createSegment({ name: "", condition })).status).toBe(422);

    const badType = await createSegment({ name: "Odd", type: "SOMETIMES", condition });
    expect(badType.status).toBe(422);
    expect(badType.body.error.errors?.map((error) => error.field)).toContain("type");

    const { body: segment } = await createSegment({ name: "To rename", condition });
    for (const body of [{ name: "n".repeat(101) }, { name: "" }, { description: "d".repeat(501) }, { trackMembership: "yes" }]) {
      const patched = await call<ErrorBody>("PATCH", `/segments/${segment.id}`, { key, body });
      expect(patched.status, JSON.stringify(body)).toBe(422);
      expect(patched.body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  it("answers a DYNAMIC segment without an object condition with the simple 400 body", async () => {
    for (const body of [
      { name: "No condition" },
      { name: "No condition", type: "DYNAMIC" },
      { name: "Null condition", condition: null },
      { name: "Text condition", condition: "plan = pro" },
      { name: "List condition", condition: [where("email", "contains", "@")] },
    ]) {
      const answer = await call<{ error: string }>("POST", "/segments", { key, body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body).toEqual({ error: expect.any(String) });
    }
    const invalid = await createSegment({ name: "Bad logic", condition: { logic: "XOR", groups: [] } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 422 });
    expect(invalid.body.error.errors).toEqual([expect.objectContaining({ field: "condition.logic" })]);
  });

  it("ignores the condition and trackMembership of a STATIC segment, and refuses to PATCH one's condition with 400", async () => {
    const created = await createSegment({
      name: "Hand picked",
      type: "STATIC",
      condition: where("data.plan", "equals", "pro"),
      trackMembership: true,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ type: "STATIC", condition: null, trackMembership: false, memberCount: 0 });
    // A condition that would not even be valid is ignored as well.
    expect((await createSegment({ name: "Hand picked too", type: "STATIC", condition: "anything" })).status).toBe(201);

    const patched = await call<ErrorBody>("PATCH", `/segments/${created.body.id}`, {
      key,
      body: { condition: where("data.plan", "equals", "pro") },
    });
    expect(patched.status).toBe(400);
    expect(patched.body).toMatchObject({ success: false, error: { code: "SEGMENT_NOT_DYNAMIC", statusCode: 400 } });
    const renamed = await call<Segment>("PATCH", `/segments/${created.body.id}`, { key, body: { name: "Hand picked (renamed)" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "Hand picked (renamed)", type: "STATIC", condition: null });
  });

  it("refuses a PATCH condition that is not an object (422) or not a valid tree (422 naming the node)", async () => {
    const { body: segment } = await createSegment({ name: "Patched condition", condition: where("data.plan", "equals", "pro") });
    const notObject = await call<ErrorBody>("PATCH", `/segments/${segment.id}`, { key, body: { condition: "plan = pro" } });
    expect(notObject.status).toBe(422);
    expect(notObject.body.error.errors?.[0]?.field).toBe("condition");
    const invalid = await call<ErrorBody>("PATCH", `/segments/${segment.id}`, {
      key,
      body: { condition: where("data.plan", "resembles", "pro") },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.errors).toEqual([
      expect.objectContaining({ field: "condition.groups[0].filters[0].operator", code: "unknown_operator" }),
    ]);
    // Nothing was changed by the refused requests.
    expect((await call<Segment>("GET", `/segments/${segment.id}`, { key })).body.condition).toEqual(where("data.plan", "equals", "pro"));
  });

  it("manages a STATIC segment's members: add with and without createMissing, remove, list", async () => {
    const m1 = await addContact("member1@static.test");
    const m2 = await addContact("member2@static.test");
    const { body: segment } = await createSegment({ name: "Beta testers", type: "STATIC" });

    const added = await call("POST", `/segments/${segment.id}/members`, {
      key,
      body: { emails: ["member1@static.test", " MEMBER2@Static.test ", "nobody@static.test"] },
    });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ added: 2, created: 0, notFound: 1, alreadyMembers: 0 });
    expect((await call<{ total: number }>("GET", "/contacts?search=nobody@static.test", { key })).body.total).toBe(0);

    const createdToo = await call("POST", `/segments/${segment.id}/members`, {
      key,
      body: { emails: ["member1@static.test", "new1@static.test", "new2@static.test"], createMissing: true, subscribed: false },
    });
    expect(createdToo.status).toBe(200);
    expect(createdToo.body).toEqual({ added: 2, created: 2, notFound: 0, alreadyMembers: 1 });
    const new1 = await call<{ data: Contact[] }>("GET", "/contacts?search=new1@static.test", { key });
    expect(new1.body.data).toEqual([expect.objectContaining({ email: "new1@static.test", subscribed: false })]);

    const members = await call<MembersPage>("GET", `/segments/${segment.id}/contacts`, { key });
    expect(members.status).toBe(200);
    expect(members.body).toMatchObject({ total: 4, page: 1, pageSize: 20 });
    expect(members.body.data.map((contact) => contact.email).sort()).toEqual([
      "member1@static.test",
      "member2@static.test",
      "new1@static.test",
      "new2@static.test",
    ]);
    // Members are contacts exactly as GET /contacts/:id shows them.
    const listed = members.body.data.find((contact) => contact.id === m1.id);
    expect(listed).toEqual((await call<Contact>("GET", `/contacts/${m1.id}`, { key })).body);
    expect((await call<Segment>("GET", `/segments/${segment.id}`, { key })).body.memberCount).toBe(4);

    const removed = await call("DELETE", `/segments/${segment.id}/members`, {
      key,
      body: { emails: ["member2@static.test", "nobody@static.test", "new2@static.test"] },
    });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ removed: 2, notMembers: 1 });
    const after = await call<MembersPage>("GET", `/segments/${segment.id}/contacts`, { key });
    expect(after.body.total).toBe(2);
    expect(after.body.data.map((contact) => contact.email).sort()).toEqual(["member1@static.test", "new1@static.test"]);
    // Removing a member deletes nobody.
    expect((await call("GET", `/contacts/${m2.id}`, { key })).status).toBe(200);
    const refreshed = await call<Segment>("POST", `/segments/${segment.id}/refresh`, { key });
    expect(refreshed.body.memberCount).toBe(2);
  });

  it("limits members calls to 1..500 valid addresses, and refuses them on a DYNAMIC segment with 400", async () => {
    const { body: staticSegment } = await createSegment({ name: "Limits", type: "STATIC" });
    const tooMany = await call<ErrorBody>("POST", `/segments/${staticSegment.id}/members`, {
      key,
      body: { emails: Array.from({ length: 501 }, (_, index) => `m${index}@limits.test`), createMissing: true },
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.errors?.[0]?.field).toBe("emails");
    const none = await call<ErrorBody>("POST", `/segments/${staticSegment.id}/members`, { key, body: { emails: [] } });
    expect(none.status).toBe(422);
    const tooManyRemoved = await call<ErrorBody>("DELETE", `/segments/${staticSegment.id}/members`, {
      key,
      body: { emails: Array.from({ length: 501 }, (_, index) => `m${index}@limits.test`) },
    });
    expect(tooManyRemoved.status).toBe(422);
    const invalid = await call<ErrorBody>("POST", `/segments/${staticSegment.id}/members`, {
      key,
      body: { emails: ["ok@limits.test", "not-an-address"], createMissing: true },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.code).toBe("VALIDATION_ERROR");
    expect(invalid.body.error.errors?.map((error) => error.field).join(" ")).toMatch(/emails/);
    // Nothing was added by the refused calls.
    expect((await call<MembersPage>("GET", `/segments/${staticSegment.id}/contacts`, { key })).body.total).toBe(0);
    const full = await call("POST", `/segments/${staticSegment.id}/members`, {
      key,
      body: { emails: Array.from({ length: 500 }, (_, index) => `m${index}@limits.test`), createMissing: true },
    });
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ added: 500, created: 500 });

    const { body: dynamicSegment } = await createSegment({ name: "Dynamic limits", condition: where("email", "contains", "@") });
    for (const method of ["POST", "DELETE"]) {
      const answer = await call<ErrorBody>(method, `/segments/${dynamicSegment.id}/members`, { key, body: { emails: ["m1@limits.test"] } });
      expect(answer.status, method).toBe(400);
      expect(answer.body).toMatchObject({ success: false, error: { code: "SEGMENT_NOT_STATIC", statusCode: 400 } });
    }
  });

  it("pages a segment's contacts: page and pageSize, pageSize clamped to 100, past the end empty", async () => {
    const paging = await createProject(call, (await signUp(call, "pager")).cookie, "Paging");
    const k = paging.secretKey;
    for (let index = 0; index < 25; index++) {
      await call("POST", "/contacts", { key: k, body: { email: `p${String(index).padStart(2, "0")}@page.test` } });
    }
    await call("POST", "/contacts", { key: k, body: { email: "outsider@elsewhere.test" } });
    const { body: segment } = await createSegment({ name: "Page test", condition: where("email", "contains", "@page.test") }, k);
    const page = (query: string) => call<MembersPage>("GET", `/segments/${segment.id}/contacts${query}`, { key: k });

    const first = await page("?page=1&pageSize=10");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 25, page: 1, pageSize: 10 });
    expect(first.body.data).toHaveLength(10);
    const second = await page("?page=2&pageSize=10");
    const third = await page("?page=3&pageSize=10");
    expect(third.body.data).toHaveLength(5);
    const seen = [...first.body.data, ...second.body.data, ...third.body.data].map((contact) => contact.email);
    expect(new Set(seen).size).toBe(25);
    expect(seen.every((email) => email.endsWith("@page.test"))).toBe(true);
    const past = await page("?page=4&pageSize=10");
    expect(past.body).toMatchObject({ data: [], total: 25, page: 4, pageSize: 10 });

    expect((await page("")).body).toMatchObject({ page: 1, pageSize: 20, total: 25 });
    expect((await page("")).body.data).toHaveLength(20);
    const clamped = await page("?pageSize=1000");
    expect(clamped.body).toMatchObject({ pageSize: 100, total: 25 });
    expect(clamped.body.data).toHaveLength(25);
    expect((await page("?pageSize=0&page=0")).body).toMatchObject({ page: 1, pageSize: 20 });
    expect((await page("?pageSize=lots&page=first")).body).toMatchObject({ page: 1, pageSize: 20 });
  });

  it("lets another project's key reach none of this project's segments", async () => {
    const { body: mine } = await createSegment({ name: "Private segment", condition: where("email", "contains", "@") });
    const { body: mineStatic } = await createSegment({ name: "Private list", type: "STATIC" });
    const other = await createProject(call, (await signUp(call, "intruder")).cookie, "Intruder");
    const k = other.secretKey;

    const list = await call<Segment[]>("GET", "/segments", { key: k });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
    for (const [method, path, body] of [
      ["GET", `/segments/${mine.id}`, undefined],
      ["PATCH", `/segments/${mine.id}`, { name: "Taken over" }],
      ["GET", `/segments/${mine.id}/contacts`, undefined],
      ["POST", `/segments/${mine.id}/refresh`, undefined],
      ["POST", `/segments/${mine.id}/compute`, undefined],
      ["POST", `/segments/${mineStatic.id}/members`, { emails: ["spy@intruder.test"], createMissing: true }],
      ["DELETE", `/segments/${mineStatic.id}/members`, { emails: ["spy@intruder.test"] }],
      ["DELETE", `/segments/${mine.id}`, undefined],
      ["DELETE", `/segments/${mineStatic.id}`, undefined],
    ] as const) {
      const answer = await call<ErrorBody>(method, path, { key: k, body });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.error.code).toBe("SEGMENT_NOT_FOUND");
    }
    // A condition of the other project cannot name this project's segment either.
    const borrowed = await createSegment({ name: "Borrowed", condition: where(`segment.${mineStatic.id}`, "memberOfSegment") }, k);
    expect(borrowed.status).toBe(422);

    expect((await call<Segment>("GET", `/segments/${mine.id}`, { key })).body.name).toBe("Private segment");
    expect((await call<MembersPage>("GET", `/segments/${mineStatic.id}/contacts`, { key })).body.total).toBe(0);
    expect((await call<{ total: number }>("GET", "/contacts?search=spy@intruder.test", { key: k })).body.total).toBe(0);
  });

  it("lists segments that filter on a field or an event in the field and event usage routes", async () => {
    const event = `purchase-${randomUUID().slice(0, 8)}`;
    await addContact("usage@usage.test", { plan: "pro", city: "Paris" });
    const { body: segment } = await createSegment({
      name: "Usage check",
      condition: {
        logic: "AND",
        groups: [{ filters: [{ field: "data.plan", operator: "equals", value: "pro" }], conditions: where(`event.${event}`, "triggered") }],
      },
    });
    const expected = { id: segment.id, name: "Usage check" };

    const byField = await call<Usages>("GET", "/contacts/fields/data.plan/usage", { key });
    expect(byField.status).toBe(200);
    expect(byField.body.segments).toContainEqual(expected);
    const byEvent = await call<Usages>("GET", `/events/${event}/usage`, { key });
    expect(byEvent.status).toBe(200);
    expect(byEvent.body).toEqual({ segments: [expected], campaigns: [], workflows: [] });

    // A field or event the segment does not read does not list it.
    expect((await call<Usages>("GET", "/contacts/fields/data.city/usage", { key })).body.segments).not.toContainEqual(expected);
    expect((await call<Usages>("GET", `/events/${event}-other/usage`, { key })).body.segments).toEqual([]);

    // Changing the condition moves the usage; deleting the segment removes it.
    await call("PATCH", `/segments/${segment.id}`, { key, body: { condition: where("data.city", "equals", "Paris") } });
    expect((await call<Usages>("GET", `/events/${event}/usage`, { key })).body.segments).toEqual([]);
    expect((await call<Usages>("GET", "/contacts/fields/data.city/usage", { key })).body.segments).toContainEqual(expected);
    await call("DELETE", `/segments/${segment.id}`, { key });
    expect((await call<Usages>("GET", "/contacts/fields/data.city/usage", { key })).body.segments).not.toContainEqual(expected);
  });
});
