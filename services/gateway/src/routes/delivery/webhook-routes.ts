import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import type { Upstreams } from "../../upstreams.js";

/** Amazon SNS messages are at most 256 KB. */
const snsBodyLimit = 256 * 1024;

/**
 * Inbound callbacks from mail providers (SPEC.md: POST /webhooks/<email_infrastructure>),
 * not for applications. POST /webhooks/ses takes the Amazon SNS messages of the topics SES
 * publishes its events to. SNS posts JSON as text/plain; either way the body goes to
 * delivery as it came, which checks the topic and the signature: no key here.
 */
export async function registerWebhookRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): Promise<void> {
  const { providerEvents } = deps.upstreams;
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(["application/json", "text/plain"], { parseAs: "string", bodyLimit: snsBodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      "/webhooks/ses",
      {
        config: { auth: "none" },
        schema: {
          tags: ["Webhooks"],
          summary: "Amazon SES events through SNS",
          description:
            "Subscribe this URL (HTTPS) to the SNS topics of SES_SNS_TOPIC_ARNS. Subscriptions are confirmed; bounces, complaints, deliveries and delays are recorded on their emails.",
          body: Type.String(),
          response: { 200: Type.Object({ outcome: Type.String() }) },
        },
      },
      async (request) => {
        const { outcome } = await providerEvents.handleSesNotification({ body: request.body });
        return { outcome };
      },
    );
  });
}
