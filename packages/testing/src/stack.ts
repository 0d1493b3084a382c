import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { applyMigrations } from "@herald/db";
import { localSecrets } from "@herald/devinfra";
import { Health, HealthCheckResponse_ServingStatus } from "@herald/proto/grpc/health/v1/health_pb";
import { freePort, type ServiceProcess, spawnService, waitUntil } from "./service-process.js";

export const serviceNames = ["identity", "contacts", "delivery", "campaigns", "automation", "webhooks"] as const;
export type ServiceName = (typeof serviceNames)[number];
/** The services that publish facts to Kafka, each through a transactional outbox of its own; webhooks only consumes them. */
export const producerNames = ["identity", "contacts", "delivery", "campaigns", "automation"] as const satisfies readonly ServiceName[];

/** The repository root: this file is packages/testing/{src,dist}/stack.*. */
export const repoRoot = join(import.meta.dirname, "..", "..", "..");

export const repoPath = (path: string) => join(repoRoot, path);

export const entryOf = (name: ServiceName | "gateway") => repoPath(`services/${name}/dist/main.js`);

/** Migrates every service's schema in the given database, as each service would at start. */
export async function migrateAllServices(databaseUrl: string): Promise<void> {
  for (const name of serviceNames) {
    await applyMigrations({ databaseUrl, schema: name, migrationsDir: repoPath(`services/${name}/prisma/migrations`) });
  }
}

/**
 * The secrets production requires, kept in .herald/: the same for every process, whoever started it. This process
 * takes INTERNAL_RPC_TOKEN too, unless it has one, so that its own RPC clients (a bench's, a test's) are served.
 */
function stackSecrets(): NodeJS.ProcessEnv {
  const secrets = localSecrets(repoRoot);
  process.env.INTERNAL_RPC_TOKEN ||= secrets.INTERNAL_RPC_TOKEN;
  return { ...secrets, INTERNAL_RPC_TOKEN: process.env.INTERNAL_RPC_TOKEN };
}

export const urlVariableOf = (name: ServiceName) => `${name.toUpperCase()}_URL`;

export async function isServing(url: string): Promise<boolean> {
  const client = createClient(Health, createGrpcTransport({ baseUrl: url, defaultTimeoutMs: 1_000 }));
  const { status } = await client.check({ service: "" });
  return status === HealthCheckResponse_ServingStatus.SERVING;
}

export interface InfrastructureUrls {
  databaseUrl: string;
  redisUrl: string;
  kafkaBrokers: string[];
}

/** Starts one data service as its own process and waits until it serves. */
export async function startService(
  name: ServiceName,
  infra: InfrastructureUrls,
  port?: number,
  env: NodeJS.ProcessEnv = {},
  /**
   * How long it may take to serve: longer after a crash, when its consumer groups wait for the dead member's
   * session to lapse. By default a minute, since a busy machine starts six Node processes slowly.
   */
  timeoutMs = 60_000,
): Promise<{ process: ServiceProcess; url: string }> {
  const url = `http://127.0.0.1:${port ?? (await freePort())}`;
  const process = spawnService({
    name,
    entry: entryOf(name),
    env: {
      ...stackSecrets(),
      DATABASE_URL: infra.databaseUrl,
      REDIS_URL: infra.redisUrl,
      KAFKA_BROKERS: infra.kafkaBrokers.join(","),
      LISTEN_HOST: "127.0.0.1",
      // Each test database is its own deployment: its services must not share consumer groups with another's.
      KAFKA_GROUP_PREFIX: `${new URL(infra.databaseUrl).pathname.slice(1)}.`,
      ...env,
      [urlVariableOf(name)]: url,
    },
  });
  await waitUntil(() => isServing(url), { timeoutMs, describe: () => `${name} did not become healthy:\n${process.output()}` }).catch(
    async (error: unknown) => {
      // Given up on, it must not keep running: it would join the next run's consumer groups.
      await process.stop();
      throw error;
    },
  );
  return { process, url };
}

/** One process of every service and a gateway in front of them, each told where the others of its set are. */
export interface StackProcesses {
  gatewayUrl: string;
  serviceUrls: Record<ServiceName, string>;
  /** Where each process serves its Prometheus metrics (METRICS_PORT): `<url>/metrics`. */
  metricsUrls: Record<ServiceName | "gateway", string>;
  /** The processes themselves, the gateway last (a bench reads each one's CPU by its pid). */
  processes: ServiceProcess[];
  stop(): Promise<void>;
}

