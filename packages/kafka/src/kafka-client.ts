import { Kafka, logLevel } from "kafkajs";

/**
 * A kafkajs client that gives up quickly on a broker that is down: callers (the
 * outbox relay, consumers) own the retry loop and report an outage once, so a Kafka
 * outage delays events instead of blocking a request or flooding the logs.
 */
export function createKafka(options: { clientId: string; brokers: string[] }): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 200, maxRetryTime: 2_000, retries: 3 },
    logLevel: logLevel.NOTHING,
  });
}
