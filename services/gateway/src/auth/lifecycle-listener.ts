import { randomUUID } from "node:crypto";
import { decodeEnvelope, topics } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Consumer, Kafka } from "kafkajs";

/**
 * Every gateway replica reads herald.project-lifecycle.v1 in a consumer group of its
 * own (each replica must see every event) and drops cached keys of a project whose
 * keys, status or existence changed. Kafka being down only delays this; the cache's
 * TTL bounds how long a stale key can live.
 */
export function createLifecycleListener(options: { kafka: Kafka; logger: Logger; onProjectChanged: (projectId: string) => void }) {
  let consumer: Consumer | undefined;
  let stopped = false;
  let markJoined: () => void = () => {};
  const joined = new Promise<void>((resolve) => {
    markJoined = resolve;
  });

  async function run(): Promise<void> {
    for (let attempt = 1; !stopped; attempt++) {
      try {
        consumer = options.kafka.consumer({ groupId: `gateway.cache.${randomUUID()}` });
        consumer.on(consumer.events.GROUP_JOIN, () => markJoined());
        await consumer.connect();
        await consumer.subscribe({ topic: topics.projectLifecycle, fromBeginning: false });
        await consumer.run({
          eachMessage: async ({ message }) => {
            if (!message.value) return;
            try {
              options.onProjectChanged(decodeEnvelope(message.value).projectId);
            } catch (error) {
              options.logger.warn({ err: error }, "skipping a lifecycle message that is not an event envelope");
            }
          },
        });
        return;
      } catch (error) {
        if (attempt === 1 || attempt % 10 === 0) {
          options.logger.warn({ err: error, attempt }, "cannot follow project lifecycle events yet; cached keys expire by TTL meanwhile");
        }
        await consumer?.disconnect().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000 * attempt, 15_000)));
      }
    }
  }

  return {
    /** Starts in the background: the gateway serves while Kafka is away. */
    start(): void {
      void run();
    },
    /** Resolves once the listener receives events (its consumer joined its group). */
    joined: () => joined,
    async stop(): Promise<void> {
      stopped = true;
      await consumer?.disconnect();
    },
  };
}
