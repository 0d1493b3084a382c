import { readFileSync } from "node:fs";
import { createLogger } from "@herald/platform";
import { Redis } from "ioredis";
import { createApiKeyCache } from "./auth/api-key-cache.js";
import { createSessionCache } from "./auth/session-cache.js";
import { loadConfig } from "./config.js";
import { build } from "./server.js";
import { createUpstreams } from "./upstreams.js";

/**
 * Prints the gateway's OpenAPI document without listening and without reaching Redis or a
 * service, for the typed client (packages/client): `pnpm --filter @herald/client run openapi`.
 */
const config = loadConfig({});
// The clients are made but never called.
process.env.INTERNAL_RPC_TOKEN ??= "never-sent: the document makes no call to a service";
const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
const upstreams = createUpstreams(config);
const redis = new Redis(config.REDIS_URL, { lazyConnect: true });
const app = await build({
  config,
  logger: createLogger({ name: "gateway", level: "silent" }),
  upstreams,
  redis,
  keys: createApiKeyCache({ lookup: (key) => upstreams.projects.resolveApiKey({ key }), ttlMs: config.API_KEY_CACHE_TTL_MS }),
  sessions: createSessionCache(config.SESSION_CACHE_TTL_MS),
  version,
});
await app.ready();
process.stdout.write(`${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
redis.disconnect();
