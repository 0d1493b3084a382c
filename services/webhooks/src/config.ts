import { commaSeparated, envBoolean, kafkaSaslCredentials, parseConfig, serviceEnvironment } from "@herald/platform";
import { z } from "zod";

const durationPattern = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const unitMs: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "0s,5s,5m,30m,2h" → milliseconds: the wait before each attempt, the first one's included. */
export const retrySchedule = z
  .string()
  .transform((value, context) => {
    const waits: number[] = [];
    for (const entry of value.split(",").map((part) => part.trim())) {
      const match = durationPattern.exec(entry);
      if (!match?.[1] || !match[2]) {
        context.addIssue({
          code: "custom",
          message: `must be a comma-separated list of durations such as 0s,5s,5m,2h (not ${JSON.stringify(entry)})`,
        });
        return z.NEVER;
      }
      waits.push(Number(match[1]) * (unitMs[match[2]] ?? 1));
    }
    return waits;
  })
  .refine((waits) => waits.length >= 1 && waits.length <= 50, { message: "must list between 1 and 50 waits" });

export const configSchema = z
  .object({
    ...serviceEnvironment,
    /** Resolvers for endpoint hosts, host:port list; system resolvers when empty. */
    DNS_SERVERS: commaSeparated.default([]),
    /** Addresses endpoints may reach although they are private (tests); empty by default. */
    WEBHOOK_ALLOWED_ADDRESSES: commaSeparated.default([]),
    /** Whether endpoint URLs may be http:// (development, tests); https:// only otherwise. */
    WEBHOOK_ALLOW_HTTP: envBoolean(false),
    /** One attempt's deadline, from its first connection to the answer's last byte read. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
    /** The wait before each attempt (attempt n waits the nth, ±10 %); after the last, the message has failed. */
    WEBHOOK_RETRY_SCHEDULE: retrySchedule.prefault("0s,5s,5m,30m,2h,5h,10h,10h"),
    /** An endpoint whose every attempt has failed for this long is disabled, and the project's admins are told. */
    WEBHOOK_DISABLE_AFTER_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .default(5 * 24 * 3_600_000),
    /** How long a rotated-out secret keeps signing beside the new one. */
    WEBHOOK_SECRET_ROTATION_GRACE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(24 * 3_600_000),
    /** Calls to one endpoint in flight at once, across every replica. */
    WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
    /** Calls in flight at once in this process. */
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(64),
    /** How often the dispatcher looks for due messages when nothing woke it. */
    WEBHOOK_POLL_INTERVAL_MS: z.coerce.number().int().min(50).default(1_000),
    /** Endpoints a project may have. */
    WEBHOOK_MAX_ENDPOINTS: z.coerce.number().int().min(1).default(20),
  })
  .superRefine(kafkaSaslCredentials);

export type Config = z.infer<typeof configSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
