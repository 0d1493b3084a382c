import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { Upstreams } from "../../upstreams.js";

/** Stripe's events are small; its documentation caps a payload well under this. */
const stripeBodyLimit = 512 * 1024;

/**
 * The payment provider's callback (SPEC.md: POST /webhooks/incoming/<payment_provider>),
 * not for applications. The body goes to identity as it came, since the Stripe-Signature
 * header signs those bytes; identity verifies it (STRIPE_WEBHOOK_SECRET): no key here.
 */
export async function registerStripeWebhookRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): Promise<void> {
  const { billing } = deps.upstreams;
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // As text: valid UTF-8 (Stripe's JSON) comes back to the same bytes, and the NUL check reads it as any body.
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: stripeBodyLimit }, (_request, body, done) => done(null, body));
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      "/webhooks/incoming/stripe",
      {
        config: { auth: "none" },
        schema: {
          tags: ["Webhooks"],
          summary: "Stripe events (billing caps)",
          description:
            "Add this URL (HTTPS) as a Stripe webhook endpoint for customer.subscription.created, .updated, .deleted, invoice.paid and invoice.payment_failed, and set STRIPE_WEBHOOK_SECRET to its signing secret. 400 STRIPE_SIGNATURE_INVALID when the signature does not verify.",
          response: { 200: Type.Object({ received: Type.Boolean(), outcome: Type.String() }) },
        },
      },
      async (request) => {
        const body = Buffer.from(typeof request.body === "string" ? request.body : "", "utf8");
        const signature = request.headers["stripe-signature"];
        const { outcome } = await billing.handleStripeEvent({ payload: body, signature: typeof signature === "string" ? signature : "" });
        return { received: true, outcome };
      },
    );
  });
}
