import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { ProjectLifecycleSchema } from "@herald/proto/herald/events/v1/project_lifecycle_pb";
import type { Producer } from "kafkajs";
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createEnvelope, type EventEnvelope, encodeEnvelope } from "./envelope.js";
import type { EventConsumer } from "./event-consumer.js";
import { createKafka } from "./kafka-client.js";
import { createProjectWipeConsumer, type ProjectWipe } from "./project-lifecycle-consumer.js";
import type { SqlClient, TransactionalClient } from "./sql-client.js";
import { ensureTopics, topics } from "./topics.js";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A tagged template as a pg statement: the values become $1, $2, … as Prisma.sql makes them. */
const statementOf = (strings: TemplateStringsArray, values: unknown[]) => ({
  text: strings.reduce((text, part, index) => `${text}$${index}${part}`),
  values,
});

/** What the consumer needs of a Prisma client, on pg: this package has no generated client. */
function transactionsOn(pool: pg.Pool): TransactionalClient<SqlClient> {
  return {
    async $transaction(fn) {
      const client = await pool.connect();
      const tx: SqlClient = {
        $executeRaw: async (strings, ...values) => (await client.query(statementOf(strings, values))).rowCount ?? 0,
        $queryRaw: async <T>(strings: TemplateStringsArray, ...values: unknown[]) =>
          (await client.query(statementOf(strings, values))).rows as T,
      };
      try {
        await client.query("BEGIN");
        const result = await fn(tx);
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      } finally {
        client.release();
      }
    },
  };
}

describe("the project-wipe consumer", () => {
  const schema = `kafka_wipes_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  let pool: pg.Pool;
  let producer: Producer;
  let consumer: EventConsumer;

  beforeAll(async () => {
    const herald = inject("herald");
    pool = new pg.Pool({ connectionString: herald.databaseUrl, max: 2, options: `-c search_path=${schema}` });
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query("CREATE TABLE processed_events (consumer text NOT NULL, event_id text NOT NULL, PRIMARY KEY (consumer, event_id))");
    await pool.query(
      "CREATE TABLE wipes (n serial PRIMARY KEY, project_id text NOT NULL, reason text NOT NULL, occurred_at timestamptz NOT NULL)",
    );
    const kafka = createKafka({ clientId: "project-wipe-test", brokers: herald.kafkaBrokers });
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [topics.projectLifecycle]);
    await admin.disconnect();
    producer = kafka.producer();
    await producer.connect();
    // A group of its own, from the topic's start: the shared stack's services consume this topic too.
    consumer = createProjectWipeConsumer({
      kafka,
      db: transactionsOn(pool),
      logger: pino({ level: "silent" }),
      groupId: `project-wipe-test-${randomUUID()}`,
      fromBeginning: true,
      isProjectId: (value) => uuidPattern.test(value),
      wipe: async ({ projectId, reason, occurredAt }, tx) => {
        await tx.$executeRaw`INSERT INTO wipes (project_id, reason, occurred_at) VALUES (${projectId}, ${reason}, ${occurredAt})`;
      },
    });
    await consumer.start();
  }, 120_000);

  afterAll(async () => {
    await consumer?.stop();
    await producer?.disconnect();
    await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool?.end();
  });

  const lifecycleEvent = (type: string, projectId: string, occurredAt?: Date): EventEnvelope =>
    createEnvelope({
      type,
      projectId,
      source: "identity",
      occurredAt,
      payloadSchema: ProjectLifecycleSchema,
      payload: create(ProjectLifecycleSchema, { projectId }),
    });

  /** Published under one key, so that they are consumed in this order. */
  const publish = (events: EventEnvelope[]) =>
    producer.send({
      topic: topics.projectLifecycle,
      messages: events.map((event) => ({ key: "project-wipe-test", value: Buffer.from(encodeEnvelope(event)) })),
    });

  async function applied(eventId: string): Promise<void> {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      const { rowCount } = await pool.query("SELECT 1 FROM processed_events WHERE event_id = $1", [eventId]);
      if (rowCount) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`event ${eventId} was not applied within a minute`);
  }

  it("wipes once for each reset and deletion of a well-formed project, and for nothing else", async () => {
    const [reset, deleted, other] = [randomUUID(), randomUUID(), randomUUID()];
    const malformed = `not-a-uuid-${randomUUID()}`;
    const resetAt = new Date("2030-01-02T03:04:05.678Z");
    const resetEvent = lifecycleEvent("project.reset", reset, resetAt);
    const last = lifecycleEvent("project.created", other);
    await publish([
      lifecycleEvent("project.created", reset),
      lifecycleEvent("project.keys_rotated", other),
      resetEvent,
      // Delivered again, as Kafka may: applied once.
      resetEvent,
      lifecycleEvent("project.deleted", malformed),
      lifecycleEvent("project.deleted", deleted),
      last,
    ]);
    await applied(last.eventId);
    const { rows } = await pool.query<ProjectWipe>(
      `SELECT project_id AS "projectId", reason, occurred_at AS "occurredAt" FROM wipes WHERE project_id = ANY($1) ORDER BY n`,
      [[reset, deleted, other, malformed]],
    );
    expect(rows).toEqual([
      { projectId: reset, reason: "project.reset", occurredAt: resetAt },
      { projectId: deleted, reason: "project.deleted", occurredAt: expect.any(Date) },
    ]);
  }, 90_000);
});
