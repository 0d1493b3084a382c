import { randomBytes } from "node:crypto";
import {
  envBoolean,
  httpUrl,
  kafkaSaslCredentials,
  nodeEnv,
  parseConfig,
  requireInProduction,
  secretString,
  serviceEnvironment,
} from "@herald/platform";
import { z } from "zod";
import type { ReputationThresholds } from "./domain/reputation-guard.js";
import type { PlanCaps } from "./domain/stripe-plan.js";

const optionalSecret = z
  .string()
  .optional()
  .transform((value) => value || undefined);

/** Caps per category, each a whole number of emails a month or null (absent) for none. */
const cap = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional();
const planCaps: z.ZodType<PlanCaps> = z.strictObject({ transactional: cap, campaigns: cap, workflows: cap, inbound: cap });

/** A JSON variable parsed by a schema; empty or unset is the fallback. */
const jsonVariable = <T>(schema: z.ZodType<T>, fallback: T) =>
  z
    .string()
    .optional()
    .transform((value, context): T => {
      if (!value?.trim()) return fallback;
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        context.addIssue({ code: "custom", message: "must be JSON" });
        return z.NEVER;
      }
      const result = schema.safeParse(parsed);
      if (result.success) return result.data;
      for (const issue of result.error.issues) {
        context.addIssue({ code: "custom", message: `${issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""}${issue.message}` });
      }
      return z.NEVER;
    });

/** A rate threshold in percent, above 0 and at most 100. */
const percentVariable = (fallback: number) => z.coerce.number().gt(0).max(100).default(fallback);

