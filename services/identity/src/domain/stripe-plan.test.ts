import { describe, expect, it } from "vitest";
import { capsOfPlanChange, limitsOfPlan, planChangeOf } from "./stripe-plan.js";

const prices = new Map([["price_starter", limitsOfPlan({ transactional: 1000, campaigns: null })]]);
const lapsed = limitsOfPlan({ transactional: 0, campaigns: 0, workflows: 0, inbound: 0 });

const subscription = (status: string, price = "price_starter") => ({
  customer: "cus_1",
  status,
  metadata: { herald_project_id: "p-1" },
  items: { data: [{ price: { id: price } }] },
});

describe("Stripe plans", () => {
  it("reads a subscription's customer, project hint, prices and whether it pays", () => {
    expect(planChangeOf("customer.subscription.updated", subscription("active"))).toEqual({
      customerId: "cus_1",
      projectIdHint: "p-1",
      priceIds: ["price_starter"],
      paying: true,
    });
    expect(planChangeOf("customer.subscription.updated", subscription("past_due"))?.paying).toBe(false);
    expect(planChangeOf("customer.subscription.deleted", subscription("active"))?.paying).toBe(false);
    expect(planChangeOf("customer.created", { id: "cus_1" })).toBeUndefined();
  });

  it("reads an invoice's prices from its lines, new pricing shape and old", () => {
    const invoice = {
      customer: { id: "cus_2" },
      parent: { subscription_details: { metadata: { herald_project_id: "p-2" } } },
      lines: { data: [{ pricing: { price_details: { price: "price_new" } } }, { price: { id: "price_old" } }] },
    };
    expect(planChangeOf("invoice.paid", invoice)).toEqual({
      customerId: "cus_2",
      projectIdHint: "p-2",
      priceIds: ["price_new", "price_old"],
      paying: true,
    });
    expect(planChangeOf("invoice.payment_failed", invoice)?.paying).toBe(false);
  });

  it("gives the price's caps while paying, the lapsed caps otherwise, and nothing for a price it does not know", () => {
    const paying = planChangeOf("customer.subscription.created", subscription("trialing"));
    expect(paying && capsOfPlanChange(paying, prices, lapsed)).toEqual({ limits: { transactional: 1000n }, priceId: "price_starter" });
    const ended = planChangeOf("customer.subscription.deleted", subscription("canceled"));
    expect(ended && capsOfPlanChange(ended, prices, lapsed)).toEqual({ limits: lapsed });
    const unknown = planChangeOf("customer.subscription.updated", subscription("active", "price_other"));
    expect(unknown && capsOfPlanChange(unknown, prices, lapsed)).toBeUndefined();
  });
});
