import { randomBytes } from "node:crypto";
import type { Consumer, Kafka, KafkaMessage } from "kafkajs";
import pg from "pg";
import type { SqlClient, TransactionalClient } from "../sql-client.js";
import { ensureTopics } from "../topics.js";

/** The two tables this package reads and writes, with the columns every service's migration gives them. */
const packageTables = `
CREATE TABLE outbox_events (
  id bigserial PRIMARY KEY,
  event_id uuid NOT NULL,
  topic text NOT NULL,
  key text NOT NULL,
  payload bytea NOT NULL,
  headers jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE TABLE processed_events (
  consumer text NOT NULL,
  event_id text NOT NULL,
  processed_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);`;

/** A pg connection (or a pool) as the SqlClient that Prisma clients give the services. */
function sqlClientOf(queryable: pg.Pool | pg.PoolClient): SqlClient {
  const query = (strings: TemplateStringsArray, values: unknown[]) =>
    queryable.query(
      strings.reduce((text, part, index) => `${text}$${index}${part}`),
      values,
    );
  return {
    $executeRaw: async (strings, ...values) => (await query(strings, values)).rowCount ?? 0,
    $queryRaw: async <T>(strings: TemplateStringsArray, ...values: unknown[]) => (await query(strings, values)).rows as T,
  };
}

export interface ScratchSchema {
  /** Connections whose search_path is the schema, as createSqlPool of @herald/db gives a service. */
  pool: pg.Pool;
  /** The same connections as the SqlClient and TransactionalClient that the outbox and the consumer take. */
  db: SqlClient & TransactionalClient<SqlClient>;
  drop(): Promise<void>;
}

/**
 * A schema of its own, holding only this package's tables, in the test run's PostgreSQL: the package
 * is tested without any service's migrations or Prisma client.
 */
export async function createScratchSchema(databaseUrl: string): Promise<ScratchSchema> {
  const schema = `kafka_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const pool = new pg.Pool({ connectionString: databaseUrl, options: `-c search_path=${schema}`, max: 6 });
  await pool.query(packageTables);
  const db: ScratchSchema["db"] = {
    ...sqlClientOf(pool),
    async $transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await fn(sqlClientOf(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
  };
  return {
    pool,
    db,
    async drop() {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
    },
  };
}

/** A topic of its own for one test file, with one partition so that everything published on it keeps its order. */
export async function createTestTopic(kafka: Kafka): Promise<{ topic: string; drop(): Promise<void> }> {
  const topic = `herald.test.kafka-${randomBytes(6).toString("hex")}`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureTopics(admin, [topic], 1);
  } finally {
    await admin.disconnect();
  }
  return {
    topic,
    async drop() {
      const dropper = kafka.admin();
      await dropper.connect();
      await dropper.deleteTopics({ topics: [topic] }).finally(() => dropper.disconnect());
    },
  };
}

/** Reads a topic from its beginning and keeps every message, so that a test can wait for what it published. */
export async function readTopic(kafka: Kafka, topic: string): Promise<{ messages: KafkaMessage[]; stop(): Promise<void> }> {
  const consumer: Consumer = kafka.consumer({ groupId: `kafka-test-${randomBytes(6).toString("hex")}` });
  const messages: KafkaMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      messages.push(message);
    },
  });
  return {
    messages,
    stop: () => consumer.disconnect(),
  };
}