export const configSchema = z
  .object({
    ...serviceEnvironment,
    NODE_ENV: nodeEnv,
    /** Signs dashboard sessions; only identity signs and verifies them. */
    JWT_SECRET: secretString,
    SESSION_TTL_HOURS: z.coerce
      .number()
      .positive()
      .max(24 * 365)
      .default(168),
    DISABLE_SIGNUPS: envBoolean(false),
    /** Links in the emails identity sends point here (the gateway's public address). */
    PUBLIC_URL: httpUrl.default("http://localhost:8080"),
    GITHUB_CLIENT_ID: optionalSecret,
    GITHUB_CLIENT_SECRET: optionalSecret,
    GOOGLE_CLIENT_ID: optionalSecret,
    GOOGLE_CLIENT_SECRET: optionalSecret,
    // The providers' endpoints are overridable so that a test (or an enterprise GitHub) can stand in.
    GITHUB_OAUTH_URL: httpUrl.default("https://github.com"),
    GITHUB_API_URL: httpUrl.default("https://api.github.com"),
    GOOGLE_OAUTH_URL: httpUrl.default("https://accounts.google.com"),
    GOOGLE_TOKEN_URL: httpUrl.default("https://oauth2.googleapis.com/token"),
    GOOGLE_USERINFO_URL: httpUrl.default("https://openidconnect.googleapis.com/v1/userinfo"),
    OAUTH_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
    STRIPE_SECRET_KEY: optionalSecret,
    /** Verifies the events Stripe posts to /webhooks/incoming/stripe (`whsec_…`); unset: that endpoint refuses them. */
    STRIPE_WEBHOOK_SECRET: optionalSecret,
    /**
     * The caps each Stripe price gives, as JSON: `{ "price_…": { "transactional": 10000, "campaigns": null, … } }`
     * (null or absent: no cap). Subscription and invoice events set a project's caps from it; checkout takes only its prices.
     */
    STRIPE_PRICE_LIMITS: jsonVariable(z.record(z.string().regex(/^price_\w+$/, "must be Stripe price ids"), planCaps), {}),
    /** The caps of a project whose subscription ended or whose payment failed, as JSON like one price's; default: 0 in every category. */
    STRIPE_LAPSED_LIMITS: jsonVariable(planCaps, { transactional: 0, campaigns: 0, workflows: 0, inbound: 0 }),
    /** Stripe's API by default; stripe-mock or a test double elsewhere. */
    STRIPE_API_URL: httpUrl.default("https://api.stripe.com"),
    /** scrypt cost as log2(N): 17 is OWASP's recommendation (128 MiB per hash with r=8); tests use 14. */
    PASSWORD_SCRYPT_LOG_N: z.coerce.number().int().min(14).max(20).default(17),
    /** Password hashes computed at once (each holds 128·2^PASSWORD_SCRYPT_LOG_N·8 bytes: 128 MiB at 17), and how many may wait. */
    PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    PASSWORD_HASH_MAX_WAITING: z.coerce.number().int().min(0).max(10_000).default(64),
    /** The same for new passwords (sign-up, password reset), a queue of their own so that a flood of sign-ups leaves sign-in alone. */
    SIGNUP_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
    SIGNUP_HASH_MAX_WAITING: z.coerce.number().int().min(0).max(10_000).default(32),
    /** Verification and reset emails per address and purpose per hour. */
    AUTH_EMAIL_LIMIT_PER_HOUR: z.coerce.number().int().positive().default(5),
    /** Invitations one project may send per day, and one address may receive per day from all projects together. */
    INVITATIONS_PER_PROJECT_PER_DAY: z.coerce.number().int().positive().default(50),
    INVITATIONS_PER_ADDRESS_PER_DAY: z.coerce.number().int().positive().default(5),
    /** Sign-in waits until the account's address is proven (its verification link, a reset link, or an OAuth provider). */
    REQUIRE_EMAIL_VERIFICATION: envBoolean(false),
    /** How often account emails another replica queued, or whose hand-over to delivery failed, are looked for. */
    AUTH_EMAIL_POLL_INTERVAL_MS: z.coerce.number().int().min(10).default(1_000),
    /** The reputation guard (docs/operations.md "Reputation guard"): its rolling window in UTC days, and the attempts below which nobody is judged. */
    REPUTATION_WINDOW_DAYS: z.coerce.number().int().min(1).max(90).default(7),
    REPUTATION_MIN_VOLUME: z.coerce.number().int().min(1).default(1000),
    /** Thresholds in percent: a warning email and banner, then a suspension that only the operator lifts. */
    REPUTATION_WARN_BOUNCE_PERCENT: percentVariable(5),
    REPUTATION_WARN_COMPLAINT_PERCENT: percentVariable(0.075),
    REPUTATION_SUSPEND_BOUNCE_PERCENT: percentVariable(10),
    REPUTATION_SUSPEND_COMPLAINT_PERCENT: percentVariable(0.15),
  })
  .superRefine((config, context) => {
    for (const kind of ["BOUNCE", "COMPLAINT"] as const) {
      if (config[`REPUTATION_WARN_${kind}_PERCENT`] > config[`REPUTATION_SUSPEND_${kind}_PERCENT`]) {
        context.addIssue({
          code: "custom",
          path: [`REPUTATION_WARN_${kind}_PERCENT`],
          message: `must not exceed REPUTATION_SUSPEND_${kind}_PERCENT`,
        });
      }
    }
  })
  .superRefine(requireInProduction(["JWT_SECRET"] as const))
  .superRefine(kafkaSaslCredentials)
  .transform(({ JWT_SECRET, ...config }) => ({
    ...config,
    // Only with NODE_ENV=development or test: a missing secret is made up per process: sessions then end with the process.
    JWT_SECRET: JWT_SECRET ?? randomBytes(32).toString("base64url"),
    jwtSecretGenerated: JWT_SECRET === undefined,
  }));

export type Config = z.infer<typeof configSchema>;

/** The guard's thresholds as fractions. */
export const reputationThresholdsOf = (config: Config): ReputationThresholds => ({
  windowDays: config.REPUTATION_WINDOW_DAYS,
  minVolume: config.REPUTATION_MIN_VOLUME,
  warnBounceRate: config.REPUTATION_WARN_BOUNCE_PERCENT / 100,
  warnComplaintRate: config.REPUTATION_WARN_COMPLAINT_PERCENT / 100,
  suspendBounceRate: config.REPUTATION_SUSPEND_BOUNCE_PERCENT / 100,
  suspendComplaintRate: config.REPUTATION_SUSPEND_COMPLAINT_PERCENT / 100,
});

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
