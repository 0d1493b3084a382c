import { withConnection } from "@herald/db";
import { createBackgroundLoop } from "@herald/platform";
import type { Producer, TopicMessages } from "kafkajs";
import type pg from "pg";
import type { Logger } from "pino";

interface StoredOutboxRow {
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
 * A batch of the outbox, oldest first, deleted in the relay's transaction, or none while another relay of the schema
 * holds the lock. The lock is taken once, before the scan, by the subquery that gates it (a one-time filter), and the
 * batch's ids are deleted through the primary key once the outbox holds more than a few pages (a backlog while Kafka
 * was away; autovacuum's analyze of the growing table has the prepared plan made again). One statement
 * where a lock, a read and a delete by event id were three, each a round trip on both sides (docs/benchmarks.md).
 * Its snapshot is taken before the lock: rows that a relay which held the lock until then deleted are skipped by the
 * DELETE, as rows deleted by a committed transaction are, so none is published twice.
 */
const takeBatch = `WITH taken AS (
    DELETE FROM outbox_events WHERE id = ANY (ARRAY(
      SELECT id FROM outbox_events WHERE (SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.outbox_events')))
      ORDER BY id LIMIT $1
    ))
    RETURNING id, topic, key, payload, headers
  )
  SELECT topic, key, payload, headers FROM taken ORDER BY id`;

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
   * While nudges keep coming, a publish starts at most this long after the one before (100 ms unless
   * given): the events of that time go in one batch (one produce request, one DELETE) instead of a
   * few each. A nudge after a quiet spell publishes at once.
   */
  lingerMs?: number;
}): OutboxRelay {
  const { pool, producer, logger } = options;
  const batchSize = options.batchSize ?? 500;
  let connected = false;

  async function publishBatch(): Promise<number> {
    return withConnection(pool, async (client) => {
      try {
        await client.query("BEGIN");
        const { rows } = await client.query<StoredOutboxRow>({ name: "herald_outbox_take", text: takeBatch, values: [batchSize] });
        if (rows.length > 0) {
          if (!connected) {
            await producer.connect();
            connected = true;
          }
          await producer.sendBatch({ acks: -1, topicMessages: groupByTopic(rows) });
        }
        // The rows are gone only now, once Kafka has them; a failure above rolls their deletion back.
        await client.query("COMMIT");
        return rows.length;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }
    });
  }

  const loop = createBackgroundLoop({
    name: "outbox relay",
    logger,
    idleMs: options.pollIntervalMs ?? 500,
    minIntervalMs: options.lingerMs ?? 100,
    pass: async () => {
      try {
        // A full batch means more events wait: they go at once.
        return (await publishBatch()) === batchSize ? "busy" : "idle";
      } catch (error) {
        // Events wait in the outbox meanwhile; the producer reconnects on the next pass.
        connected = false;
        await producer.disconnect().catch(() => {});
        throw error;
      }
    },
  });

  return {
    start: () => loop.start(),
    nudge: () => loop.nudge(),
    async flush() {
      let total = 0;
      for (let published = -1; published !== 0; total += published) published = await publishBatch();
      return total;
    },
    async stop() {
      await loop.stop();
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
