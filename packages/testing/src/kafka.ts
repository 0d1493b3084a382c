import { randomUUID } from "node:crypto";
import { type Admin, type Consumer, Kafka, logLevel } from "kafkajs";

export function createTestKafka(brokers: string[]): Kafka {
  return new Kafka({ clientId: `test-${randomUUID()}`, brokers, logLevel: logLevel.NOTHING, retry: { retries: 3 } });
}

/**
 * Commits a new consumer group's offsets at the current end of the topic, so that a consumer started in it reads
 * what is published from now on and nothing before. A test's consumer with a group of its own would otherwise read
 * the topic from its beginning, every event that earlier tests of the run left there (thousands, on
 * herald.email-activity.v1), before the test's own.
 */
export async function startGroupAtEnd(admin: Admin, groupId: string, topic: string): Promise<void> {
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.setOffsets({ groupId, topic, partitions: offsets.map(({ partition, high }) => ({ partition, offset: high })) });
}

export interface CollectedMessage {
  key: string | null;
  value: Buffer;
  headers: Record<string, string>;
}

/**
 * Reads a topic from the beginning in a group of its own and keeps every message
 * matching the filter, so a test can wait for the ones it caused.
 */
export async function collectMessages(
  kafka: Kafka,
  topic: string,
  filter: (message: CollectedMessage) => boolean = () => true,
): Promise<{
  messages: CollectedMessage[];
  waitFor(count: number, timeoutMs?: number): Promise<CollectedMessage[]>;
  stop(): Promise<void>;
}> {
  const consumer: Consumer = kafka.consumer({ groupId: `test-${randomUUID()}` });
  const messages: CollectedMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (!message.value) return;
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([key, value]) => [key, String(value)]));
      const collected = { key: message.key?.toString() ?? null, value: message.value, headers };
      if (filter(collected)) messages.push(collected);
    },
  });
  return {
    messages,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} messages on ${topic}, saw ${messages.length}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return messages;
    },
    stop: () => consumer.disconnect(),
  };
}
