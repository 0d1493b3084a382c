import type { Kafka, Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createKafka } from "./kafka-client.js";
import { createTestTopic } from "./test-support/scratch-schema.js";

describe("a Kafka connection", () => {
  let kafka: Kafka;
  let producer: Producer;
  let topic: Awaited<ReturnType<typeof createTestTopic>>;

  beforeAll(async () => {
    kafka = createKafka({ clientId: "kafka-client-test", brokers: inject("herald").kafkaBrokers });
    topic = await createTestTopic(kafka);
    producer = kafka.producer();
    await producer.connect();
  });

  afterAll(async () => {
    await producer?.disconnect();
    await topic?.drop();
  });

  // kafkajs's request queue, unpatched, checks for waiting requests every millisecond of an open connection though none
  // waits (tulios/kafkajs#1556): about 800 wake-ups a second in every idle process (patches/kafkajs@2.2.4.patch).
  it("sets no timers while no request waits for it", async () => {
    await producer.send({ topic: topic.topic, messages: [{ value: "one" }] });
    const setTimeoutOf = globalThis.setTimeout;
    let byRequestQueue = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      if (new Error().stack?.includes("requestQueue")) byRequestQueue += 1;
      return setTimeoutOf(...args);
    }) as typeof setTimeout;
    try {
      await new Promise((resolve) => setTimeoutOf(resolve, 500));
    } finally {
      globalThis.setTimeout = setTimeoutOf;
    }
    expect(byRequestQueue).toBe(0);
    // And the connection still works: a send after the idle spell is answered.
    await producer.send({ topic: topic.topic, messages: [{ value: "two" }] });
  });
});
