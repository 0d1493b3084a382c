import { setTimeout as delay } from "node:timers/promises";
import type { Producer, TopicMessages } from "kafkajs";
import type pg from "pg";
import type { Logger } from "pino";

interface StoredOutboxRow {
  event_id: string;
  topic: string;
  key: string;
  payload: Uint8Array;
  headers: Record<string, string>;
}

export interface OutboxRelay {
  start(): void;
  /** Publishes soon: call after a transaction that wrote to the outbox commits. */
  nudge(): void;
  /** Publishes until the outbox is empty; throws if Kafka cannot be reached. */
  flush(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Moves outbox rows to Kafka. One relay per schema publishes at a time (an
 * advisory lock), in id order, and deletes rows only after Kafka acknowledged them:
 * a crash or an outage at any point re-sends, never loses (consumers deduplicate).
 */
export function createOutboxRelay(options: {
  /** Connections to the service's schema (createSqlPool of @herald/db): the relay runs on pg, not Prisma. */
  pool: pg.Pool;
  producer: Producer;
  logger: Logger;
  batchSize?: number;
  pollIntervalMs?: number;
  /**
   * While nudges keep coming, a publish starts at most this long after the one before: the events
   * of that time go in one batch (one produce request, one DELETE) instead of a few each. A nudge
   * after a quiet spell publishes at once.
   */
  lingerMs?: number;
}): OutboxRelay {
  const { pool, producer, logger } = options;
  const batchSize = options.batchSize ?? 500;
  const pollIntervalMs = options.pollIntervalMs ?? 500;
  const lingerMs = options.lingerMs ?? 50;
  let connected = false;
  let running = false;
  let loop: Promise<void> | undefined;
  /** Ends the current sleep early. */
  let sleeping: AbortController | undefined;
  let nudged = false;
  /** Sleeping out the linger: a nudge does not cut it short, a stop does. */
  let lingering = false;

  async function sleep(ms: number): Promise<void> {
    sleeping = new AbortController();
    await delay(ms, undefined, { signal: sleeping.signal }).catch(() => {});
    sleeping = undefined;
  }

  async function publishBatch(): Promise<number> {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const lock = await client.query<{ locked: boolean }>(
        "SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.outbox_events')) AS locked",
      );
      const rows = lock.rows[0]?.locked
        ? (
            await client.query<StoredOutboxRow>({
              name: "herald_outbox_batch",
              text: "SELECT event_id::text AS event_id, topic, key, payload, headers FROM outbox_events ORDER BY id LIMIT $1",
              values: [batchSize],
            })
          ).rows
        : [];
      if (rows.length > 0) {
        if (!connected) {
          await producer.connect();
          connected = true;
        }
        await producer.sendBatch({ acks: -1, topicMessages: groupByTopic(rows) });
        await client.query("DELETE FROM outbox_events WHERE event_id = ANY($1::uuid[])", [rows.map((row) => row.event_id)]);
      }
      await client.query("COMMIT");
      return rows.length;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async function run(): Promise<void> {
    let failures = 0;
    let startedAt = Number.NEGATIVE_INFINITY;
    /** The last batch was full: more events wait, and they go at once. */
    let behind = false;
    while (running) {
      const lingerLeft = startedAt + lingerMs - performance.now();
      if (!behind && lingerLeft > 0) {
        lingering = true;
        await sleep(lingerLeft);
        lingering = false;
        if (!running) return;
      }
      nudged = false;
      startedAt = performance.now();
      try {
        const published = await publishBatch();
        if (failures > 0) logger.info({ afterAttempts: failures }, "outbox relay reconnected to Kafka");
        failures = 0;
        behind = published === batchSize;
        if (behind) continue;
      } catch (error) {
        failures++;
        if (failures === 1 || failures % 20 === 0) {
          logger.warn({ err: error, attempts: failures }, "outbox relay cannot publish; events wait in the outbox");
        }
        connected = false;
        await producer.disconnect().catch(() => {});
      }
      if (nudged && failures === 0) continue;
      await sleep(failures === 0 ? pollIntervalMs : Math.min(pollIntervalMs * 2 ** failures, 10_000));
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    nudge() {
      nudged = true;
      if (!lingering) sleeping?.abort();
    },
    async flush() {
      let total = 0;
      for (let published = -1; published !== 0; total += published) published = await publishBatch();
      return total;
    },
    async stop() {
      running = false;
      sleeping?.abort();
      await loop;
      if (connected) await producer.disconnect();
      connected = false;
    },
  };
}

function groupByTopic(rows: StoredOutboxRow[]): TopicMessages[] {
  const byTopic = new Map<string, TopicMessages>();
  for (const row of rows) {
    let group = byTopic.get(row.topic);
    if (!group) {
      group = { topic: row.topic, messages: [] };
      byTopic.set(row.topic, group);
    }
    group.messages.push({ key: row.key, value: Buffer.from(row.payload), headers: row.headers });
  }
  return [...byTopic.values()];
}
