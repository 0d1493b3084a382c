import { create } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import type { Kafka } from "kafkajs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createEnvelope, decodeEnvelope, type EventEnvelope } from "./envelope.js";
import { createKafka } from "./kafka-client.js";
import { writeOutboxEvent } from "./outbox.js";
import { createOutboxRelay } from "./outbox-relay.js";
import { createScratchSchema, createTestTopic, readTopic, type ScratchSchema } from "./test-support/scratch-schema.js";

const logger = pino({ level: "silent" });
const eventually = { timeout: 60_000, interval: 100 };

const eventOf = (projectId: string, contactId = ""): EventEnvelope =>
  createEnvelope({
    type: "test.happened",
    projectId,
    contactId,
    source: "kafka-test",
    payloadSchema: StructSchema,
    payload: create(StructSchema),
  });

describe("the outbox relay", () => {
  let schema: ScratchSchema;
  let kafka: Kafka;
  let topic: Awaited<ReturnType<typeof createTestTopic>>;
  let received: Awaited<ReturnType<typeof readTopic>>;

  const waiting = async () => Number((await schema.pool.query<{ n: string }>("SELECT count(*) AS n FROM outbox_events")).rows[0]?.n);
  const write = (events: EventEnvelope[]) =>
    schema.db.$transaction(async (tx) => {
      for (const event of events) await writeOutboxEvent(tx, topic.topic, event);
    });
  /** The project ids received so far of the events whose ids are given, in the order Kafka holds them. */
  const receivedOf = (events: EventEnvelope[]) => {
    const ids = new Set(events.map((event) => event.eventId));
    return received.messages
      .map((message) => decodeEnvelope(message.value ?? Buffer.alloc(0)))
      .filter((envelope) => ids.has(envelope.eventId))
      .map((envelope) => envelope.projectId);
  };

  beforeAll(async () => {
    const herald = inject("herald");
    schema = await createScratchSchema(herald.databaseUrl);
    kafka = createKafka({ clientId: "outbox-relay-test", brokers: herald.kafkaBrokers });
    topic = await createTestTopic(kafka);
    received = await readTopic(kafka, topic.topic);
  });

  afterAll(async () => {
    await received?.stop();
    await topic?.drop();
    await schema?.drop();
  });

  it("flushes every waiting event in the order written, as a message keyed and labelled by its event, and empties the outbox", async () => {
    const events = [
      eventOf("p-flush-1", "contact-1"),
      eventOf("p-flush-2"),
      eventOf("p-flush-3"),
      eventOf("p-flush-4"),
      eventOf("p-flush-5"),
    ];
    await write(events);
    const relay = createOutboxRelay({ pool: schema.pool, producer: kafka.producer({ idempotent: true }), logger, batchSize: 2 });
    try {
      expect(await relay.flush()).toBe(5);
      expect(await waiting()).toBe(0);
      await vi.waitFor(() => expect(receivedOf(events)).toHaveLength(5), eventually);
      expect(receivedOf(events)).toEqual(["p-flush-1", "p-flush-2", "p-flush-3", "p-flush-4", "p-flush-5"]);
      const first = received.messages.find((message) => decodeEnvelope(message.value ?? Buffer.alloc(0)).eventId === events[0]?.eventId);
      expect(first?.key?.toString()).toBe("contact-1");
      expect(first?.headers?.["event-type"]?.toString()).toBe("test.happened");
      expect(await relay.flush()).toBe(0);
    } finally {
      await relay.stop();
    }
  });

  it("publishes what is written while it runs, once each, even with two relays on one schema", async () => {
    const relays = [1, 2].map(() =>
      createOutboxRelay({ pool: schema.pool, producer: kafka.producer({ idempotent: true }), logger, pollIntervalMs: 100 }),
    );
    for (const relay of relays) relay.start();
    try {
      const events = Array.from({ length: 30 }, (_, index) => eventOf(`p-running-${index}`));
      for (const [index, event] of events.entries()) {
        await write([event]);
        relays[index % 2]?.nudge();
      }
      const sentinel = eventOf("p-running-sentinel");
      await write([sentinel]);
      for (const relay of relays) relay.nudge();
      // One partition: once the sentinel, written last, is there, everything written before it is too.
      await vi.waitFor(() => expect(receivedOf([sentinel])).toHaveLength(1), eventually);
      expect(receivedOf(events)).toEqual(events.map((event) => event.projectId));
      expect(await waiting()).toBe(0);
    } finally {
      await Promise.all(relays.map((relay) => relay.stop()));
    }
  });

  it("keeps the events when Kafka cannot be reached, and flush says so", async () => {
    const events = [eventOf("p-unreachable")];
    await write(events);
    const nowhere = createKafka({ clientId: "outbox-relay-test-nowhere", brokers: ["127.0.0.1:1"] });
    const relay = createOutboxRelay({ pool: schema.pool, producer: nowhere.producer(), logger });
    try {
      await expect(relay.flush()).rejects.toThrow();
      expect(await waiting()).toBe(1);
    } finally {
      await relay.stop();
    }
    const reachable = createOutboxRelay({ pool: schema.pool, producer: kafka.producer({ idempotent: true }), logger });
    try {
      expect(await reachable.flush()).toBe(1);
      await vi.waitFor(() => expect(receivedOf(events)).toEqual(["p-unreachable"]), eventually);
    } finally {
      await reachable.stop();
    }
  });

  it("publishes nothing of a transaction that rolled back", async () => {
    const rolledBack = eventOf("p-rolled-back");
    await expect(
      schema.db.$transaction(async (tx) => {
        await writeOutboxEvent(tx, topic.topic, rolledBack);
        throw new Error("the change fails after its event was written");
      }),
    ).rejects.toThrow("the change fails");
    const kept = eventOf("p-kept");
    await write([kept]);
    const relay = createOutboxRelay({ pool: schema.pool, producer: kafka.producer({ idempotent: true }), logger });
    try {
      expect(await relay.flush()).toBe(1);
      await vi.waitFor(() => expect(receivedOf([kept])).toHaveLength(1), eventually);
      expect(receivedOf([rolledBack])).toEqual([]);
    } finally {
      await relay.stop();
    }
  });
});
