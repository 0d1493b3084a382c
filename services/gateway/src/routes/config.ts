import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";

/** Which integrations this deployment has; the dashboard reads it before sign-in. */
function publicConfigOf(config: Config) {
  return {
    signupsEnabled: !config.DISABLE_SIGNUPS,
    oauth: {
      github: Boolean(config.GITHUB_CLIENT_ID && config.GITHUB_CLIENT_SECRET),
      google: Boolean(config.GOOGLE_CLIENT_ID && config.GOOGLE_CLIENT_SECRET),
    },
    billing: Boolean(config.STRIPE_SECRET_KEY),
    ses: Boolean(config.SES_REGION),
    publicUrl: config.PUBLIC_URL,
  };
}

export function registerConfigRoute(app: FastifyInstance, config: Config): void {
  const body = publicConfigOf(config);
  app.get("/config", async () => body);
}
