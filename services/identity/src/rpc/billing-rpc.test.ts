import { Code } from "@connectrpc/connect";
import { errorDetailOf } from "@herald/errors";
import { Role } from "@herald/proto/herald/identity/v1/resources_pb";
import { type FakeHttpServer, startFakeHttpServer } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createStripePayments } from "../billing/stripe-payments.js";
import {
  expectFailure,
  type IdentityClients,
  type IdentityHarness,
  signUpVerified,
  startIdentity,
} from "../test-support/identity-harness.js";

describe("billing", () => {
  let identity: IdentityHarness;
  let stripe: FakeHttpServer;
  let paying: IdentityClients;
  let customers = 0;

  beforeAll(async () => {
    identity = await startIdentity(inject("herald"));
    // The part of Stripe's API that billing uses, answered by a local server through the official client.
    stripe = await startFakeHttpServer((request) => {
      if (request.headers.authorization !== "Bearer sk_test_herald")
        return { status: 401, body: { error: { type: "invalid_request_error", message: "Invalid API Key" } } };
      if (request.method === "POST" && request.path === "/v1/customers") {
        customers += 1;
        return { status: 200, body: { id: `cus_${customers}`, object: "customer" } };
      }
      if (request.method === "POST" && request.path === "/v1/checkout/sessions") {
        if (request.body.get("line_items[0][price]") === "price_missing") {
          return { status: 400, body: { error: { type: "invalid_request_error", message: "No such price: 'price_missing'" } } };
        }
        return { status: 200, body: { id: "cs_1", object: "checkout.session", url: "https://checkout.stripe.test/cs_1" } };
      }
      if (request.method === "POST" && request.path === "/v1/billing_portal/sessions") {
        return { status: 200, body: { id: "bps_1", object: "billing_portal.session", url: "https://billing.stripe.test/bps_1" } };
      }
      if (request.method === "GET" && request.path === "/v1/invoices") {
        const invoice = {
          id: "in_1",
          object: "invoice",
          number: "HER-0001",
          status: "paid",
          amount_due: 2900,
          currency: "usd",
          created: 1_790_000_000,
          hosted_invoice_url: "https://invoice.stripe.test/in_1",
        };
        return { status: 200, body: { object: "list", url: "/v1/invoices", has_more: false, data: [invoice] } };
      }
      return { status: 404, body: { error: { type: "invalid_request_error", message: "Unrecognized request URL" } } };
    });
    paying = await identity.withConfig({}, createStripePayments({ secretKey: "sk_test_herald", apiUrl: stripe.url }));
  });

  afterAll(async () => {
    await identity?.stop();
    await stripe?.close();
  });

  async function projectWithMember() {
    const owner = await signUpVerified(identity);
    const member = await signUpVerified(identity);
    const { project } = await identity.projects.createProject({ userId: owner.user.id, name: "Billing Co" });
    const projectId = project?.id ?? "";
    await identity.projects.addMember({ userId: owner.user.id, projectId, email: member.email, role: Role.MEMBER });
    return { owner: owner.user.id, member: member.user.id, projectId };
  }

  it("keeps per-category caps, replacing them whole, and refuses negative ones", async () => {
    const { owner, member, projectId } = await projectWithMember();
    const none = (await identity.billing.getBillingLimits({ userId: member, projectId })).limits;
    expect([none?.transactional, none?.campaigns, none?.workflows, none?.inbound]).toEqual([undefined, undefined, undefined, undefined]);
    const set = await identity.billing.setBillingLimits({ userId: owner, projectId, limits: { transactional: 1000n, campaigns: 0n } });
    expect(set.limits).toMatchObject({ transactional: 1000n, campaigns: 0n });
    expect(set.limits?.workflows).toBeUndefined();
    await identity.billing.setBillingLimits({ userId: owner, projectId, limits: { inbound: 5n } });
    const read = (await identity.billing.getBillingLimits({ userId: member, projectId })).limits;
    expect([read?.transactional, read?.campaigns, read?.workflows, read?.inbound]).toEqual([undefined, undefined, undefined, 5n]);

    const invalid = await expectFailure(
      identity.billing.setBillingLimits({ userId: owner, projectId, limits: { workflows: -1n, inbound: -2n } }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
    expect(errorDetailOf(invalid)?.fieldViolations.map((v) => [v.field, v.code])).toEqual([
      ["limits.workflows", "too_small"],
      ["limits.inbound", "too_small"],
    ]);
    await expectFailure(
      identity.billing.setBillingLimits({ userId: member, projectId, limits: {} }),
      Code.PermissionDenied,
      "INSUFFICIENT_ROLE",
    );
  });

  it("reports the current UTC month's consumption, zero before anything is sent", async () => {
    const { member, projectId } = await projectWithMember();
    const consumption = await identity.billing.getBillingConsumption({ userId: member, projectId });
    expect(consumption.consumption).toMatchObject({ transactional: 0n, campaigns: 0n, workflows: 0n, inbound: 0n });
    const now = new Date();
    expect(Number(consumption.periodStart?.seconds) * 1000).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    expect(Number(consumption.periodEnd?.seconds) * 1000).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  });

  it("answers BILLING_DISABLED for payments when no Stripe key is set", async () => {
    const { owner, projectId } = await projectWithMember();
    const request = { userId: owner, projectId };
    const disabled = await expectFailure(
      identity.billing.createCheckoutSession({
        ...request,
        priceId: "price_1",
        successUrl: "https://a.test/ok",
        cancelUrl: "https://a.test/no",
      }),
      Code.FailedPrecondition,
      "BILLING_DISABLED",
    );
    expect(disabled.rawMessage).toBe("Billing is not enabled on this deployment");
    await expectFailure(
      identity.billing.createBillingPortalSession({ ...request, returnUrl: "https://a.test" }),
      Code.FailedPrecondition,
      "BILLING_DISABLED",
    );
    await expectFailure(identity.billing.listInvoices(request), Code.FailedPrecondition, "BILLING_DISABLED");
  });

  it("checks out through Stripe with one customer per project, then opens the portal and lists invoices", async () => {
    const { owner, member, projectId } = await projectWithMember();
    const checkout = {
      userId: owner,
      projectId,
      priceId: "price_pro",
      successUrl: "https://app.test/ok",
      cancelUrl: "https://app.test/cancel",
    };
    expect((await paying.billing.listInvoices({ userId: owner, projectId })).invoices).toEqual([]);
    await expectFailure(
      paying.billing.createBillingPortalSession({ userId: owner, projectId, returnUrl: "https://app.test" }),
      Code.FailedPrecondition,
      "BILLING_NOT_SET_UP",
    );
    expect((await paying.billing.createCheckoutSession(checkout)).url).toBe("https://checkout.stripe.test/cs_1");
    expect((await paying.billing.createCheckoutSession(checkout)).url).toBe("https://checkout.stripe.test/cs_1");
    const customerCalls = stripe.requests.filter((request) => request.path === "/v1/customers");
    expect(customerCalls).toHaveLength(1);
    expect(customerCalls[0]?.body.get("metadata[herald_project_id]")).toBe(projectId);
    const session = stripe.requests.find((request) => request.path === "/v1/checkout/sessions");
    expect(Object.fromEntries(session?.body ?? [])).toMatchObject({
      mode: "subscription",
      customer: "cus_1",
      "line_items[0][price]": "price_pro",
    });

    expect((await paying.billing.createBillingPortalSession({ userId: owner, projectId, returnUrl: "https://app.test" })).url).toBe(
      "https://billing.stripe.test/bps_1",
    );
    const [invoice] = (await paying.billing.listInvoices({ userId: owner, projectId })).invoices;
    expect(invoice).toMatchObject({ id: "in_1", number: "HER-0001", status: "paid", amountDue: 2900n, currency: "usd" });
    expect(stripe.requests.find((request) => request.path === "/v1/invoices")?.query.get("customer")).toBe("cus_1");

    await expectFailure(
      paying.billing.createCheckoutSession({ ...checkout, priceId: "price_missing" }),
      Code.InvalidArgument,
      "BILLING_REQUEST_REJECTED",
    );
    await expectFailure(
      paying.billing.createCheckoutSession({ ...checkout, successUrl: "nope" }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
    await expectFailure(paying.billing.createCheckoutSession({ ...checkout, userId: member }), Code.PermissionDenied, "INSUFFICIENT_ROLE");
  });
});
