import { kafkaSaslCredentials, parseConfig, retentionBoundsInOrder, retentionEnvironment, serviceEnvironment } from "@herald/platform";
import { z } from "zod";
import { defaultDataKeyLimits } from "./tracking/data-key-limits.js";

export const configSchema = z
  .object({
    ...serviceEnvironment,
    /** Postgres connections of this process. */
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
    /** How often an idle job worker looks for queued imports, bulk jobs and wipes (a new job also wakes it). */
    JOB_POLL_INTERVAL_MS: z.coerce.number().int().min(10).default(250),
    /** How long a job stays with a worker that stopped renewing its lease (a crashed one) before another takes over. */
    JOB_LEASE_MS: z.coerce.number().int().min(1_000).default(30_000),
    /** Jobs one process runs at once. */
    JOB_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
    /** CSV records per import transaction (and checkpoint). */
    IMPORT_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(500),
    /** The least time between two wake-ups of the outbox relay by writes: events leave in batches, within about this long. */
    OUTBOX_NUDGE_INTERVAL_MS: z.coerce.number().int().min(0).default(100),
    /** How long a process trusts its memory that a data key is registered; 0 asks the registry on every write. */
    FIELD_CACHE_TTL_MS: z.coerce.number().int().min(0).default(60_000),
    /** Top-level data keys a contact may hold after a /v1/track call (the public key's path); past it 400 DATA_KEY_LIMIT_EXCEEDED. */
    TRACK_MAX_DATA_KEYS_PER_CONTACT: z.coerce.number().int().min(1).default(defaultDataKeyLimits.perContact),
    /** Distinct contact fields a project may have once a /v1/track call registered its keys; past it 400 FIELD_LIMIT_EXCEEDED. */
    TRACK_MAX_FIELDS_PER_PROJECT: z.coerce.number().int().min(1).default(defaultDataKeyLimits.perProject),
    /** How often every tracked segment is fully re-evaluated (what time alone changes, and anything missed). */
    SEGMENT_EVALUATION_INTERVAL_MS: z.coerce.number().int().min(1_000).default(300_000),
    /** How long changed contacts collect before their tracked segments are re-evaluated. */
    SEGMENT_SETTLE_MS: z.coerce.number().int().min(0).default(250),
    /** Tracked events' retention: RETENTION_EVENTS_DAYS for a project without its own, within _MIN_DAYS.._MAX_DAYS (docs/operations.md "Retention"). */
    ...retentionEnvironment("EVENTS", { defaultDays: 730, minDays: 1, maxDays: 730 }),
    /** How often the events' partitions are maintained and expired events deleted; a change of a project's window runs a pass at once. */
    RETENTION_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
    /** How often the trigrams most addresses share are read again from a sample of contacts, for searches. */
    SEARCH_TRIGRAMS_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  })
  .superRefine(kafkaSaslCredentials)
  .superRefine(retentionBoundsInOrder(["EVENTS"]));

export type Config = z.infer<typeof configSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