export interface Stack extends StackProcesses {
  /**
   * Starts one more process of every service and of the gateway on the same database, Redis and Kafka: a
   * second replica of each, as a Deployment scaled to two runs them. The new services call each other and
   * the new gateway calls them; every process keeps the first gateway's PUBLIC_URL. The stack's stop()
   * stops them too.
   */
  addReplicas(): Promise<StackProcesses>;
}

/**
 * Starts every service, then the gateway, on free ports. `publicUrl`: the PUBLIC_URL of every process,
 * by default this set's own gateway.
 */
async function startProcesses(
  infra: InfrastructureUrls,
  env: NodeJS.ProcessEnv,
  timeoutMs: number | undefined,
  publicUrl?: string,
): Promise<StackProcesses> {
  // Ports first: every service is told where the others are (delivery calls contacts) and where the gateway answers.
  const ports = await Promise.all(serviceNames.map(() => freePort()));
  const gatewayPort = await freePort();
  const metricsPorts = await Promise.all([...serviceNames, "gateway" as const].map(async (name) => [name, await freePort()] as const));
  const metricsUrls = Object.fromEntries(metricsPorts.map(([name, port]) => [name, `http://127.0.0.1:${port}`])) as Stack["metricsUrls"];
  const metricsPortOf = (name: ServiceName | "gateway") => new URL(metricsUrls[name]).port;
  const serviceUrls = Object.fromEntries(serviceNames.map((name, index) => [name, `http://127.0.0.1:${ports[index]}`])) as Record<
    ServiceName,
    string
  >;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const shared = {
    ...env,
    PUBLIC_URL: publicUrl ?? gatewayUrl,
    ...Object.fromEntries(serviceNames.map((name) => [urlVariableOf(name), serviceUrls[name]])),
  };
  const starting = await Promise.allSettled(
    serviceNames.map((name, index) => startService(name, infra, ports[index], { ...shared, METRICS_PORT: metricsPortOf(name) }, timeoutMs)),
  );
  const started = starting.flatMap((result) => (result.status === "fulfilled" ? [result.value.process] : []));
  const stopServices = () => Promise.all(started.map((process) => process.stop()));
  const failed = starting.find((result) => result.status === "rejected");
  if (failed) {
    // A stack that did not start leaves no process behind: a bench or test run that gave up would leave them serving.
    await stopServices();
    throw failed.reason;
  }
  const gateway = spawnService({
    name: "gateway",
    entry: entryOf("gateway"),
    env: {
      ...stackSecrets(),
      ...shared,
      REDIS_URL: infra.redisUrl,
      KAFKA_BROKERS: infra.kafkaBrokers.join(","),
      GATEWAY_PORT: String(gatewayPort),
      METRICS_PORT: metricsPortOf("gateway"),
      LISTEN_HOST: "127.0.0.1",
    },
  });
  const stop = async () => {
    await gateway.stop();
    await stopServices();
  };
  await waitUntil(async () => (await fetch(`${gatewayUrl}/health`)).status === 200, {
    timeoutMs: timeoutMs ?? 60_000,
    describe: () => `gateway did not become healthy:\n${gateway.output()}`,
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { gatewayUrl, serviceUrls, metricsUrls, processes: [...started, gateway], stop };
}

/**
 * All five services and the gateway, each a real process, on free ports; more replicas of each with
 * addReplicas(). `timeoutMs`: how long each service may take to serve (startService).
 */
export async function startStack(infra: InfrastructureUrls, env: NodeJS.ProcessEnv = {}, timeoutMs?: number): Promise<Stack> {
  const first = await startProcesses(infra, env, timeoutMs);
  const added = new Set<StackProcesses>();
  return {
    ...first,
    async addReplicas() {
      const replicas = await startProcesses(infra, env, timeoutMs, first.gatewayUrl);
      added.add(replicas);
      return {
        ...replicas,
        async stop() {
          added.delete(replicas);
          await replicas.stop();
        },
      };
    },
    async stop() {
      await Promise.all([...added].map((replicas) => replicas.stop()));
      added.clear();
      await first.stop();
    },
  };
}
