import {
  entryOf,
  freePort,
  type InfrastructureUrls,
  type ServiceName,
  type ServiceProcess,
  serviceNames,
  spawnService,
  startService,
  urlVariableOf,
  waitUntil,
} from "@herald/testing";

export interface PartialStack {
  gatewayUrl: string;
  serviceUrls: Record<ServiceName, string>;
  processes: Partial<Record<ServiceName | "gateway", ServiceProcess>>;
  stop(): Promise<void>;
}

/**
 * Some services and a gateway, each a real process, on infrastructure of the test's own (its PostgreSQL, its
 * Redis): the services not started are reached where `elsewhere` says (the shared stack's), for the calls a test
 * does not make. `env` goes to every process (the gateway's too).
 */
export async function startPartialStack(options: {
  infra: InfrastructureUrls;
  services: ServiceName[];
  elsewhere: Record<ServiceName, string>;
  env?: NodeJS.ProcessEnv;
}): Promise<PartialStack> {
  const serviceUrls = { ...options.elsewhere };
  for (const name of options.services) serviceUrls[name] = `http://127.0.0.1:${await freePort()}`;
  const gatewayPort = await freePort();
  const shared = {
    PUBLIC_URL: `http://127.0.0.1:${gatewayPort}`,
    ...Object.fromEntries(serviceNames.map((name) => [urlVariableOf(name), serviceUrls[name]])),
    ...options.env,
  };
  const processes: PartialStack["processes"] = {};
  const stop = async () => {
    await Promise.all(Object.values(processes).map((process) => process.stop()));
  };
  const starting = await Promise.allSettled(
    options.services.map(async (name) => {
      const started = await startService(name, options.infra, Number(new URL(serviceUrls[name]).port), shared);
      processes[name] = started.process;
    }),
  );
  const failed = starting.find((result) => result.status === "rejected");
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const gateway = spawnService({
    name: "gateway",
    entry: entryOf("gateway"),
    env: {
      ...shared,
      REDIS_URL: options.infra.redisUrl,
      KAFKA_BROKERS: options.infra.kafkaBrokers.join(","),
      GATEWAY_PORT: String(gatewayPort),
      LISTEN_HOST: "127.0.0.1",
      // Every test signs up from 127.0.0.1, and the shared Redis keeps the hour's count across files and runs.
      SIGNUP_RATE_PER_HOUR: "1000000",
      ...options.env,
    },
  });
  processes.gateway = gateway;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  await waitUntil(async () => (await fetch(`${gatewayUrl}/livez`)).status === 200, {
    timeoutMs: 60_000,
    describe: () => `gateway did not serve:\n${gateway.output()}`,
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { gatewayUrl, serviceUrls, processes, stop };
}
