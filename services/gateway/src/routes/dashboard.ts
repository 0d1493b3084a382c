import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import helmet from "@fastify/helmet";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

/** Where the dashboard's built files are (packages/dashboard/dist, a dependency of the gateway). */
const dashboardRoot = dirname(fileURLToPath(import.meta.resolve("@herald/dashboard/dist/index.html")));

/**
 * What the dashboard's answers carry (helmet's defaults besides): scripts only from its own files, no
 * framing by any site, no MIME sniffing, no Referer. Styles may be inline and images from anywhere
 * because the template preview (an iframe with srcdoc, which inherits this policy) shows an email's
 * own HTML; its sandbox="" keeps its scripts off.
 */
const dashboardSecurityHeaders = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", "data:", "https:", "http:"],
      fontSrc: ["'self'", "data:"],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  referrerPolicy: { policy: "no-referrer" as const },
};

/**
 * The web dashboard under /app/ (packages/dashboard): its files, with index.html for every
 * path of the app; GET / sends a browser there. The links in account emails point at the API's
 * paths; a browser that follows one lands on the dashboard's screen for it.
 */
export async function registerDashboard(app: FastifyInstance): Promise<void> {
  // Encapsulated, so that the headers go with the dashboard's answers and not with the API's JSON.
  await app.register(async (scope) => {
    await scope.register(helmet, dashboardSecurityHeaders);
    await scope.register(fastifyStatic, {
      root: dashboardRoot,
      prefix: "/app/",
      // Vite names every asset by its content hash: cache them for a year; index.html never.
      setHeaders(reply, path) {
        reply.header("cache-control", path.endsWith("index.html") ? "no-cache" : "public, max-age=31536000, immutable");
      },
      schemaHide: true,
    });
    const hidden = { schema: { hide: true }, config: { auth: "none" } } as const;
    scope.get("/", hidden, (_request, reply) => reply.redirect("/app/"));
    scope.get("/app", hidden, (_request, reply) => reply.redirect("/app/"));
    for (const screen of ["verify-email", "reset-password"]) {
      scope.get<{ Querystring: { token?: string } }>(`/auth/${screen}`, hidden, (request, reply) => {
        const token = typeof request.query.token === "string" ? request.query.token.slice(0, 512) : "";
        return reply.redirect(`/app/#/${screen}?token=${encodeURIComponent(token)}`);
      });
    }
  });
}
