import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { type Kafka, KafkaJSNonRetriableError, type Producer } from "kafkajs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createEnvelope, type EventEnvelope, encodeEnvelope } from "./envelope.js";
import { commitIntervalMs, createEventConsumer, type EventConsumer, managedConsumer } from "./event-consumer.js";
import { createKafka } from "./kafka-client.js";
import type { SqlClient } from "./sql-client.js";
import { createScratchSchema, createTestTopic, type ScratchSchema } from "./test-support/scratch-schema.js";

const logger = pino({ level: "silent" });
const eventually = { timeout: 60_000, interval: 100 };

const eventOf = (projectId: string): EventEnvelope =>
  createEnvelope({ type: "test.happened", projectId, source: "kafka-test", payloadSchema: StructSchema, payload: create(StructSchema) });

describe("the event consumer", () => {
  let schema: ScratchSchema;
  let kafka: Kafka;
  let producer: Producer;

  /** The project ids a consumer applied, in the order it applied them. */
  const applied = async (consumer: string) =>
    (await schema.pool.query<{ project_id: string }>("SELECT project_id FROM applied WHERE consumer = $1 ORDER BY n", [consumer])).rows.map(
      (row) => row.project_id,
    );
  const processed = async (consumer: string) =>
    Number(
      (await schema.pool.query<{ n: string }>("SELECT count(*) AS n FROM processed_events WHERE consumer = $1", [consumer])).rows[0]?.n,
    );
  /** The offsets a group has committed on a topic, by partition. */
  const committedOf = async (groupId: string, topic: string) => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return committed?.partitions;
    } finally {
      await admin.disconnect();
    }
  };
  const publish = (topic: string, values: Array<EventEnvelope | Buffer>) =>
    producer.send({
      topic,
      messages: values.map((value) => ({ key: "one-key", value: Buffer.isBuffer(value) ? value : Buffer.from(encodeEnvelope(value)) })),
    });

  /** failOnce: the project id whose event fails once; chunks: handleChunk; refusing: the project-id prefix accepts refuses. */
  type ConsumerOptions = { failOnce?: string; chunks?: boolean; refusing?: string };

  /** A consumer that records in `applied` what it applies. */
  async function consume(
    topic: string,
    groupId: string,
    options: ConsumerOptions = {},
  ): Promise<EventConsumer & { failed: () => boolean }> {
    let failed = false;
    const record = async (event: EventEnvelope, tx: SqlClient) => {
      await tx.$executeRaw`INSERT INTO applied (consumer, project_id) VALUES (${groupId}, ${event.projectId})`;
      if (event.projectId === options.failOnce && !failed) {
        failed = true;
        throw new Error("the handler fails once, after its write");
      }
    };
    const { refusing } = options;
    const common = {
      kafka,
      groupId,
      topics: [topic],
      db: schema.db,
      logger,
      fromBeginning: true,
      ...(refusing ? { accepts: async (event: EventEnvelope) => !event.projectId.startsWith(refusing) } : {}),
    };
    const consumer: EventConsumer = options.chunks
      ? createEventConsumer({
          ...common,
          handleChunk: async (events, tx) => {
            for (const event of events) await record(event, tx);
          },
        })
      : createEventConsumer({ ...common, handle: record });
    await consumer.start();
    return Object.assign(consumer, { failed: () => failed });
  }

  /** A topic and a consumer group of their own, and a consumer in that group. */
  async function startConsumer(options: ConsumerOptions = {}) {
    const { topic, drop } = await createTestTopic(kafka);
    const groupId = `kafka-test-${randomUUID()}`;
    const consumer = await consume(topic, groupId, options);
    return { topic, groupId, consumer, drop };
  }

  beforeAll(async () => {
    const herald = inject("herald");
    schema = await createScratchSchema(herald.databaseUrl);
    await schema.pool.query("CREATE TABLE applied (n bigserial PRIMARY KEY, consumer text NOT NULL, project_id text NOT NULL)");
    kafka = createKafka({ clientId: "event-consumer-test", brokers: herald.kafkaBrokers });
    producer = kafka.producer();
    await producer.connect();
  });

  afterAll(async () => {
    await producer?.disconnect();
    await schema?.drop();
  });

  it("applies each event once, in order, and skips what is not an event", async () => {
    const { topic, groupId, consumer, drop } = await startConsumer();
    try {
      const duplicate = eventOf("p-duplicate");
      await publish(topic, [eventOf("p-first"), duplicate, Buffer.from("not an envelope"), duplicate, eventOf("p-last")]);
      await vi.waitFor(async () => expect(await applied(groupId)).toContain("p-last"), eventually);
      expect(await applied(groupId)).toEqual(["p-first", "p-duplicate", "p-last"]);
      expect(await processed(groupId)).toBe(3);
    } finally {
      await consumer.stop();
      await drop();
    }
  });

  it("rolls back a handler that throws, and applies its event once when it is delivered again", async () => {
    const { topic, groupId, consumer, drop } = await startConsumer({ failOnce: "p-fails-once" });
    try {
      await publish(topic, [eventOf("p-before"), eventOf("p-fails-once"), eventOf("p-after")]);
      await vi.waitFor(async () => expect(await applied(groupId)).toContain("p-after"), eventually);
      expect(consumer.failed()).toBe(true);
      expect(await applied(groupId)).toEqual(["p-before", "p-fails-once", "p-after"]);
    } finally {
      await consumer.stop();
      await drop();
    }
  });

  it("applies nothing twice when its group reads the topic again from the start", async () => {
    const first = await startConsumer();
    const events = [eventOf("p-replay-1"), eventOf("p-replay-2")];
    try {
      await publish(first.topic, events);
      await vi.waitFor(async () => expect(await applied(first.groupId)).toHaveLength(2), eventually);
    } finally {
      await first.consumer.stop();
    }
    // The group's offsets back at the start: a redelivery of everything, as after a crash before the commit.
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.setOffsets({ groupId: first.groupId, topic: first.topic, partitions: [{ partition: 0, offset: "0" }] });
      const [committed] = await admin.fetchOffsets({ groupId: first.groupId, topics: [first.topic] });
      expect(committed?.partitions).toEqual([expect.objectContaining({ partition: 0, offset: "0" })]);
    } finally {
      await admin.disconnect();
    }
    const again = await consume(first.topic, first.groupId);
    try {
      const sentinel = eventOf("p-replay-sentinel");
      await publish(first.topic, [sentinel]);
      await vi.waitFor(async () => expect(await applied(first.groupId)).toContain("p-replay-sentinel"), eventually);
      expect(await applied(first.groupId)).toEqual(["p-replay-1", "p-replay-2", "p-replay-sentinel"]);
    } finally {
      await again.stop();
      await first.drop();
    }
  });

  it("hands a chunk handler each new event once, the first of two with one id", async () => {
    const { topic, groupId, consumer, drop } = await startConsumer({ chunks: true });
    try {
      const duplicate = eventOf("p-chunk-duplicate");
      await publish(topic, [eventOf("p-chunk-1"), duplicate, duplicate, eventOf("p-chunk-2")]);
      await vi.waitFor(async () => expect(await applied(groupId)).toContain("p-chunk-2"), eventually);
      expect(await applied(groupId)).toEqual(["p-chunk-1", "p-chunk-duplicate", "p-chunk-2"]);
      expect(await processed(groupId)).toBe(3);
    } finally {
      await consumer.stop();
      await drop();
    }
  });

  it("commits its offsets at most once a second rather than after every batch, and what it read when it stops", async () => {
    const { topic, drop } = await createTestTopic(kafka);
    const groupId = `kafka-test-${randomUUID()}`;
    let commits = 0;
    // The consumer's commits, counted through KafkaJS's instrumentation.
    const counting: Kafka = Object.assign(Object.create(kafka) as Kafka, {
      consumer: (config: Parameters<Kafka["consumer"]>[0]) => {
        const created = kafka.consumer(config);
        created.on(created.events.COMMIT_OFFSETS, () => {
          commits++;
        });
        return created;
      },
    });
    const consumer = createEventConsumer({
      kafka: counting,
      groupId,
      topics: [topic],
      db: schema.db,
      logger,
      fromBeginning: true,
      handle: async (event, tx) => {
        await tx.$executeRaw`INSERT INTO applied (consumer, project_id) VALUES (${groupId}, ${event.projectId})`;
      },
    });
    await consumer.start();
    try {
      const started = performance.now();
      // Each event read before the next is sent: a batch of its own, which KafkaJS's autoCommit would commit.
      for (let index = 0; index < 20; index++) {
        await publish(topic, [eventOf(`p-paced-${index}`)]);
        await vi.waitFor(async () => expect(await applied(groupId)).toHaveLength(index + 1), eventually);
      }
      expect(commits).toBeLessThanOrEqual(Math.floor((performance.now() - started) / commitIntervalMs) + 1);
    } finally {
      await consumer.stop();
    }
    // Stopping committed the rest: the group would read on after the last event.
    try {
      expect(await committedOf(groupId, topic)).toEqual([expect.objectContaining({ partition: 0, offset: "20" })]);
    } finally {
      await drop();
    }
  });

  it("passes over the events accepts refuses, without a transaction or a processed_events row, and commits past them", async () => {
    for (const chunks of [false, true]) {
      const { topic, groupId, consumer, drop } = await startConsumer({ chunks, refusing: "p-refused" });
      try {
        const duplicate = eventOf("p-wanted-twice");
        await publish(topic, [
          eventOf("p-refused-1"),
          eventOf("p-wanted-1"),
          eventOf("p-refused-2"),
          duplicate,
          duplicate,
          eventOf("p-refused-3"),
          eventOf("p-wanted-2"),
          eventOf("p-refused-4"),
        ]);
        // The group's committed offset passes the last event, which was refused: nothing is read again.
        await vi.waitFor(
          async () => expect(await committedOf(groupId, topic)).toEqual([expect.objectContaining({ partition: 0, offset: "8" })]),
          eventually,
        );
        expect(await applied(groupId)).toEqual(["p-wanted-1", "p-wanted-twice", "p-wanted-2"]);
        expect(await processed(groupId)).toBe(3);
      } finally {
        await consumer.stop();
        await drop();
      }
    }
  });

  it("starts a new consumer after a crash KafkaJS does not restart from, and reads on", async () => {
    const { topic, drop } = await createTestTopic(kafka);
    const groupId = `kafka-test-${randomUUID()}`;
    let created = 0;
    const read: string[] = [];
    const consumer = managedConsumer({
      create: () => {
        created += 1;
        return kafka.consumer({ groupId });
      },
      run: async (kafkaConsumer) => {
        const first = created === 1;
        await kafkaConsumer.connect();
        await kafkaConsumer.subscribe({ topics: [topic], fromBeginning: true });
        await kafkaConsumer.run({
          eachMessage: async ({ message }) => {
            // The crash of a group coordinator that is not found: not retriable, so KafkaJS leaves the consumer stopped.
            if (first) throw new KafkaJSNonRetriableError("Failed to find group coordinator");
            read.push(String(message.value));
          },
        });
      },
      logger,
      groupId,
      what: "test consumer",
    });
    await consumer.start();
    try {
      await producer.send({ topic, messages: [{ value: "after the crash" }] });
      await vi.waitFor(() => expect(read).toEqual(["after the crash"]), eventually);
      expect(created).toBe(2);
    } finally {
      await consumer.stop();
      await drop();
    }
  });
});
