import { isIP } from "node:net";
import {
  envPort,
  httpUrl,
  kafkaEnvironment,
  kafkaSaslCredentials,
  logLevel,
  metricsPort,
  parseConfig,
  redisUrl,
  serviceUrls,
} from "@herald/platform";
import { z } from "zod";

/** proxy-addr's names for address ranges, which Fastify accepts beside addresses and CIDRs. */
const namedRanges = new Set(["loopback", "linklocal", "uniquelocal"]);

/** An IPv4 or IPv6 address, optionally with a prefix length (`10.0.0.0/8`, `fd00::/8`), or a named range. */
function isAddressOrCidr(entry: string): boolean {
  if (namedRanges.has(entry)) return true;
  const [address = "", prefix, ...rest] = entry.split("/");
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

const positiveInt = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const configSchema = z
  .object({
    GATEWAY_PORT: envPort(8080),
    LISTEN_HOST: z.string().min(1).default("0.0.0.0"),
    METRICS_PORT: metricsPort,
    PUBLIC_URL: httpUrl.default("http://localhost:8080"),
    LOG_LEVEL: logLevel,
    REDIS_URL: redisUrl.default("redis://127.0.0.1:6379"),
    ...kafkaEnvironment,
    /** Requests per minute per project (or per client address before sign-in), across all replicas. */
    RATE_LIMIT_PER_MINUTE: positiveInt(1000, 1_000_000),
    /** Public-key (pk_) requests per minute per project and client address; the project's public-key traffic also has its own RATE_LIMIT_PER_MINUTE. */
    PUBLIC_KEY_RATE_PER_MINUTE: positiveInt(120, 1_000_000),
    /**
     * Requests per minute per client address to the links inside emails (open pixel, click redirect,
     * unsubscribe, subscribe and manage pages), counted apart from RATE_LIMIT_PER_MINUTE: a mail
     * provider's image proxy fetches for many recipients from a few addresses.
     */
    RECIPIENT_RATE_PER_MINUTE: positiveInt(6000, 1_000_000),
    /** POST /auth/signup per client address per hour. */
    SIGNUP_RATE_PER_HOUR: positiveInt(20, 1_000_000),
    /** Refused API keys and sessions per minute per client address; past it, the address gets 429 before any lookup. */
    AUTH_FAILURE_RATE_PER_MINUTE: positiveInt(100, 1_000_000),
    /** Failed password sign-ins per account, and per client address, before each further one doubles the wait (docs/security.md). */
    LOGIN_FREE_FAILURES_PER_ACCOUNT: positiveInt(5, 1000),
    LOGIN_FREE_FAILURES_PER_IP: positiveInt(20, 100_000),
    /** The first wait after the free failures, and the longest. */
    LOGIN_BACKOFF_BASE_SECONDS: positiveInt(1, 3600),
    LOGIN_BACKOFF_MAX_SECONDS: positiveInt(900, 86_400),
    /** How long an Idempotency-Key is remembered. */
    IDEMPOTENCY_TTL_HOURS: positiveInt(24, 24 * 30),
    /** How long a resolved API key is trusted without asking identity again; rotation evicts it earlier. */
    API_KEY_CACHE_TTL_MS: positiveInt(30_000, 3_600_000),
    /** How long a verified session is trusted without asking identity again; logout evicts it earlier. */
    SESSION_CACHE_TTL_MS: positiveInt(5_000, 300_000),
    /**
     * Whether X-Forwarded-For names the client: "false" (default; the peer is the client), a hop
     * count (the number of proxies in front), or a comma-separated list of the proxies' addresses
     * or CIDRs. "true" is refused: behind a proxy that appends to X-Forwarded-For, the client
     * would choose its own address, and with it the rate limits' and the sign-in backoff's keys.
     */
    TRUST_PROXY: z
      .string()
      .optional()
      .transform((value, context): false | number | string[] => {
        const trimmed = value?.trim() ?? "";
        if (trimmed === "" || trimmed === "false") return false;
        if (trimmed === "true") {
          context.addIssue({
            code: "custom",
            message:
              '"true" would let every client choose its own address through X-Forwarded-For; name the proxies\' addresses or CIDRs (comma-separated), or their number',
          });
          return z.NEVER;
        }
        if (/^\d+$/.test(trimmed)) return Number(trimmed);
        const proxies = trimmed.split(",").map((entry) => entry.trim());
        const invalid = proxies.filter((entry) => !isAddressOrCidr(entry));
        if (invalid.length > 0) {
          context.addIssue({
            code: "custom",
            message: `not an IP address, CIDR or loopback/linklocal/uniquelocal: ${invalid.map((entry) => JSON.stringify(entry)).join(", ")}`,
          });
          return z.NEVER;
        }
        return proxies;
      }),
    /** The largest image POST /uploads/image reads (the delivery service's UPLOAD_MAX_BYTES: give both the same); at most 25 MB. */
    UPLOAD_MAX_BYTES: positiveInt(5 * 1024 * 1024, 25 * 1024 * 1024),
    /** Deadline of a health probe to one service. */
    HEALTH_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).default(1_000),
    /**
     * The deployment operator's credential for `/operator/*` (re-enabling a project the reputation guard suspended):
     * `Authorization: Bearer <OPERATOR_TOKEN>`. Unset: those routes refuse every request.
     */
    OPERATOR_TOKEN: z
      .string()
      .optional()
      .transform((value) => value?.trim() || undefined)
      .refine((value) => value === undefined || value.length >= 32, "must be at least 32 characters"),
    ...serviceUrls,
  })
  .superRefine(kafkaSaslCredentials);

export type Config = z.infer<typeof configSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
