import { createLoadingCache } from "@herald/platform";
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import type { Upstreams } from "../upstreams.js";

/** How long identity's answer is reused; a changed DISABLE_SIGNUPS restarts identity anyway. */
const identityAnswerTtlMs = 30_000;

/** Which integrations this deployment has; the dashboard reads it before sign-in. */
function publicConfigOf(config: Config, signupsEnabled: boolean) {
  return {
    signupsEnabled,
    oauth: {
      github: Boolean(config.GITHUB_CLIENT_ID && config.GITHUB_CLIENT_SECRET),
      google: Boolean(config.GOOGLE_CLIENT_ID && config.GOOGLE_CLIENT_SECRET),
    },
    billing: Boolean(config.STRIPE_SECRET_KEY),
    ses: Boolean(config.SES_REGION),
    publicUrl: config.PUBLIC_URL,
  };
}

/** `signupsEnabled` is what identity enforces (its DISABLE_SIGNUPS), asked of identity, not a flag of the gateway's own. */
export function registerConfigRoute(app: FastifyInstance, deps: { config: Config; upstreams: Upstreams }): void {
  const signups = createLoadingCache<"signups", boolean>({
    max: 1,
    ttlMs: identityAnswerTtlMs,
    load: async (_key, signal) => (await deps.upstreams.accounts.getOAuthConfig({}, { signal })).signupsEnabled,
  });
  app.get("/config", async () => publicConfigOf(deps.config, await signups.get("signups")));
}
