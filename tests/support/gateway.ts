import { createKafka } from "@herald/kafka";
import { createLogger } from "@herald/platform";
import { Redis } from "ioredis";
import { createApiKeyCache } from "../../services/gateway/src/auth/api-key-cache.js";
import { createLifecycleListener } from "../../services/gateway/src/auth/lifecycle-listener.js";
import { createSessionCache } from "../../services/gateway/src/auth/session-cache.js";
import { loadConfig } from "../../services/gateway/src/config.js";
import { build } from "../../services/gateway/src/server.js";
import { createUpstreams } from "../../services/gateway/src/upstreams.js";

export type ServiceUrls = Record<"identity" | "contacts" | "delivery" | "campaigns" | "automation" | "webhooks", string>;

/** A random client address in 10/8, the remoteAddress of an injected request: each test spends rate-limit and backoff budgets of its own. */
export const clientAddress = (): string =>
  `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

/**
 * An in-process gateway over real services, for tests that need to reach inside it
 * (its routes, its caches) or to point it at services of their own.
 */
export async function createTestGateway(options: {
  serviceUrls: ServiceUrls;
  redisUrl: string;
  env?: NodeJS.ProcessEnv;
  /** Follow herald.project-lifecycle.v1 on these brokers, as a replica does; resolves once it receives events. */
  kafkaBrokers?: string[];
}) {
  const config = loadConfig({
    IDENTITY_URL: options.serviceUrls.identity,
    CONTACTS_URL: options.serviceUrls.contacts,
    DELIVERY_URL: options.serviceUrls.delivery,
    CAMPAIGNS_URL: options.serviceUrls.campaigns,
    AUTOMATION_URL: options.serviceUrls.automation,
    WEBHOOKS_URL: options.serviceUrls.webhooks,
    REDIS_URL: options.redisUrl,
    // Tests sign up from 127.0.0.1 over and over, and the shared Redis remembers the hour across runs;
    // tests/gateway-signup-limit.test.ts sets its own.
    SIGNUP_RATE_PER_HOUR: "1000000",
    ...options.env,
  });
  const upstreams = createUpstreams(config);
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
  const keys = createApiKeyCache({ lookup: (key) => upstreams.projects.resolveApiKey({ key }), ttlMs: config.API_KEY_CACHE_TTL_MS });
  const sessions = createSessionCache(config.SESSION_CACHE_TTL_MS);
  const logger = createLogger({ name: "gateway", level: "silent" });
  const app = await build({ config, logger, upstreams, redis, keys, sessions, version: "test" });
  const lifecycle = options.kafkaBrokers
    ? createLifecycleListener({
        kafka: createKafka({ clientId: "test-gateway", brokers: options.kafkaBrokers }),
        logger,
        keys,
        sessions,
      })
    : undefined;
  lifecycle?.start();
  await lifecycle?.joined();
  return {
    app,
    keys,
    redis,
    async close() {
      await lifecycle?.stop();
      await app.close();
      redis.disconnect();
    },
  };
}
