import type { GaugeSample, Metrics } from "@herald/platform";
import type { Admin, Kafka } from "kafkajs";
import type pg from "pg";

/**
 * `herald_outbox_events{schema}` and `herald_outbox_oldest_event_age_seconds{schema}`: the events a service
 * committed and the relay has not published yet. A backlog that grows means Kafka cannot be reached (events wait,
 * none is lost); one that stays but does not grow means a relay that stopped.
 */
export function observeOutbox(metrics: Metrics, options: { pool: pg.Pool; schema: string }): void {
  metrics.observe({
    reader: "outbox",
    gauges: {
      herald_outbox_events: { help: "Events in the outbox that Kafka has not acknowledged yet", labelNames: ["schema"] },
      herald_outbox_oldest_event_age_seconds: {
        help: "Age of the oldest unpublished outbox event (0 when none waits)",
        labelNames: ["schema"],
      },
    },
    read: async () => {
      const { rows } = await options.pool.query<{ events: number; age: number | null }>(
        "SELECT count(*)::int AS events, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age FROM outbox_events",
      );
      const labels = { schema: options.schema };
      return {
        herald_outbox_events: [{ labels, value: rows[0]?.events ?? 0 }],
        herald_outbox_oldest_event_age_seconds: [{ labels, value: Math.max(0, rows[0]?.age ?? 0) }],
      };
    },
  });
}

/**
 * `herald_kafka_consumer_lag{group, topic}`: for each of the service's consumer groups, the messages of each topic
 * it has committed offsets in that it has not consumed yet (the partitions' high watermarks less the committed
 * offsets). A partition without a committed offset counts 0: its group has read nothing of it yet, and starts
 * at its end. Read from the broker at scrape time through an admin client of its own.
 */
export function observeConsumerLag(metrics: Metrics, options: { kafka: Kafka; groupIds: string[] }): void {
  // One admin client, connected once; a scrape that times out while it connects leaves the connection to the next.
  let admin: Promise<Admin> | undefined;
  const connectedAdmin = () => {
    admin ??= (async () => {
      const client = options.kafka.admin({ retry: { retries: 1 } });
      await client.connect();
      return client;
    })();
    return admin;
  };
  metrics.observe({
    reader: "kafka consumer lag",
    gauges: {
      herald_kafka_consumer_lag: { help: "Messages of a topic a consumer group has not consumed yet", labelNames: ["group", "topic"] },
    },
    read: async () => {
      const current = connectedAdmin();
      try {
        const connected = await current;
        const samples: GaugeSample[] = [];
        const highWatermarks = new Map<string, Map<number, number>>();
        for (const groupId of options.groupIds) {
          for (const { topic, partitions } of await connected.fetchOffsets({ groupId })) {
            let ends = highWatermarks.get(topic);
            if (!ends) {
              ends = new Map((await connected.fetchTopicOffsets(topic)).map((offsets) => [offsets.partition, Number(offsets.high)]));
              highWatermarks.set(topic, ends);
            }
            let lag = 0;
            for (const { partition, offset } of partitions) {
              const committed = Number(offset);
              if (committed >= 0) lag += Math.max(0, (ends.get(partition) ?? committed) - committed);
            }
            samples.push({ labels: { group: groupId, topic }, value: lag });
          }
        }
        return { herald_kafka_consumer_lag: samples };
      } catch (error) {
        // The next scrape connects anew: a broker that was away may have come back.
        if (admin === current) admin = undefined;
        await current.then((client) => client.disconnect()).catch(() => {});
        throw error;
      }
    },
  });
}
