import { kafkaSaslCredentials, parseConfig, renderThreadMemoryMb, renderThreads, serviceEnvironment } from "@herald/platform";
import { z } from "zod";

export const configSchema = z
  .object({
    ...serviceEnvironment,
    /** Contacts streamed, rendered and enqueued together by the fan-out (delivery takes at most 1,000). */
    CAMPAIGN_BATCH_SIZE: z.coerce.number().int().min(1).max(1_000).default(500),
    /** How long a replica's claim on a campaign's fan-out holds without progress before another may take it over. */
    CAMPAIGN_FANOUT_LEASE_MS: z.coerce.number().int().min(1_000).default(30_000),
    /** How long one campaign's fan-out goes on before the other campaigns due take their turn. */
    CAMPAIGN_FANOUT_TURN_MS: z.coerce.number().int().min(0).default(2_000),
    /** How often the scheduler looks for due campaigns and finished sends when nothing woke it. */
    CAMPAIGN_POLL_INTERVAL_MS: z.coerce.number().int().min(50).default(1_000),
    RENDER_THREADS: renderThreads,
    RENDER_THREAD_MEMORY_MB: renderThreadMemoryMb,
  })
  .superRefine(kafkaSaslCredentials);

export type Config = z.infer<typeof configSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
