import {
  commaSeparated,
  kafkaSaslCredentials,
  parseConfig,
  renderThreadMemoryMb,
  renderThreads,
  serviceEnvironment,
} from "@herald/platform";
import { z } from "zod";

export const configSchema = z
  .object({
    ...serviceEnvironment,
    /** Step runs a process runs at once; a pass of the runner claims as many as there are free places. */
    STEP_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(50),
    /** How long a claimed step run stays with its worker before another may take it over (a crashed one). */
    STEP_LEASE_MS: z.coerce.number().int().min(1_000).default(60_000),
    /** How often an idle runner looks for due step runs (a new run or event also wakes it). */
    STEP_POLL_INTERVAL_MS: z.coerce.number().int().min(10).default(250),
    /** How long a process trusts its trigger index of a project when no change arrives through Kafka. */
    TRIGGER_INDEX_TTL_MS: z.coerce.number().int().min(0).default(300_000),
    /** Scales DELAY durations: 1 in production; tests shrink minutes to moments. */
    DELAY_TIME_SCALE: z.coerce.number().positive().max(1).default(1),
    /** Resolvers for WEBHOOK hosts, host:port list; system resolvers when empty. */
    DNS_SERVERS: commaSeparated.default([]),
    /** Addresses WEBHOOK steps may reach although they are private (tests); empty by default. */
    WEBHOOK_ALLOWED_ADDRESSES: commaSeparated.default([]),
    /** How long one webhook call may take, from its first connection to its last byte, redirects included. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
    /** WEBHOOK runs of one project a process runs at once, so that one project's slow receivers cannot hold every place. */
    WEBHOOK_PROJECT_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(5),
    RENDER_THREADS: renderThreads,
    RENDER_THREAD_MEMORY_MB: renderThreadMemoryMb,
    /** Days a finished execution (with its step runs) is kept; live ones stay however old (docs/operations.md "Retention"). */
    RETENTION_EXECUTIONS_DAYS: z.coerce.number().int().min(1).max(36_500).default(730),
    /** How often finished executions past it are deleted. */
    RETENTION_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  })
  .superRefine(kafkaSaslCredentials);

export type Config = z.infer<typeof configSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
