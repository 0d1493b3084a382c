import { DomainError } from "@herald/errors";
import Stripe from "stripe";
import type { InvoiceSummary, Payments } from "./payments.js";

/** Stripe's refusals become the caller's errors; anything else from Stripe means "try later". */
async function callStripe<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError) {
      throw new DomainError("invalid-argument", "BILLING_REQUEST_REJECTED", `The payment provider refused the request: ${error.message}`, {
        cause: error,
      });
    }
    if (error instanceof Stripe.errors.StripeError) {
      throw new DomainError(
        "unavailable",
        "BILLING_PROVIDER_UNAVAILABLE",
        "The payment provider could not complete the request; try again",
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

function requireUrl(url: string | null | undefined): string {
  if (!url) throw new DomainError("unavailable", "BILLING_PROVIDER_UNAVAILABLE", "The payment provider returned no URL; try again");
  return url;
}

/** Payments through Stripe's official client; apiUrl points elsewhere only for stripe-mock or tests. */
export function createStripePayments(options: { secretKey: string; apiUrl: string; timeoutMs?: number }): Payments {
  const api = new URL(options.apiUrl);
  const stripe = new Stripe(options.secretKey, {
    host: api.hostname,
    port: api.port || (api.protocol === "https:" ? 443 : 80),
    protocol: api.protocol === "http:" ? "http" : "https",
    timeout: options.timeoutMs ?? 20_000,
    maxNetworkRetries: 2,
    telemetry: false,
  });
  return {
    createCustomer: (project) =>
      callStripe(async () => {
        const customer = await stripe.customers.create(
          { name: project.name, metadata: { herald_project_id: project.id } },
          // Two concurrent first checkouts of one project get one customer back.
          { idempotencyKey: `herald-customer-${project.id}` },
        );
        return customer.id;
      }),
    createCheckoutSession: (session) =>
      callStripe(async () => {
        const created = await stripe.checkout.sessions.create({
          mode: "subscription",
          customer: session.customerId,
          client_reference_id: session.projectId,
          // Lets a webhook event find its project even before the customer is known here.
          subscription_data: { metadata: { herald_project_id: session.projectId } },
          line_items: [{ price: session.priceId, quantity: 1 }],
          success_url: session.successUrl,
          cancel_url: session.cancelUrl,
        });
        return requireUrl(created.url);
      }),
    createPortalSession: (session) =>
      callStripe(async () => {
        const created = await stripe.billingPortal.sessions.create({ customer: session.customerId, return_url: session.returnUrl });
        return requireUrl(created.url);
      }),
    listInvoices: (customerId) =>
      callStripe(async () => {
        const page = await stripe.invoices.list({ customer: customerId, limit: 100 });
        return page.data.map(
          (invoice): InvoiceSummary => ({
            id: invoice.id ?? "",
            number: invoice.number ?? "",
            status: invoice.status ?? "",
            amountDue: BigInt(invoice.amount_due),
            currency: invoice.currency,
            createdAt: new Date(invoice.created * 1000),
            hostedInvoiceUrl: invoice.hosted_invoice_url ?? "",
          }),
        );
      }),
  };
}
