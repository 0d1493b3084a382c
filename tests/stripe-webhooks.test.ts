import { randomUUID } from "node:crypto";
import { testDnsClient, waitUntil } from "@herald/testing";
import Stripe from "stripe";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";
import { testStripeWebhookSecret } from "./support/stripe.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

type Limits = { transactional: number | null; campaigns: number | null; workflows: number | null; inbound: number | null };
const starter: Limits = { transactional: 1000, campaigns: 5000, workflows: 2000, inbound: 100 };
const growth: Limits = { transactional: 50000, campaigns: null, workflows: 100000, inbound: null };
const lapsed: Limits = { transactional: 0, campaigns: 0, workflows: 0, inbound: 0 };

/** Stripe's clock for the events of this file: each new event is a second later than the one before. */
let clock = Math.floor(Date.now() / 1000) - 3_600;

/** A Stripe event as a webhook endpoint receives it (API version 2025-03-31 and later: invoice lines carry `pricing`). */
function stripeEvent(type: string, object: Record<string, unknown>, created = ++clock) {
  return {
    id: `evt_${randomUUID().replaceAll("-", "")}`,
    object: "event",
    api_version: "2026-10-28.endive",
    created,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

const subscription = (projectId: string, price: string, status = "active") => ({
  id: `sub_${projectId.slice(0, 8)}`,
  object: "subscription",
  customer: `cus_${projectId.slice(0, 8)}`,
  status,
  metadata: { herald_project_id: projectId },
  items: { object: "list", data: [{ id: "si_1", object: "subscription_item", price: { id: price, object: "price" } }] },
});

const invoice = (projectId: string, price: string) => ({
  id: `in_${randomUUID().slice(0, 8)}`,
  object: "invoice",
  customer: `cus_${projectId.slice(0, 8)}`,
  parent: { type: "subscription_details", subscription_details: { subscription: "sub_1", metadata: { herald_project_id: projectId } } },
  lines: {
    object: "list",
    data: [{ id: "il_1", object: "line_item", pricing: { type: "price_details", price_details: { price, product: "prod_1" } } }],
  },
});

/** Posts the event as Stripe does: the JSON body, signed with the endpoint's secret by the stripe package's own helper. */
function post(event: object, secret = testStripeWebhookSecret, options: { tamper?: (payload: string) => string } = {}) {
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
  return call<{ received: boolean; outcome: string } & ErrorBody>("POST", "/webhooks/incoming/stripe", {
    rawBody: options.tamper ? options.tamper(payload) : payload,
    headers: { "stripe-signature": signature, "content-type": "application/json; charset=utf-8" },
  });
}

describe("POST /webhooks/incoming/stripe", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  const limitsPath = () => `/users/@me/projects/${project.id}/billing-limits`;
  const limits = async () => (await call<Limits>("GET", limitsPath(), { cookie: owner.cookie })).body;

  beforeAll(async () => {
    owner = await signUp(call, "stripe");
    project = await createProject(call, owner.cookie, "Paying");
  });

  it("sets the project's caps from the subscription's price, once per event id", async () => {
    const created = stripeEvent("customer.subscription.created", subscription(project.id, "price_herald_starter"));
    const answer = await post(created);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ received: true, outcome: "applied" });
    expect(await limits()).toEqual(starter);

    // The owner changes the caps; Stripe delivers the same event again: it changes nothing.
    await call("PUT", limitsPath(), { cookie: owner.cookie, body: { transactional: 7 } });
    const again = await post(created);
    expect(again.status).toBe(200);
    expect(again.body.outcome).toBe("duplicate");
    expect(await limits()).toEqual({ transactional: 7, campaigns: null, workflows: null, inbound: null });
  });

  it("answers 400 STRIPE_SIGNATURE_INVALID and changes nothing for a wrong secret, a changed payload or no signature", async () => {
    const before = await limits();
    const event = stripeEvent("customer.subscription.updated", subscription(project.id, "price_herald_growth"));
    const wrongSecret = await post(event, "whsec_someone_else");
    expect(wrongSecret.status).toBe(400);
    expect(wrongSecret.body.error.code).toBe("STRIPE_SIGNATURE_INVALID");
    const tampered = await post(event, testStripeWebhookSecret, {
      tamper: (payload) => payload.replace("price_herald_growth", "price_herald_starter"),
    });
    expect(tampered.status).toBe(400);
    expect(tampered.body.error.code).toBe("STRIPE_SIGNATURE_INVALID");
    const unsigned = await call<ErrorBody>("POST", "/webhooks/incoming/stripe", { body: event });
    expect(unsigned.status).toBe(400);
    expect(unsigned.body.error.code).toBe("STRIPE_SIGNATURE_INVALID");
    expect(await limits()).toEqual(before);

    // The same event, signed right, is new: nothing recorded its id when its signature failed.
    expect((await post(event)).body.outcome).toBe("applied");
    expect(await limits()).toEqual(growth);
  });

  it("lapses the caps when an invoice fails or the subscription ends, and restores them when an invoice is paid", async () => {
    expect((await post(stripeEvent("invoice.payment_failed", invoice(project.id, "price_herald_growth")))).body.outcome).toBe("applied");
    expect(await limits()).toEqual(lapsed);
    expect((await post(stripeEvent("invoice.paid", invoice(project.id, "price_herald_starter")))).body.outcome).toBe("applied");
    expect(await limits()).toEqual(starter);
    expect(
      (await post(stripeEvent("customer.subscription.updated", subscription(project.id, "price_herald_starter", "past_due")))).body.outcome,
    ).toBe("applied");
    expect(await limits()).toEqual(lapsed);
    expect((await post(stripeEvent("customer.subscription.updated", subscription(project.id, "price_herald_growth")))).body.outcome).toBe(
      "applied",
    );
    expect(await limits()).toEqual(growth);
    expect(
      (await post(stripeEvent("customer.subscription.deleted", subscription(project.id, "price_herald_growth", "canceled")))).body.outcome,
    ).toBe("applied");
    expect(await limits()).toEqual(lapsed);
  });

  it("never lets an older event override a newer one, and ignores unknown prices, customers and types", async () => {
    expect((await post(stripeEvent("customer.subscription.updated", subscription(project.id, "price_herald_growth")))).body.outcome).toBe(
      "applied",
    );
    const older = stripeEvent("customer.subscription.deleted", subscription(project.id, "price_herald_growth", "canceled"), clock - 10);
    expect((await post(older)).body.outcome).toBe("stale");
    expect((await post(stripeEvent("customer.subscription.updated", subscription(project.id, "price_unknown")))).body.outcome).toBe(
      "ignored",
    );
    expect(
      (await post(stripeEvent("customer.subscription.updated", subscription(randomUUID(), "price_herald_starter")))).body.outcome,
    ).toBe("ignored");
    expect((await post(stripeEvent("customer.created", { id: "cus_1", object: "customer" }))).body.outcome).toBe("ignored");
    expect(await limits()).toEqual(growth);
  });

  it("reaches the send queue: a lapsed subscription stops /v1/send with 429 BILLING_LIMIT_REACHED", async () => {
    const other = await createProject(call, owner.cookie, "Lapsing");
    const { domain } = await verifiedDomain(call, dns, other.secretKey, "lapsing");
    const send = () =>
      call<ErrorBody>("POST", "/v1/send", {
        key: other.secretKey,
        body: { to: uniqueEmail("lapsed"), from: `billing@${domain}`, subject: "Still paying?", body: "<p>Hi</p>" },
      });
    expect((await send()).status).toBe(200);
    expect(
      (await post(stripeEvent("customer.subscription.deleted", subscription(other.id, "price_herald_starter", "canceled")))).body.outcome,
    ).toBe("applied");
    let refusal: ErrorBody | undefined;
    await waitUntil(
      async () => {
        const answer = await send();
        if (answer.status === 429) refusal = answer.body;
        return answer.status === 429;
      },
      { timeoutMs: 30_000 },
    );
    expect(refusal?.error).toMatchObject({ code: "BILLING_LIMIT_REACHED", details: { category: "transactional", limit: "0" } });
  });
});
