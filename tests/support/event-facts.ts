import { randomUUID } from "node:crypto";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { createKafka, decodeEnvelope, type EventEnvelope, ensureTopics, payloadOf } from "@herald/kafka";
import { startGroupAtEnd, waitUntil } from "@herald/testing";

export interface ReceivedFact {
  envelope: EventEnvelope;
  /** The Kafka message's key. */
  key: string;
}

/**
 * A consumer of its own (a group no one else has) on one topic, started at the topic's end
 * before the test acts, keeping the events of one project: what a producer publishes
 * because of the test's action, and nothing before it.
 */
export async function watchTopic(options: { brokers: string[]; topic: string; projectId: string }) {
  const kafka = createKafka({ clientId: `event-facts-${randomUUID()}`, brokers: options.brokers });
  const groupId = `event-facts-${randomUUID()}`;
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [options.topic]);
  await startGroupAtEnd(admin, groupId, options.topic);
  await admin.disconnect();
  const consumer = kafka.consumer({ groupId });
  const received: ReceivedFact[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic: options.topic, fromBeginning: false });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const envelope = decodeEnvelope(message.value ?? Buffer.alloc(0));
      if (envelope.projectId === options.projectId) received.push({ envelope, key: message.key?.toString() ?? "" });
    },
  });
  return {
    received,
    /** Waits for the first event that `matches`, and answers it. */
    async next(matches: (fact: ReceivedFact) => boolean, timeoutMs = 60_000): Promise<ReceivedFact> {
      await waitUntil(async () => received.some(matches), { timeoutMs });
      return received.find(matches) as ReceivedFact;
    },
    stop: () => consumer.disconnect(),
  };
}

/** The event's payload, which must be of this type. */
export function payloadIn<Desc extends DescMessage>(fact: ReceivedFact, schema: Desc): MessageShape<Desc> {
  const payload = payloadOf(fact.envelope, schema);
  if (!payload) throw new Error(`${fact.envelope.type} carries no ${schema.typeName}`);
  return payload;
}
