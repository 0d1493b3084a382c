import { accessSync, constants, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { z } from "zod";
import type { RetentionWindow } from "./retention.js";

/** Raised when the environment does not satisfy a service's schema; names every bad variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Parses the environment once at start. The message names each offending variable. */
export function parseConfig<Schema extends z.ZodType>(schema: Schema, env: NodeJS.ProcessEnv = process.env): z.infer<Schema> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join(".") || "(environment)"}: ${issue.message}`);
  throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
}

/** "true"/"1"/"yes" and "false"/"0"/"no", because z.coerce.boolean() reads "false" as true. */
export const envBoolean = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0", "yes", "no", ""])
    .optional()
    .transform((value) => (value === undefined || value === "" ? fallback : ["true", "1", "yes"].includes(value)));

export const envPort = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

/**
 * METRICS_PORT: where the process serves Prometheus metrics over HTTP/1.1 (`GET /metrics`); unset or empty, it serves
 * none. Not defaulted, since the six processes of `npm start` share one host; the chart and compose.yaml set 9464.
 */
export const metricsPort = z
  .string()
  .optional()
  .transform((value) => value?.trim() || undefined)
  .pipe(z.union([z.undefined(), z.string().regex(/^\d{1,5}$/, { message: "must be a port number" })]))
  .transform((value) => (value === undefined ? undefined : Number(value)))
  .refine((port) => port === undefined || port <= 65535, { message: "must be a port number (0 to 65535)" });

/**
 * RENDER_THREADS, in the services that render Liquid (delivery, campaigns, automation): the most worker threads that
 * parse and render it at once (createRenderPool of @herald/rendering/pool); 0 renders on the event loop, where one
 * heavy template holds everything else the process does. Default: the cores this process may use, at most 4 (one
 * stays started, the others start when renders wait and stop after a minute without).
 */
export const renderThreads = z.coerce.number().int().min(0).max(64).default(Math.min(4, availableParallelism()));

/**
 * RENDER_THREAD_MEMORY_MB, beside RENDER_THREADS: the V8 heap (old generation) of one render thread. A thread past it
 * stops, its task fails with a render error and another thread replaces it; the process goes on (issue 28).
 */
export const renderThreadMemoryMb = z.coerce.number().int().min(32).max(16_384).default(256);

export const postgresUrl = z.string().refine((value) => URL.canParse(value) && /^postgres(ql)?:$/.test(new URL(value).protocol), {
  message: "must be a postgresql://user@host:port/database URL",
});

export const httpUrl = z.string().refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
  message: "must be an http:// or https:// URL",
});

export const redisUrl = z.string().refine((value) => URL.canParse(value) && /^rediss?:$/.test(new URL(value).protocol), {
  message: "must be a redis:// or rediss:// URL",
});

/** A comma-separated list, each entry trimmed, empty entries dropped. */
export const commaSeparated = z.string().transform((value) =>
  value
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean),
);

export const brokerList = commaSeparated.refine(
  (brokers) => brokers.length > 0 && brokers.every((broker) => /^[^:\s]+:\d{1,5}$/.test(broker)),
  {
    message: "must be a comma-separated list of host:port",
  },
);

export const kafkaSaslMechanisms = ["plain", "scram-sha-256", "scram-sha-512"] as const;

const optionalSetting = z
  .string()
  .optional()
  .transform((value) => value?.trim() || undefined);

/**
 * How every process reaches Kafka (docs/operations.md "Kafka"): the brokers, TLS, and SASL credentials. Spread into each
 * process's schema together with the kafkaSaslCredentials refinement, and turned into client options by @herald/kafka's
 * kafkaConnectionOf.
 */
export const kafkaEnvironment = {
  KAFKA_BROKERS: brokerList.default(["127.0.0.1:9092"]),
  /** TLS to the brokers, verified against KAFKA_TLS_CA_FILE or the system's CAs. */
  KAFKA_TLS: envBoolean(false),
  /** A PEM file of the CA (or CAs) that signed the brokers' certificates; unset: the system's CAs. */
  KAFKA_TLS_CA_FILE: optionalSetting.refine((path) => path === undefined || isReadableFile(path), {
    message: "must be a readable PEM file",
  }),
  /** `plain`, `scram-sha-256` or `scram-sha-512`; unset: no SASL. */
  KAFKA_SASL_MECHANISM: optionalSetting.pipe(z.enum(kafkaSaslMechanisms).optional()),
  KAFKA_SASL_USERNAME: optionalSetting,
  KAFKA_SASL_PASSWORD: z
    .string()
    .optional()
    .transform((value) => value || undefined),
};

function isReadableFile(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A superRefine step for kafkaEnvironment: a SASL mechanism needs a username and a password, and credentials need a mechanism. */
export function kafkaSaslCredentials(
  config: { KAFKA_SASL_MECHANISM?: string | undefined; KAFKA_SASL_USERNAME?: string | undefined; KAFKA_SASL_PASSWORD?: string | undefined },
  context: z.RefinementCtx,
): void {
  if (config.KAFKA_SASL_MECHANISM) {
    for (const name of ["KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD"] as const) {
      if (!config[name]) context.addIssue({ code: "custom", path: [name], message: "is required when KAFKA_SASL_MECHANISM is set" });
    }
  } else if (config.KAFKA_SASL_USERNAME || config.KAFKA_SASL_PASSWORD) {
    context.addIssue({
      code: "custom",
      path: ["KAFKA_SASL_MECHANISM"],
      message: `is required with KAFKA_SASL_USERNAME or KAFKA_SASL_PASSWORD: one of ${kafkaSaslMechanisms.join(", ")}`,
    });
  }
}

/**
 * Which environment a process runs in. Unset means production: only `development` or `test`, set
 * explicitly, let a missing secret fall back to a development value (isDevelopment).
 */
export const nodeEnv = z.enum(["development", "test", "production"]).default("production");

export const isDevelopment = (env: "development" | "test" | "production"): boolean => env !== "production";

/**
 * A superRefine step: in production, each named secret must be set, and the message names it.
 * Outside production the service substitutes a development value of its own.
 */
export function requireInProduction<Names extends string>(names: readonly Names[]) {
  return (config: { NODE_ENV: "development" | "test" | "production" } & Partial<Record<Names, unknown>>, context: z.RefinementCtx) => {
    if (isDevelopment(config.NODE_ENV)) return;
    for (const name of names) {
      if (config[name] === undefined || config[name] === "") {
        context.addIssue({ code: "custom", path: [name], message: "is required unless NODE_ENV is development or test" });
      }
    }
  };
}

const developmentRpcToken = "herald development internal rpc token: not a secret";

/**
 * INTERNAL_RPC_TOKEN, which every gRPC server requires of its callers and every client presents. Read from the
 * environment by createRpcServer and createRpcTransport, so that every process shares it without passing it around.
 * Unset, only NODE_ENV=development or test fall back to a public development token; otherwise a ConfigError names it.
 */
export function internalRpcToken(env: NodeJS.ProcessEnv = process.env): string {
  const token = env.INTERNAL_RPC_TOKEN?.trim();
  if (token) {
    if (token.length < 32) throw new ConfigError("Invalid configuration:\n  INTERNAL_RPC_TOKEN: must be at least 32 characters");
    return token;
  }
  if (env.NODE_ENV === "development" || env.NODE_ENV === "test") return developmentRpcToken;
  throw new ConfigError("Invalid configuration:\n  INTERNAL_RPC_TOKEN: is required unless NODE_ENV is development or test");
}

/** A secret from the environment, unset when empty, of at least 32 characters. */
export const secretString = z
  .string()
  .optional()
  .transform((value) => value || undefined)
  .refine((value) => value === undefined || value.length >= 32, { message: "must be at least 32 characters" });

export const logLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info");

/** Where each service is reached; a service listens on the port of its own URL. */
export const serviceUrls = {
  IDENTITY_URL: httpUrl.default("http://127.0.0.1:50051"),
  CONTACTS_URL: httpUrl.default("http://127.0.0.1:50052"),
  DELIVERY_URL: httpUrl.default("http://127.0.0.1:50053"),
  CAMPAIGNS_URL: httpUrl.default("http://127.0.0.1:50054"),
  AUTOMATION_URL: httpUrl.default("http://127.0.0.1:50055"),
  WEBHOOKS_URL: httpUrl.default("http://127.0.0.1:50056"),
};

/** The variables every data-owning service reads. */
export const serviceEnvironment = {
  DATABASE_URL: postgresUrl.default("postgresql://postgres@127.0.0.1:5432/herald"),
  /** Whether the service applies its migrations as it starts; off where a job of its own migrates first (a Helm hook). */
  MIGRATE_ON_START: envBoolean(true),
  REDIS_URL: redisUrl.default("redis://127.0.0.1:6379"),
  ...kafkaEnvironment,
  /**
   * Prepended to every consumer group: deployments that share a Kafka cluster but not a
   * database (staging beside production, or test stacks) must not share consumer groups.
   */
  KAFKA_GROUP_PREFIX: z.string().default(""),
  LISTEN_HOST: z.string().min(1).default("0.0.0.0"),
  METRICS_PORT: metricsPort,
  LOG_LEVEL: logLevel,
  ...serviceUrls,
};

export function portOfUrl(url: string): number {
  const parsed = new URL(url);
  if (parsed.port) return Number(parsed.port);
  return parsed.protocol === "https:" ? 443 : 80;
}

/** A number of days a retention window may hold: one day to a hundred years. */
const retentionDays = (defaultDays: number) => z.coerce.number().int().min(1).max(36_500).default(defaultDays);

/**
 * `RETENTION_<KIND>_DAYS`, `_MIN_DAYS` and `_MAX_DAYS`: the deployment's default window for one kind of data and the
 * bounds of a project's own. Spread into a service's schema; check them with `retentionBoundsInOrder`.
 */
export function retentionEnvironment<Kind extends string>(kind: Kind, defaults: RetentionWindow) {
  return {
    [`RETENTION_${kind}_DAYS`]: retentionDays(defaults.defaultDays),
    [`RETENTION_${kind}_MIN_DAYS`]: retentionDays(defaults.minDays),
    [`RETENTION_${kind}_MAX_DAYS`]: retentionDays(defaults.maxDays),
  } as Record<`RETENTION_${Kind}_DAYS` | `RETENTION_${Kind}_MIN_DAYS` | `RETENTION_${Kind}_MAX_DAYS`, ReturnType<typeof retentionDays>>;
}

/** The window of one kind, read from a parsed config. */
export function retentionWindowOf(config: Record<string, unknown>, kind: string): RetentionWindow {
  return {
    defaultDays: Number(config[`RETENTION_${kind}_DAYS`]),
    minDays: Number(config[`RETENTION_${kind}_MIN_DAYS`]),
    maxDays: Number(config[`RETENTION_${kind}_MAX_DAYS`]),
  };
}

/** A superRefine step: each kind's minimum ≤ default ≤ maximum. */
export function retentionBoundsInOrder(kinds: readonly string[]) {
  return (config: Record<string, unknown>, context: z.RefinementCtx) => {
    for (const kind of kinds) {
      const window = retentionWindowOf(config, kind);
      if (window.minDays > window.defaultDays || window.defaultDays > window.maxDays) {
        context.addIssue({
          code: "custom",
          path: [`RETENTION_${kind}_DAYS`],
          message: `must lie within RETENTION_${kind}_MIN_DAYS (${window.minDays}) and RETENTION_${kind}_MAX_DAYS (${window.maxDays})`,
        });
      }
    }
  };
}
