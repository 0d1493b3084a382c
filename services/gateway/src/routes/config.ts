import { createLoadingCache } from "@herald/platform";
import type { FastifyInstance } from "fastify";
import type { Upstreams } from "../upstreams.js";

/** How long the services' answers are reused; a changed setting restarts its service anyway. */
const answerTtlMs = 30_000;

interface Integrations {
  signupsEnabled: boolean;
  oauth: { github: boolean; google: boolean };
  billing: boolean;
  ses: boolean;
}

/**
 * Which integrations this deployment has; the dashboard reads it before sign-in. Each is reported
 * by the service that holds its secret (identity: sign-ups, OAuth providers, payments; delivery:
 * its mail provider), so the gateway holds none of those secrets and cannot disagree with them.
 */
export function registerConfigRoute(app: FastifyInstance, deps: { publicUrl: string; upstreams: Upstreams }): void {
  const integrations = createLoadingCache<"integrations", Integrations>({
    max: 1,
    ttlMs: answerTtlMs,
    load: async (_key, signal) => {
      const [identity, delivery] = await Promise.all([
        deps.upstreams.accounts.getOAuthConfig({}, { signal }),
        deps.upstreams.deliveryInfo.getServiceInfo({}, { signal }),
      ]);
      const offers = (name: string) => identity.providers.some((provider) => provider.name === name && provider.enabled);
      return {
        signupsEnabled: identity.signupsEnabled,
        oauth: { github: offers("github"), google: offers("google") },
        billing: identity.billingEnabled,
        ses: delivery.mailProvider === "ses",
      };
    },
  });
  app.get("/config", async () => ({ ...(await integrations.get("integrations")), publicUrl: deps.publicUrl }));
}
