import { topics } from "@herald/kafka";
import { ContactChangeSchema } from "@herald/proto/herald/events/v1/contact_change_pb";
import { testDnsClient, waitUntil } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { payloadIn, type ReceivedFact, watchTopic } from "./support/event-facts.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";
import type { Contact } from "./support/resources.js";

const { stack, dns: dnsServer, kafkaBrokers } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

/**
 * contacts' facts on herald.contact-changes.v1 (the webhooks' contact.created, contact.updated and
 * contact.deleted), read by a consumer of the test's own from the moment before each action.
 */
describe("contact changes on herald.contact-changes.v1", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let key: string;
  let topic: Awaited<ReturnType<typeof watchTopic>>;

  beforeAll(async () => {
    owner = await signUp(call, "facts-contacts");
    project = await createProject(call, owner.cookie, "Contact facts");
    key = project.secretKey;
    topic = await watchTopic({ brokers: kafkaBrokers, topic: topics.contactChanges, projectId: project.id });
  });

  afterAll(async () => {
    await topic?.stop();
  });

  const change = (fact: ReceivedFact) => {
    const payload = payloadIn(fact, ContactChangeSchema);
    return {
      type: fact.envelope.type,
      email: payload.email,
      subscribed: payload.subscribed,
      data: payload.data ?? {},
      changedFields: payload.changedFields,
    };
  };
  /** The facts of one contact so far, in the order Kafka holds them (one key, one partition). */
  const factsOf = (contactId: string) => topic.received.filter((fact) => fact.envelope.contactId === contactId).map(change);
  const factCount = (contactId: string, count: number) => waitUntil(async () => factsOf(contactId).length >= count, { timeoutMs: 60_000 });
  const track = async (email: string, data: Record<string, unknown>) => {
    const answer = await call<{ data: { contact: string } }>("POST", "/v1/track", {
      key: project.publicKey,
      body: { email, event: "visited", data },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data.contact;
  };

  it("POST /contacts, /v1/track and a CSV import each create a contact with a contact.created, keyed by the contact", async () => {
    const posted = await call<Contact>("POST", "/contacts", {
      key,
      body: { email: uniqueEmail("posted"), subscribed: false, data: { plan: "free", seats: 3 } },
    });
    expect(posted.status).toBe(201);
    const created = await topic.next((fact) => fact.envelope.contactId === posted.body.id);
    expect(created.key).toBe(posted.body.id);
    expect(created.envelope.source).toBe("contacts");
    expect(change(created)).toEqual({
      type: "contact.created",
      email: posted.body.email,
      subscribed: false,
      data: { plan: "free", seats: 3 },
      changedFields: [],
    });

    const trackedEmail = uniqueEmail("tracked");
    const tracked = await track(trackedEmail, { source: "ad", nested: { list: [1, "two", null, true] } });
    await factCount(tracked, 1);
    expect(factsOf(tracked)).toEqual([
      {
        type: "contact.created",
        email: trackedEmail,
        subscribed: true,
        data: { source: "ad", nested: { list: [1, "two", null, true] } },
        changedFields: [],
      },
    ]);

    const importedEmail = uniqueEmail("imported");
    const form = new FormData();
    form.append("file", new Blob([`email,city\n${importedEmail},Lyon\n`], { type: "text/csv" }), "contacts.csv");
    const upload = await fetch(`${stack.gatewayUrl}/contacts/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(upload.status).toBe(202);
    const imported = await topic.next((fact) => change(fact).email === importedEmail);
    expect(change(imported)).toMatchObject({ type: "contact.created", subscribed: true, data: { city: "Lyon" } });
  }, 120_000);

  it("/v1/send and the dashboard's /events/track create their contacts with a contact.created too", async () => {
    const { domain } = await verifiedDomain(call, dns, key, "facts-contacts");
    const to = uniqueEmail("sent-to");
    const sent = await call("POST", "/v1/send", {
      key,
      body: { to, from: `hello@${domain}`, subject: "Hello", body: "<p>Hello</p>", data: { order: "A-1" } },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(change(await topic.next((fact) => change(fact).email === to))).toMatchObject({ type: "contact.created", email: to });

    const trackedEmail = uniqueEmail("dashboard-tracked");
    const tracked = await call("POST", "/events/track", {
      cookie: owner.cookie,
      headers: { "x-project-id": project.id },
      body: { email: trackedEmail, event: "viewed", data: { page: "pricing" } },
    });
    expect(tracked.status, JSON.stringify(tracked.body)).toBe(200);
    expect(change(await topic.next((fact) => change(fact).email === trackedEmail))).toEqual({
      type: "contact.created",
      email: trackedEmail,
      subscribed: true,
      data: { page: "pricing" },
      changedFields: [],
    });
  }, 120_000);

  it("a change of data, subscription or email is a contact.updated naming what changed; a write that changes nothing emits nothing", async () => {
    const email = uniqueEmail("changing");
    const contactId = await track(email, { plan: "free", city: "Paris" });
    await factCount(contactId, 1);

    // Writes that change nothing: the same data through /v1/track, POST /contacts and PATCH, and an empty PATCH.
    await track(email, { plan: "free" });
    expect((await call("POST", "/contacts", { key, body: { email, data: { city: "Paris" } } })).status).toBe(200);
    expect((await call("PATCH", `/contacts/${contactId}`, { key, body: { data: { plan: "free" }, subscribed: true } })).status).toBe(200);
    expect((await call("PATCH", `/contacts/${contactId}`, { key, body: {} })).status).toBe(200);

    // Then changes, each one event after those no-ops (one contact: one partition, in order).
    await track(email, { plan: "pro", city: "Paris" });
    expect((await call("PATCH", `/contacts/${contactId}`, { key, body: { subscribed: false, data: { city: null } } })).status).toBe(200);
    const newEmail = uniqueEmail("renamed");
    expect((await call("PATCH", `/contacts/${contactId}`, { key, body: { email: newEmail } })).status).toBe(200);
    await factCount(contactId, 4);
    expect(factsOf(contactId)).toEqual([
      { type: "contact.created", email, subscribed: true, data: { plan: "free", city: "Paris" }, changedFields: [] },
      { type: "contact.updated", email, subscribed: true, data: { plan: "pro", city: "Paris" }, changedFields: ["plan"] },
      { type: "contact.updated", email, subscribed: false, data: { plan: "pro" }, changedFields: ["subscribed", "city"] },
      { type: "contact.updated", email: newEmail, subscribed: false, data: { plan: "pro" }, changedFields: ["email"] },
    ]);

    // A later no-op, then a marker change: the marker is the only event after the rename.
    await track(newEmail, { plan: "pro" });
    await track(newEmail, { marker: 1 });
    await factCount(contactId, 5);
    expect(factsOf(contactId).slice(4)).toEqual([
      { type: "contact.updated", email: newEmail, subscribed: false, data: { plan: "pro", marker: 1 }, changedFields: ["marker"] },
    ]);
  }, 120_000);

  it("DELETE and a bulk delete are contact.deleted, with the contact as it was; a bulk subscribe is contact.updated", async () => {
    const deleted = await call<Contact>("POST", "/contacts", { key, body: { email: uniqueEmail("deleted"), data: { plan: "gone" } } });
    await factCount(deleted.body.id, 1);
    expect((await call("DELETE", `/contacts/${deleted.body.id}`, { key })).status).toBe(204);
    await factCount(deleted.body.id, 2);
    expect(factsOf(deleted.body.id)[1]).toEqual({
      type: "contact.deleted",
      email: deleted.body.email,
      subscribed: true,
      data: { plan: "gone" },
      changedFields: [],
    });

    const bulk = await Promise.all(
      ["bulk-a", "bulk-b"].map(
        async (label) => (await call<Contact>("POST", "/contacts", { key, body: { email: uniqueEmail(label), subscribed: false } })).body,
      ),
    );
    const ids = bulk.map((contact) => contact.id);
    // A bulk subscribe changes the subscription: contact.updated; then the bulk delete: contact.deleted.
    expect((await call("POST", "/contacts/bulk-subscribe", { key, body: { ids } })).status).toBe(202);
    for (const contact of bulk) await factCount(contact.id, 2);
    expect((await call("POST", "/contacts/bulk-delete", { key, body: { ids } })).status).toBe(202);
    for (const contact of bulk) {
      await factCount(contact.id, 3);
      expect(factsOf(contact.id).map((fact) => [fact.type, fact.email, fact.subscribed, fact.changedFields])).toEqual([
        ["contact.created", contact.email, false, []],
        ["contact.updated", contact.email, true, ["subscribed"]],
        ["contact.deleted", contact.email, true, []],
      ]);
    }
  }, 120_000);
});
