import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { createSqlPool } from "@herald/db";
import { createKafkaBroker, type KafkaBroker } from "@herald/devinfra";
import {
  createEnvelope,
  createEventConsumer,
  createKafka,
  createOutboxRelay,
  decodeEnvelope,
  encodeEnvelope,
  ensureTopics,
  writeOutboxEvent,
} from "@herald/kafka";
import { createLogger, startTelemetry, type Telemetry } from "@herald/platform";
import { collectMessages, createTestDatabase, freePort, type TestDatabase, waitUntil } from "@herald/testing";
import { context, ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb, type Db } from "../db/client.js";

const topic = "herald.project-lifecycle.v1";
const logger = createLogger({ name: "outbox-test", level: "silent" });
const root = fileURLToPath(new URL("../../../..", import.meta.url));

const lifecycleEvent = (projectId: string, contactId = "") =>
  createEnvelope({
    type: "test.happened",
    projectId,
    contactId,
    source: "identity",
    payloadSchema: StructSchema,
    payload: create(StructSchema),
  });

const count = async (db: Db, table: "outbox_events" | "things" | "counters") =>
  Number((await db.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM ${table}`))[0]?.n);

// This file runs its own Kafka broker, because it stops and restarts it.
describe("the transactional outbox", () => {
  let database: TestDatabase;
  let db: Db;
  let pool: ReturnType<typeof createSqlPool>;
  let broker: KafkaBroker;
  let kafka: Kafka;
  let dataDir: string;
  let telemetry: Telemetry;

  beforeAll(async () => {
    telemetry = startTelemetry({ serviceName: "outbox-test", env: {} });
    database = await createTestDatabase(inject("herald").databaseUrl);
    db = createDb(database.databaseUrl, "identity");
    pool = createSqlPool(database.databaseUrl, "identity", () => {});
    await db.$executeRawUnsafe("CREATE TABLE things (id text PRIMARY KEY)");
    await db.$executeRawUnsafe("CREATE TABLE counters (id text PRIMARY KEY, n int NOT NULL)");
    dataDir = await mkdtemp(join(tmpdir(), "herald-kafka-"));
    broker = createKafkaBroker({ root, dataDir, port: await freePort(), controllerPort: await freePort() });
    await broker.start();
    kafka = createKafka({ clientId: "outbox-test", brokers: broker.brokers });
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [topic], 1);
    await admin.disconnect();
  }, 180_000);

  afterAll(async () => {
    await db?.$disconnect();
    await pool?.end();
    await database?.drop();
    await broker?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    await telemetry?.shutdown();
  });

  it("commits a state change and its event together, or neither", async () => {
    await db.$transaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO things (id) VALUES ('kept')`;
      await writeOutboxEvent(tx, topic, lifecycleEvent("p-kept"));
    });
    await expect(
      db.$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO things (id) VALUES ('rolled-back')`;
        await writeOutboxEvent(tx, topic, lifecycleEvent("p-rolled-back"));
        throw new Error("the change fails after both writes");
      }),
    ).rejects.toThrow("the change fails");
    expect(await count(db, "things")).toBe(1);
    const rows = await db.outboxEvent.findMany();
    expect(rows.map((row) => decodeEnvelope(row.payload).projectId)).toEqual(["p-kept"]);
  });

  it("keeps events while Kafka is down and publishes them, with their trace, once it is back", async () => {
    await broker.stop();
    const relay = createOutboxRelay({ pool, producer: kafka.producer({ idempotent: true }), logger, pollIntervalMs: 100 });
    relay.start();
    let received: Awaited<ReturnType<typeof collectMessages>> | undefined;
    try {
      const traceId = "0af7651916cd43dd8448eb211c80319c";
      const span = trace.wrapSpanContext({ traceId, spanId: "b7ad6b7169203331", traceFlags: TraceFlags.SAMPLED });
      const event = lifecycleEvent("p-outage");
      await context.with(trace.setSpan(ROOT_CONTEXT, span), () => db.$transaction((tx) => writeOutboxEvent(tx, topic, event)));
      relay.nudge();

      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(await count(db, "outbox_events")).toBe(2);

      await broker.start();
      await waitUntil(async () => (await count(db, "outbox_events")) === 0, { timeoutMs: 60_000 });
      received = await collectMessages(kafka, topic);
      const messages = await received.waitFor(2, 30_000);
      const published = messages.map((message) => decodeEnvelope(message.value));
      expect(published.map((envelope) => envelope.projectId)).toEqual(["p-kept", "p-outage"]);
      const outage = messages[1];
      expect(outage?.key).toBe("p-outage");
      expect(outage?.headers["event-type"]).toBe("test.happened");
      expect(outage?.headers.traceparent).toContain(traceId);
    } finally {
      await relay.stop();
      await received?.stop();
    }
  }, 150_000);

  it("publishes a stream of nudged events in batches, at most one publish a linger", async () => {
    const lingerMs = 300;
    const producer = kafka.producer({ idempotent: true });
    let publishes = 0;
    const sendBatch = producer.sendBatch.bind(producer);
    producer.sendBatch = (batch) => {
      publishes++;
      return sendBatch(batch);
    };
    const relay = createOutboxRelay({ pool, producer, logger, lingerMs });
    relay.start();
    const received = await collectMessages(kafka, topic, (message) => decodeEnvelope(message.value).projectId.startsWith("p-stream-"));
    try {
      const events = Array.from({ length: 20 }, (_, index) => lifecycleEvent(`p-stream-${index}`));
      const started = performance.now();
      for (const event of events) {
        await db.$transaction((tx) => writeOutboxEvent(tx, topic, event));
        relay.nudge();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await waitUntil(async () => (await count(db, "outbox_events")) === 0, { timeoutMs: 30_000 });
      const elapsed = performance.now() - started;

      const messages = await received.waitFor(20, 30_000);
      const published = messages.map((message) => decodeEnvelope(message.value).projectId);
      expect(published).toEqual(events.map((event) => event.projectId));
      // One publish per nudge without the linger; with it, one at the first nudge and one a linger after each publish.
      expect(publishes).toBeLessThanOrEqual(Math.ceil(elapsed / lingerMs) + 1);
    } finally {
      await relay.stop();
      await received.stop();
    }
  }, 90_000);

  it("applies an event delivered twice only once", async () => {
    await db.$executeRaw`INSERT INTO counters (id, n) VALUES ('applied', 0)`;
    const seenTraces: string[] = [];
    const consumer = createEventConsumer({
      kafka,
      groupId: "outbox-test-consumer",
      topics: [topic],
      db,
      logger,
      fromBeginning: true,
      handle: async (event, tx) => {
        if (event.projectId !== "p-duplicate" && event.projectId !== "p-sentinel") return;
        seenTraces.push(trace.getActiveSpan()?.spanContext().traceId ?? "");
        await tx.$executeRaw`UPDATE counters SET n = n + 1 WHERE id = 'applied'`;
      },
    });
    const producer = kafka.producer();
    await producer.connect();
    try {
      await consumer.start();
      const duplicate = lifecycleEvent("p-duplicate", "contact-1");
      const sentinel = lifecycleEvent("p-sentinel", "contact-1");
      // Same key, same partition: the sentinel is handled after both copies of the duplicate.
      await producer.send({
        topic,
        messages: [duplicate, duplicate, sentinel].map((envelope) => ({ key: "contact-1", value: Buffer.from(encodeEnvelope(envelope)) })),
      });
      await waitUntil(async () => (await db.processedEvent.count({ where: { eventId: sentinel.eventId } })) === 1, { timeoutMs: 60_000 });
      const [row] = await db.$queryRaw<Array<{ n: number }>>`SELECT n FROM counters WHERE id = 'applied'`;
      expect(row?.n).toBe(2);
      expect(seenTraces).toHaveLength(2);
    } finally {
      await producer.disconnect();
      await consumer.stop();
    }
  }, 120_000);
});
