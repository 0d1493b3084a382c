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

const optionalSecret = z
  .string()
  .optional()
  .transform((value) => value || undefined);

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
    GITHUB_CLIENT_ID: optionalSecret,
    GITHUB_CLIENT_SECRET: optionalSecret,
    GOOGLE_CLIENT_ID: optionalSecret,
    GOOGLE_CLIENT_SECRET: optionalSecret,
    STRIPE_SECRET_KEY: optionalSecret,
    SES_REGION: optionalSecret,
    /** Requests per minute per project (or per client address before sign-in), across all replicas. */
    RATE_LIMIT_PER_MINUTE: positiveInt(1000, 1_000_000),
    /** Public-key (pk_) requests per minute per project and client address; the project's public-key traffic also has its own RATE_LIMIT_PER_MINUTE. */
    PUBLIC_KEY_RATE_PER_MINUTE: positiveInt(120, 1_000_000),
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
     * Whether X-Forwarded-For names the client: "false" (default; the peer is the client),
     * "true" (trust every proxy), or a comma-separated list of the proxies' addresses or CIDRs.
     */
    TRUST_PROXY: z
      .string()
      .optional()
      .transform((value): boolean | string =>
        value === undefined || value === "" || value === "false" ? false : value === "true" ? true : value,
      ),
    /** The largest image POST /uploads/image reads (the delivery service's UPLOAD_MAX_BYTES: give both the same); at most 25 MB. */
    UPLOAD_MAX_BYTES: positiveInt(5 * 1024 * 1024, 25 * 1024 * 1024),
    /** Deadline of a health probe to one service. */
    HEALTH_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).default(1_000),
    ...serviceUrls,
  })
  .superRefine(kafkaSaslCredentials);

export type Config = z.infer<typeof configSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
