import { randomUUID } from "node:crypto";
import { decodeEnvelope, managedConsumer, topics } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import type { Kafka } from "kafkajs";
import type { ApiKeyCache } from "./api-key-cache.js";
import type { SessionCache } from "./session-cache.js";

/**
 * Every gateway replica reads herald.project-lifecycle.v1 in a consumer group of its
 * own (each replica must see every event) and drops cached keys and sessions of a
 * project whose keys, status or existence changed, so that a disabled project's keys
 * and its members' sessions are refused on every replica. Kafka being down only delays
 * this; the caches' TTLs bound how long a stale entry can live.
 */
export function createLifecycleListener(options: { kafka: Kafka; logger: Logger; keys: ApiKeyCache; sessions: SessionCache }) {
  const forgetProject = (projectId: string) => {
    options.keys.evictProject(projectId);
    options.sessions.forgetProject(projectId);
  };
  let markJoined: () => void = () => {};
  const joined = new Promise<void>((resolve) => {
    markJoined = resolve;
  });

  const listener = managedConsumer({
    create: () => {
      const consumer = options.kafka.consumer({ groupId: `gateway.cache.${randomUUID()}` });
      consumer.on(consumer.events.GROUP_JOIN, () => markJoined());
      return consumer;
    },
    run: async (consumer) => {
      await consumer.connect();
      await consumer.subscribe({ topic: topics.projectLifecycle, fromBeginning: false });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (!message.value) return;
          try {
            forgetProject(decodeEnvelope(message.value).projectId);
          } catch (error) {
            options.logger.warn({ err: error }, "skipping a lifecycle message that is not an event envelope");
          }
        },
      });
    },
    logger: options.logger,
    groupId: "gateway.cache.*",
    what: "project lifecycle listener",
    // Cached keys expire by their TTL meanwhile.
    startTimeoutMs: Number.POSITIVE_INFINITY,
  });

  return {
    /** Starts in the background: the gateway serves while Kafka is away. */
    start(): void {
      void listener.start();
    },
    /** Resolves once the listener receives events (its consumer joined its group). */
    joined: () => joined,
    stop: () => listener.stop(),
  };
}
