import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService, BillingLimits as ProtoBillingLimits } from "@herald/proto/herald/identity/v1/billing_service_pb";
import type { Billing } from "../billing/billing.js";
import type { StripeWebhooks } from "../billing/stripe-webhooks.js";
import { type BillingLimits, usageCategories } from "../domain/usage-category.js";

/** Proto3 `optional` keeps "no cap" (absent) apart from a cap of zero. */
function limitsFromProto(limits: ProtoBillingLimits | undefined): BillingLimits {
  const domain: BillingLimits = {};
  for (const category of usageCategories) {
    const value = limits?.[category];
    if (value !== undefined) domain[category] = value;
  }
  return domain;
}

export function createBillingRpc(deps: { billing: Billing; stripeWebhooks: StripeWebhooks }): ServiceImpl<typeof BillingService> {
  const { billing, stripeWebhooks } = deps;
  return {
    async getBillingLimits(request) {
      return { limits: await billing.limits(request.userId, request.projectId) };
    },

    async setBillingLimits(request) {
      return { limits: await billing.setLimits(request.userId, request.projectId, limitsFromProto(request.limits)) };
    },

    async getBillingConsumption(request) {
      const { start, end, consumption, limits } = await billing.consumption(request.userId, request.projectId);
      return { periodStart: timestampFromDate(start), periodEnd: timestampFromDate(end), consumption, limits };
    },

    async createCheckoutSession(request) {
      const url = await billing.checkout(request.userId, request.projectId, {
        priceId: request.priceId,
        successUrl: request.successUrl,
        cancelUrl: request.cancelUrl,
      });
      return { url };
    },

    async createBillingPortalSession(request) {
      return { url: await billing.portal(request.userId, request.projectId, request.returnUrl) };
    },

    async listInvoices(request) {
      const invoices = await billing.invoices(request.userId, request.projectId);
      return {
        invoices: invoices.map((invoice) => ({
          id: invoice.id,
          number: invoice.number,
          status: invoice.status,
          amountDue: invoice.amountDue,
          currency: invoice.currency,
          createdAt: timestampFromDate(invoice.createdAt),
          hostedInvoiceUrl: invoice.hostedInvoiceUrl,
        })),
      };
    },

    async handleStripeEvent(request) {
      const { outcome, projectId } = await stripeWebhooks.handle(request.payload, request.signature);
      return { outcome, projectId: projectId ?? "" };
    },
  };
}
