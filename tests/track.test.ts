import { decodeEnvelope, topics } from "@herald/kafka";
import { collectMessages, createTestKafka, waitUntil } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";
import type { Contact, ErrorBody } from "./support/resources.js";

const herald = inject("herald");
const call = restClient(herald.stack.gatewayUrl);

type Tracked = { success: boolean; data: { contact: string; event: string; timestamp: string } };
type EventPage = {
  data: Array<{ id: string; name: string; contactId: string; data: Record<string, unknown> }>;
  total: number;
  hasMore: boolean;
  cursor: string;
};

describe("POST /v1/track and the event store", () => {
  let owner: SignedInUser;
  let project: CreatedProject;

  beforeAll(async () => {
    owner = await signUp(call, "tracker");
    project = await createProject(call, owner.cookie, "Tracker");
  });

  const track = (body: unknown, key = project.publicKey, headers: Record<string, string> = {}) =>
    call<Tracked & ErrorBody>("POST", "/v1/track", { key, body, headers });

  it("creates the contact and a new event on each call, with the success envelope", async () => {
    const first = await track({
      email: "Buyer@Shop.test",
      event: "order.placed",
      data: { total: 42, address: { city: "Paris" }, coupon: { value: "X1", persistent: false } },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, data: { contact: expect.any(String), event: expect.any(String) } });
    expect(Number.isNaN(Date.parse(first.body.data.timestamp))).toBe(false);
    const again = await track({ email: "buyer@shop.test", event: "order.placed" });
    expect(again.body.data.contact).toBe(first.body.data.contact);
    expect(again.body.data.event).not.toBe(first.body.data.event);

    const contact = await call<Contact>("GET", `/contacts/${first.body.data.contact}`, { key: project.secretKey });
    expect(contact.body).toMatchObject({ email: "buyer@shop.test", subscribed: true });
    // Plain objects are stored as nested data; one-off values are not stored.
    expect(contact.body.data).toEqual({ total: 42, address: { city: "Paris" } });

    const events = await call<EventPage>("GET", `/events/contact/${first.body.data.contact}`, { key: project.secretKey });
    const placed = events.body.data.filter((event) => event.name === "order.placed");
    expect(placed).toHaveLength(2);
    expect(placed.find((event) => event.id === first.body.data.event)?.data).toMatchObject({ total: 42, coupon: "X1" });
  });

  it("refuses a secret key, and reserved event names with reserved_event", async () => {
    const withSecret = await track({ email: "a@b.test", event: "x" }, project.secretKey);
    expect(withSecret.status).toBe(401);
    expect(withSecret.body.error.code).toBe("INVALID_API_KEY");
    // ...and a public key anywhere else.
    const publicElsewhere = await call<ErrorBody>("GET", "/contacts", { key: project.publicKey });
    expect(publicElsewhere.status).toBe(401);
    expect(publicElsewhere.body.error.message).toMatch(/secret key/i);

    for (const event of ["email.open", "contact.subscribed", "contact.unsubscribed", "segment.vip-users.entry", "segment.vip.exit"]) {
      const answer = await track({ email: "a@b.test", event });
      expect(answer.status).toBe(422);
      expect(answer.body.error.code).toBe("VALIDATION_ERROR");
      expect(answer.body.error.errors).toEqual([expect.objectContaining({ field: "event", code: "reserved_event" })]);
    }
    expect((await track({ event: "x" })).status).toBe(422);
  });

  it("keeps an existing contact's subscription unless told, records subscription changes, and publishes events", async () => {
    const contactEvents = await collectMessages(createTestKafka(herald.kafkaBrokers), topics.contactEvents);
    try {
      const created = await track({ email: "sub@shop.test", event: "signed.up", subscribed: false });
      const contactId = created.body.data.contact;
      expect((await call<Contact>("GET", `/contacts/${contactId}`, { key: project.secretKey })).body.subscribed).toBe(false);
      await track({ email: "sub@shop.test", event: "visited" });
      expect((await call<Contact>("GET", `/contacts/${contactId}`, { key: project.secretKey })).body.subscribed).toBe(false);
      await call("PATCH", `/contacts/${contactId}`, { key: project.secretKey, body: { subscribed: true } });

      const names = (await call<EventPage>("GET", `/events/contact/${contactId}?limit=100`, { key: project.secretKey })).body.data.map(
        (event) => event.name,
      );
      expect(names).toEqual(expect.arrayContaining(["signed.up", "visited", "contact.subscribed"]));

      await waitUntil(
        async () => {
          const types = contactEvents.messages
            .filter((message) => message.key === contactId)
            .map((message) => decodeEnvelope(message.value).type);
          return ["signed.up", "visited", "contact.subscribed"].every((type) => types.includes(type));
        },
        { timeoutMs: 30_000 },
      );
      const envelope = decodeEnvelope(contactEvents.messages.find((message) => message.key === contactId)?.value ?? Buffer.alloc(0));
      expect(envelope).toMatchObject({ projectId: project.id, contactId, source: "contacts" });
    } finally {
      await contactEvents.stop();
    }
  });

  it("answers each of many concurrent tracks on its own, failures included", async () => {
    const requests = Array.from({ length: 45 }, (_, index) => {
      if (index % 3 === 0) return { email: `burst-${index}@shop.test`, event: "contact.subscribed" };
      if (index % 3 === 1) return { email: `not-an-address-${index}`, event: "burst" };
      return { email: `burst-${index}@shop.test`, event: "burst", data: { index } };
    });
    const answers = await Promise.all(requests.map((body) => track(body)));
    answers.forEach((answer, index) => {
      if (index % 3 === 2) {
        expect(answer.status).toBe(200);
        expect(answer.body.success).toBe(true);
        return;
      }
      expect(answer.status).toBe(422);
      expect(answer.body.error.code).toBe("VALIDATION_ERROR");
      expect(answer.body.error.errors?.[0]).toMatchObject(
        index % 3 === 0 ? { field: "event", code: "reserved_event" } : { field: "email", code: "invalid_email" },
      );
    });
    const tracked = answers.filter((_, index) => index % 3 === 2);
    const contactIds = new Set(tracked.map((answer) => answer.body.data.contact));
    expect(contactIds.size).toBe(15);
    const events = await call<EventPage>("GET", "/events?name=burst&limit=100", { key: project.secretKey });
    expect(events.body.total).toBe(15);
  });

  it("lets exactly one of 50 concurrent tracks with one Idempotency-Key through", async () => {
    const key = `track-${Date.now()}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => track({ email: "idem@shop.test", event: "clicked" }, project.publicKey, { "idempotency-key": key })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    const refused = answers.filter((answer) => answer.status === 409);
    expect(refused).toHaveLength(49);
    expect(refused[0]?.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    const stats = await call<EventPage>("GET", "/events?name=clicked", { key: project.secretKey });
    expect(stats.body.total).toBe(1);
  });

  it("lists, counts, names, ranks and deletes events", async () => {
    const p = await createProject(call, owner.cookie, "Events");
    for (const [email, event] of [
      ["e1@x.test", "viewed"],
      ["e2@x.test", "viewed"],
      ["e1@x.test", "bought"],
    ] as const) {
      expect((await track({ email, event }, p.publicKey)).status).toBe(200);
    }
    const all = await call<EventPage>("GET", "/events?limit=2", { key: p.secretKey });
    expect(all.body).toMatchObject({ total: 3, hasMore: true });
    expect(all.body.data[0]?.name).toBe("bought");
    const viewed = await call<EventPage>("GET", "/events?name=viewed", { key: p.secretKey });
    expect(viewed.body.total).toBe(2);
    const names = await call<{ names: Array<{ name: string; count: number }> }>("GET", "/events/names", { key: p.secretKey });
    expect(names.body.names).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "viewed", count: 2 }),
        expect.objectContaining({ name: "bought", count: 1 }),
      ]),
    );
    const stats = await call<{ total: number; distinctNames: number; contactsWithEvents: number }>("GET", "/events/stats", {
      key: p.secretKey,
    });
    expect(stats.body).toMatchObject({ total: 3, distinctNames: 2, contactsWithEvents: 2 });
    const top = await call<{ events: Array<{ name: string; count: number }> }>("GET", "/analytics/top-events", { key: p.secretKey });
    expect(top.body.events[0]).toEqual({ name: "viewed", count: 2 });
    expect((await call("GET", "/events/viewed/usage", { key: p.secretKey })).body).toEqual({ segments: [], campaigns: [], workflows: [] });
    const deleted = await call<{ deleted: number }>("DELETE", "/events/viewed", { key: p.secretKey });
    expect(deleted.body.deleted).toBe(2);
    expect((await call<EventPage>("GET", "/events", { key: p.secretKey })).body.total).toBe(1);
    // Tracking from the dashboard follows the same rules.
    const dashboard = await call<Tracked>("POST", "/events/track", {
      cookie: owner.cookie,
      headers: { "x-project-id": p.id },
      body: { email: "e3@x.test", event: "viewed" },
    });
    expect(dashboard.status).toBe(200);
  });

  it("wipes contacts, events and fields when the project is reset", async () => {
    const p = await createProject(call, owner.cookie, "Reset me");
    await track({ email: "gone@x.test", event: "viewed", data: { plan: "pro" } }, p.publicKey);
    expect((await call("POST", `/users/@me/projects/${p.id}/reset`, { cookie: owner.cookie })).status).toBe(200);
    // The wipe runs in batches, one table after another (fields last): wait for the last one.
    const fieldNames = async () =>
      (await call<{ fields: Array<{ field: string }> }>("GET", "/contacts/fields", { key: p.secretKey })).body.fields.map(
        (field) => field.field,
      );
    await waitUntil(async () => !(await fieldNames()).includes("data.plan"), { timeoutMs: 30_000 });
    expect((await call<{ total: number }>("GET", "/contacts", { key: p.secretKey })).body.total).toBe(0);
    expect((await call<EventPage>("GET", "/events", { key: p.secretKey })).body.total).toBe(0);
  });
});
