import { waitUntil } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { Contact, ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type Segment = { id: string; name: string; memberCount: number; trackMembership: boolean };
type Computed = { added: number; removed: number; total: number };
type EventPage = { data: Array<{ id: string; name: string; contactId: string; createdAt: string }>; total: number };
type MembersPage = { data: Contact[]; total: number };

const where = (field: string, operator: string, value?: unknown) => ({
  logic: "AND",
  groups: [{ filters: [value === undefined ? { field, operator } : { field, operator, value }] }],
});

describe("tracked segments: compute, entry and exit events", () => {
  let project: CreatedProject;
  let key: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "membership")).cookie, "Membership");
    key = project.secretKey;
  });

  const createSegment = async (body: Record<string, unknown>) => {
    const answer = await call<Segment>("POST", "/segments", { key, body });
    if (answer.status !== 201) throw new Error(`segment refused: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const addContact = async (email: string, data: Record<string, unknown> = {}) =>
    (await call<Contact>("POST", "/contacts", { key, body: { email, data } })).body;
  const compute = async (id: string) => {
    const answer = await call<Computed>("POST", `/segments/${id}/compute`, { key });
    expect(answer.status).toBe(200);
    return answer.body;
  };
  /** Contact ids of every event of that name, sorted (one id per event). */
  const eventContacts = async (name: string) =>
    (await call<EventPage>("GET", `/events?name=${encodeURIComponent(name)}&limit=100`, { key })).body.data
      .map((event) => event.contactId)
      .sort();
  const eventsOf = async (contactId: string, name: string) =>
    (await call<EventPage>("GET", `/events/contact/${contactId}?limit=100`, { key })).body.data.filter((event) => event.name === name);

  it("stores the membership on compute: one entry per join, one exit per leave, nothing when nothing changed", async () => {
    // A tracked canary shows when the service has re-evaluated the new contacts (it does so on every contact change);
    // after that, only adding to and removing from the static list below changes who qualifies.
    await createSegment({ name: "Compute canary", condition: where("email", "contains", "@compute.test"), trackMembership: true });
    const contacts = [await addContact("x1@compute.test"), await addContact("x2@compute.test"), await addContact("x3@compute.test")];
    const [x1, x2, x3] = contacts.map((contact) => contact.id) as [string, string, string];
    await waitUntil(async () => (await eventContacts("segment.compute-canary.entry")).length === 3, { timeoutMs: 10_000 });

    const list = await createSegment({ name: "Compute source", type: "STATIC" });
    const vip = await createSegment({
      name: "VIP Customers!",
      condition: where(`segment.${list.id}`, "memberOfSegment"),
      trackMembership: true,
    });
    expect(vip).toMatchObject({ trackMembership: true, memberCount: 0 });
    const added = await call("POST", `/segments/${list.id}/members`, {
      key,
      body: { emails: ["x1@compute.test", "x2@compute.test", "x3@compute.test"] },
    });
    expect(added.body).toMatchObject({ added: 3 });

    // Refresh counts, but neither stores members nor emits: the compute after it still finds three to add.
    const refreshed = await call<Segment>("POST", `/segments/${vip.id}/refresh`, { key });
    expect(refreshed.body.memberCount).toBe(3);
    expect(await eventContacts("segment.vip-customers.entry")).toEqual([]);

    expect(await compute(vip.id)).toEqual({ added: 3, removed: 0, total: 3 });
    expect(await compute(vip.id)).toEqual({ added: 0, removed: 0, total: 3 });
    expect(await eventContacts("segment.vip-customers.entry")).toEqual([x1, x2, x3].sort());
    expect(await eventContacts("segment.vip-customers.exit")).toEqual([]);

    await call("DELETE", `/segments/${list.id}/members`, { key, body: { emails: ["x2@compute.test"] } });
    expect(await compute(vip.id)).toEqual({ added: 0, removed: 1, total: 2 });
    expect(await compute(vip.id)).toEqual({ added: 0, removed: 0, total: 2 });
    expect(await eventContacts("segment.vip-customers.exit")).toEqual([x2]);
    expect(await eventsOf(x2, "segment.vip-customers.entry")).toHaveLength(1);
    expect(await eventsOf(x2, "segment.vip-customers.exit")).toHaveLength(1);
    expect(await eventsOf(x1, "segment.vip-customers.exit")).toHaveLength(0);

    expect((await call<Segment>("GET", `/segments/${vip.id}`, { key })).body.memberCount).toBe(2);
    const members = await call<MembersPage>("GET", `/segments/${vip.id}/contacts`, { key });
    expect(members.body.data.map((contact) => contact.id).sort()).toEqual([x1, x3].sort());
    // Joining again is a new transition: a second entry.
    await call("POST", `/segments/${list.id}/members`, { key, body: { emails: ["x2@compute.test"] } });
    expect(await compute(vip.id)).toEqual({ added: 1, removed: 0, total: 3 });
    expect(await eventsOf(x2, "segment.vip-customers.entry")).toHaveLength(2);
    expect(await eventsOf(x2, "segment.vip-customers.exit")).toHaveLength(1);
  });

  it("re-evaluates a tracked segment as soon as a contact changes, without compute, and emits each transition once", async () => {
    // Contacts changed just before the segment exists (as in any busy project): the service has re-evaluated them
    // (the canary's entries show it) by the time the segment is created, and must still see the changes that follow.
    await createSegment({ name: "Watch canary", condition: where("email", "contains", "@watch.test"), trackMembership: true });
    const y1 = await addContact("y1@watch.test", { tier: "gold" });
    const y2 = await addContact("y2@watch.test", { tier: "silver" });
    await waitUntil(async () => (await eventContacts("segment.watch-canary.entry")).length === 2, { timeoutMs: 10_000 });
    const gold = await createSegment({ name: "Gold Members", condition: where("data.tier", "equals", "gold"), trackMembership: true });
    const entries = (contactId: string) => eventsOf(contactId, "segment.gold-members.entry");
    const exits = (contactId: string) => eventsOf(contactId, "segment.gold-members.exit");

    // y1 qualified when the segment was created; compute has nothing left to do for it.
    await waitUntil(async () => (await entries(y1.id)).length === 1, { timeoutMs: 10_000 });
    expect(await compute(gold.id)).toEqual({ added: 0, removed: 0, total: 1 });

    // y2 qualifies through a PATCH: its entry appears without any compute.
    await call("PATCH", `/contacts/${y2.id}`, { key, body: { data: { tier: "gold" } } });
    await waitUntil(async () => (await entries(y2.id)).length === 1, { timeoutMs: 10_000 });
    expect(await compute(gold.id)).toEqual({ added: 0, removed: 0, total: 2 });

    // y1 leaves; whether the service's own re-evaluation or this compute records it, it is recorded once.
    await call("PATCH", `/contacts/${y1.id}`, { key, body: { data: { tier: "silver" } } });
    const racing = await compute(gold.id);
    expect(racing).toMatchObject({ added: 0, total: 1 });
    expect([0, 1]).toContain(racing.removed);
    expect(await compute(gold.id)).toEqual({ added: 0, removed: 0, total: 1 });
    await waitUntil(async () => (await exits(y1.id)).length >= 1, { timeoutMs: 10_000 });
    expect(await exits(y1.id)).toHaveLength(1);
    expect(await entries(y1.id)).toHaveLength(1);
    expect(await entries(y2.id)).toHaveLength(1);
    expect(await exits(y2.id)).toHaveLength(0);
  });

  it("emits an entry on a tracked event without compute", async () => {
    const shoppers = await createSegment({ name: "Shoppers", condition: where("event.checkout", "triggered"), trackMembership: true });
    const tracked = await call<{ data: { contact: string } }>("POST", "/v1/track", {
      key: project.publicKey,
      body: { email: "z1@events.test", event: "checkout" },
    });
    const contactId = tracked.body.data.contact;
    await waitUntil(async () => (await eventsOf(contactId, "segment.shoppers.entry")).length === 1, { timeoutMs: 10_000 });
    expect(await compute(shoppers.id)).toMatchObject({ added: 0, removed: 0 });
    expect(await eventsOf(contactId, "segment.shoppers.entry")).toHaveLength(1);
  });

  it("refresh never emits events; compute refuses untracked and STATIC segments with 400", async () => {
    await addContact("r1@refresh.test", { band: "a" });
    await addContact("r2@refresh.test", { band: "a" });
    const untracked = await createSegment({ name: "Band A", condition: where("data.band", "equals", "a") });
    const refreshed = await call<Segment>("POST", `/segments/${untracked.id}/refresh`, { key });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ id: untracked.id, name: "Band A", memberCount: 2 });
    expect(await eventContacts("segment.band-a.entry")).toEqual([]);

    const notTracked = await call<ErrorBody>("POST", `/segments/${untracked.id}/compute`, { key });
    expect(notTracked.status).toBe(400);
    expect(notTracked.body).toMatchObject({ success: false, error: { code: "SEGMENT_NOT_TRACKED", statusCode: 400 } });
    const list = await createSegment({ name: "Band list", type: "STATIC" });
    const onStatic = await call<ErrorBody>("POST", `/segments/${list.id}/compute`, { key });
    expect(onStatic.status).toBe(400);
    expect(onStatic.body.error.code).toBe("SEGMENT_NOT_TRACKED");
    expect(await eventContacts("segment.band-list.entry")).toEqual([]);
  });

  it("names the events after the segment's slug and rejects them on /v1/track", async () => {
    await addContact("s1@slug.test", { slugged: true });
    await createSegment({ name: "  Spring  Sale: 50% off!! ", condition: where("data.slugged", "equals", true), trackMembership: true });
    await waitUntil(async () => (await eventContacts("segment.spring-sale-50-off.entry")).length === 1, { timeoutMs: 10_000 });
    const names = (await call<{ names: Array<{ name: string }> }>("GET", "/events/names", { key })).body.names.map((entry) => entry.name);
    expect(names).toContain("segment.spring-sale-50-off.entry");
    const forged = await call<ErrorBody>("POST", "/v1/track", {
      key: project.publicKey,
      body: { email: "s1@slug.test", event: "segment.spring-sale-50-off.entry" },
    });
    expect(forged.status).toBe(422);
  });
});
