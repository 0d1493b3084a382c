import { join } from "node:path";
import { brokerHostPort, isLocalHost, readConfig, redactUrl, urlHostPort } from "./config.js";
import { createKafkaServer, kafkaAnswers } from "./kafka.js";
import { withFileLock } from "./lock.js";
import { createPostgresServer, ensureDatabase, postgresAnswers } from "./postgres.js";
import type { LocalServer } from "./process.js";
import { createRedisServer, redisAnswers } from "./redis.js";

export { chromiumPath, ensureChromium } from "./chromium.js";
export { DEFAULT_CONFIG, type InfrastructureConfig } from "./config.js";
export { createKafkaBroker, type KafkaBroker, type KafkaBrokerOptions } from "./kafka.js";
export { type CaughtMail, type MailSink, type MailSinkOptions, startMailSink } from "./mail-sink.js";
/** For tests that stop and start a server of their own (tests/postgres-restart.test.ts, tests/redis-restart.test.ts). */
export { createPostgresServer, ensureDatabase } from "./postgres.js";
export type { LocalServer } from "./process.js";
export { createRedisServer } from "./redis.js";
export { type LocalSecrets, localSecretNames, localSecrets } from "./secrets.js";
export { type SupervisedProcess, type Supervisor, type SupervisorOptions, superviseProcesses } from "./supervisor.js";

export interface Infrastructure {
  databaseUrl: string;
  redisUrl: string;
  kafkaBrokers: string[];
  /** What this call started ("postgres" | "redis" | "kafka"); the rest was already running. */
  started: string[];
  /** Stops only what this call started. */
  stop(): Promise<void>;
}

export interface InfrastructureOptions {
  /** Workspace root: local servers live in <root>/.herald/<name>/. */
  root: string;
  /** Where DATABASE_URL, REDIS_URL and KAFKA_BROKERS are read; default process.env. */
  env?: NodeJS.ProcessEnv;
  log?: (message: string) => void;
}

interface Service {
  name: string;
  /** For messages: the URL or broker list, password masked. */
  address: string;
  host: string;
  answers(): Promise<boolean>;
  server(): LocalServer;
}

/**
 * Makes PostgreSQL, Redis and Kafka reachable at the configured addresses: reuses what
 * answers there, and starts the rest locally as detached processes that outlive us, so
 * later runs find and reuse them. The three start in parallel (Kafka is the slow one).
 */
export async function ensureInfrastructure(options: InfrastructureOptions): Promise<Infrastructure> {
  const config = readConfig(options.env ?? process.env);
  const log = options.log ?? (() => {});
  const local = { root: options.root, log };
  const kafka = brokerHostPort(config.kafkaBrokers[0] ?? "");
  const services: Service[] = [
    {
      name: "postgres",
      address: redactUrl(config.databaseUrl),
      host: urlHostPort("DATABASE_URL", config.databaseUrl, ["postgres:", "postgresql:"], 5432).host,
      answers: () => postgresAnswers(config.databaseUrl),
      server: () => createPostgresServer({ ...local, url: config.databaseUrl }),
    },
    {
      name: "redis",
      address: redactUrl(config.redisUrl),
      host: urlHostPort("REDIS_URL", config.redisUrl, ["redis:", "rediss:"], 6379).host,
      answers: () => redisAnswers(config.redisUrl),
      server: () => createRedisServer({ ...local, url: config.redisUrl }),
    },
    {
      name: "kafka",
      address: config.kafkaBrokers.join(","),
      // Several brokers listed means a real cluster somewhere: never start one for it.
      host: config.kafkaBrokers.length === 1 ? kafka.host : "",
      answers: () => kafkaAnswers(config.kafkaBrokers),
      server: () =>
        createKafkaServer({
          ...local,
          dataDir: join(options.root, ".herald", "kafka"),
          host: kafka.host,
          port: kafka.port,
          controllerPort: kafka.port + 1,
        }),
    },
  ];

  const results = await Promise.allSettled(services.map((service) => ensureService(service, options.root, log)));
  const started = results.flatMap((result) => (result.status === "fulfilled" && result.value ? [result.value] : []));
  const stop = async () => {
    await Promise.all(started.map((server) => server.stop()));
  };
  try {
    const failures = results.flatMap((result) => (result.status === "rejected" ? [result.reason as unknown] : []));
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) {
      throw new Error(failures.map((failure) => (failure as Error).message).join("\n\n"), { cause: failures[0] });
    }
    await ensureDatabase(config.databaseUrl);
  } catch (err) {
    // Leave nothing half-started behind a failed call.
    await stop().catch(() => {});
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    ...config,
    started: started.map((server) => server.name),
    stop: () => {
      stopping ??= stop();
      return stopping;
    },
  };
}

/** Resolves to the server when this call started it, undefined when something already answered. */
async function ensureService(service: Service, root: string, log: (message: string) => void): Promise<LocalServer | undefined> {
  if (await service.answers()) {
    log(`${service.name}: using ${service.address}`);
    return undefined;
  }
  if (!isLocalHost(service.host)) {
    throw new Error(`${service.name} does not answer at ${service.address}, and that is not a local address to start it on`);
  }
  const server = service.server();
  // Under the lock, ask again: another process may have started it while we waited.
  const startedHere = await withFileLock(
    join(root, ".herald", service.name, "start.lock"),
    async () => !(await service.answers()) && (await server.start()),
  );
  if (!startedHere) log(`${service.name}: using ${service.address}, started by another run`);
  return startedHere ? server : undefined;
}

/** Stops every local server recorded in a pid file under <root>/.herald; returns their names. */
export async function stopLocalInfrastructure(options: InfrastructureOptions): Promise<string[]> {
  const config = readConfig(options.env ?? process.env);
  const local = { root: options.root, log: options.log ?? (() => {}) };
  const kafka = brokerHostPort(config.kafkaBrokers[0] ?? "");
  const servers = [
    createPostgresServer({ ...local, url: config.databaseUrl }),
    createRedisServer({ ...local, url: config.redisUrl }),
    createKafkaServer({
      ...local,
      dataDir: join(options.root, ".herald", "kafka"),
      port: kafka.port,
      controllerPort: kafka.port + 1,
    }),
  ];
  const stopped = await Promise.all(servers.map(async (server) => ((await server.stop()) ? [server.name] : [])));
  return stopped.flat();
}
