import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";

/**
 * The OpenAPI 3.1 document, built from the JSON schemas every route declares, at
 * /openapi.json, and a readable reference at /docs.
 */
export async function registerOpenApi(app: FastifyInstance, options: { publicUrl: string; version: string }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Herald API",
        version: options.version,
        description: "Contacts, transactional email, events, templates, campaigns, segments and workflows. See docs/api-decisions.md.",
      },
      servers: [{ url: options.publicUrl }],
      components: {
        securitySchemes: {
          secretKey: { type: "http", scheme: "bearer", description: "Project secret key, sk_…" },
          publicKey: { type: "http", scheme: "bearer", description: "Project public key, pk_… (POST /v1/track only)" },
          session: { type: "apiKey", in: "cookie", name: "herald_session", description: "Dashboard session (POST /auth/login)" },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { docExpansion: "list", deepLinking: true } });
  app.get("/openapi.json", { schema: { hide: true }, config: { auth: "none" } }, async () => app.swagger());
}
