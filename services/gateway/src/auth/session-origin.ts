import type { FastifyRequest } from "fastify";
import { HttpProblem } from "../http/errors.js";

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);
const jsonType = /^application\/json\s*(;|$)/i;

const crossSite = (message: string) => new HttpProblem({ statusCode: 403, code: "CROSS_SITE_REQUEST", message });

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/**
 * A change that a session cookie authorizes must come from the dashboard's own pages, since
 * the browser attaches the cookie to other sites' requests too (SameSite=Lax still lets some
 * through). Browsers name the page in `Origin`: it must be the public URL's or the request's
 * own host. Without `Origin` the body must be JSON, which a cross-site form cannot send
 * without a CORS preflight that the gateway never grants.
 */
export function assertSameSite(request: FastifyRequest, publicUrl: string): void {
  if (safeMethods.has(request.method)) return;
  const origin = request.headers.origin;
  if (origin !== undefined) {
    const host = hostOf(origin);
    if (host !== undefined && (host === new URL(publicUrl).host || host === request.headers.host)) return;
    throw crossSite("This request comes from another site's page; changes need the dashboard's own origin");
  }
  if (jsonType.test(request.headers["content-type"] ?? "")) return;
  throw crossSite("A change made with a session needs a JSON body (Content-Type: application/json) or the Origin header");
}
