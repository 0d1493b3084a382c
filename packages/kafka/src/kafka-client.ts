import { readFileSync } from "node:fs";
import { Kafka, type KafkaConfig, logLevel, type SASLOptions } from "kafkajs";

export type KafkaSaslMechanism = "plain" | "scram-sha-256" | "scram-sha-512";

/** Where the brokers are and how to authenticate to them: what kafkaConnectionOf reads from the environment. */
export interface KafkaConnection {
  brokers: string[];
  /** TLS to every broker; `ca` (PEM) replaces the system's CAs. The brokers' names are always verified. */
  tls?: { ca?: string } | undefined;
  sasl?: { mechanism: KafkaSaslMechanism; username: string; password: string } | undefined;
}

/** The variables of @herald/platform's kafkaEnvironment, as a process's parsed config holds them. */
export interface KafkaSettings {
  KAFKA_BROKERS: string[];
  KAFKA_TLS: boolean;
  KAFKA_TLS_CA_FILE?: string | undefined;
  KAFKA_SASL_MECHANISM?: KafkaSaslMechanism | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
}

/** A process's Kafka connection from its config; reads the CA file, which the config checked is readable. */
export function kafkaConnectionOf(config: KafkaSettings): KafkaConnection {
  const { KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: username, KAFKA_SASL_PASSWORD: password } = config;
  if (mechanism && (!username || !password)) {
    // kafkaSaslCredentials refuses this configuration; a caller that skipped it must not connect without credentials.
    throw new Error("KAFKA_SASL_MECHANISM needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD");
  }
  return {
    brokers: config.KAFKA_BROKERS,
    tls: config.KAFKA_TLS ? (config.KAFKA_TLS_CA_FILE ? { ca: readFileSync(config.KAFKA_TLS_CA_FILE, "utf8") } : {}) : undefined,
    sasl: mechanism && username && password ? { mechanism, username, password } : undefined,
  };
}

/** The kafkajs options of a connection: TLS with the certificate and host name checked, SASL as named. */
export function kafkaClientOptions(connection: KafkaConnection): Pick<KafkaConfig, "brokers" | "ssl" | "sasl"> {
  const { tls, sasl } = connection;
  return {
    brokers: connection.brokers,
    ...(tls ? { ssl: { rejectUnauthorized: true, ...(tls.ca ? { ca: [tls.ca] } : {}) } } : {}),
    ...(sasl ? { sasl: saslOptionsOf(sasl) } : {}),
  };
}

function saslOptionsOf(sasl: NonNullable<KafkaConnection["sasl"]>): SASLOptions {
  // kafkajs types each mechanism as its own literal, so the union is spelled out.
  switch (sasl.mechanism) {
    case "plain":
      return { mechanism: "plain", username: sasl.username, password: sasl.password };
    case "scram-sha-256":
      return { mechanism: "scram-sha-256", username: sasl.username, password: sasl.password };
    case "scram-sha-512":
      return { mechanism: "scram-sha-512", username: sasl.username, password: sasl.password };
  }
}

/**
 * A kafkajs client that gives up quickly on a broker that is down: callers (the
 * outbox relay, consumers) own the retry loop and report an outage once, so a Kafka
 * outage delays events instead of blocking a request or flooding the logs.
 */
export function createKafka(options: { clientId: string } & KafkaConnection): Kafka {
  return new Kafka({
    clientId: options.clientId,
    ...kafkaClientOptions(options),
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 200, maxRetryTime: 2_000, retries: 3 },
    logLevel: logLevel.NOTHING,
  });
}
