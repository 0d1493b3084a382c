import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { isProjectScoped, minimumRoleOf } from "../auth/roles.js";

/**
 * The OpenAPI 3.1 document, built from the JSON schemas every route declares, at
 * /openapi.json, and a readable reference at /docs.
 */
export async function registerOpenApi(app: FastifyInstance, options: { publicUrl: string; version: string }): Promise<void> {
  // The role matrix on each project-scoped operation, as `x-minimum-role` (auth/roles.ts), keyed "METHOD /openapi/{path}".
  const minimumRoles = new Map<string, string>();
  app.addHook("onRoute", (route) => {
    if (!isProjectScoped(route.config?.auth, route.url)) return;
    const path = route.url.replace(/:(\w+)/g, "{$1}");
    for (const method of [route.method].flat()) minimumRoles.set(`${method.toLowerCase()} ${path}`, minimumRoleOf(method, route.url));
  });
  await app.register(swagger, {
    // A schema added with app.addSchema is the component named by its $id (EditorSource), not "def-0".
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`) },
    transformObject: (documentObject) => {
      const document = "openapiObject" in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      for (const [path, operations] of Object.entries(document.paths ?? {})) {
        for (const [method, operation] of Object.entries(operations as Record<string, Record<string, unknown>>)) {
          const role = minimumRoles.get(`${method} ${path}`);
          if (role) operation["x-minimum-role"] = role;
        }
      }
      return document;
    },
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
