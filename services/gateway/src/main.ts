import { readFileSync } from "node:fs";
import { createKafka, kafkaConnectionOf } from "@herald/kafka";
import { createLogger, createMetrics, exitOnStartupError, onShutdown, startTelemetry } from "@herald/platform";
import { Redis } from "ioredis";
import { createApiKeyCache } from "./auth/api-key-cache.js";
import { createLifecycleListener } from "./auth/lifecycle-listener.js";
import { createSessionCache } from "./auth/session-cache.js";
import { loadConfig } from "./config.js";
import { build } from "./server.js";
import { createUpstreams } from "./upstreams.js";

const name = "gateway";
try {
  const config = loadConfig();
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  const telemetry = startTelemetry({ serviceName: name });
  const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  const upstreams = createUpstreams(config);
  const redis = new Redis(config.REDIS_URL, {
    maxRetriesPerRequest: 2,
    enableOfflineQueue: false,
    // Every request makes a rate-limit call: commands of one event-loop turn go out in one write.
    enableAutoPipelining: true,
  });
  const keys = createApiKeyCache({ lookup: (key) => upstreams.projects.resolveApiKey({ key }), ttlMs: config.API_KEY_CACHE_TTL_MS });
  const sessions = createSessionCache(config.SESSION_CACHE_TTL_MS);
  const lifecycle = createLifecycleListener({
    kafka: createKafka({ clientId: name, ...kafkaConnectionOf(config) }),
    logger,
    keys,
    sessions,
  });
  const metrics = createMetrics({ port: config.METRICS_PORT, logger });
  const app = await build({ config, logger, upstreams, redis, keys, sessions, version, metrics });
  await app.listen({ port: config.GATEWAY_PORT, host: config.LISTEN_HOST });
  await metrics.listen(config.LISTEN_HOST);
  lifecycle.start();
  onShutdown(logger, [
    () => app.close(),
    () => lifecycle.stop(),
    async () => void redis.disconnect(),
    () => metrics.close(),
    () => telemetry.shutdown(),
  ]);
} catch (error) {
  exitOnStartupError(name, error);
}
