/** The three connection settings every Herald process reads, with the defaults of ARCHITECTURE.md. */
export interface InfrastructureConfig {
  databaseUrl: string;
  redisUrl: string;
  kafkaBrokers: string[];
}

export const DEFAULT_CONFIG: InfrastructureConfig = {
  databaseUrl: "postgresql://postgres@127.0.0.1:5432/herald",
  redisUrl: "redis://127.0.0.1:6379",
  kafkaBrokers: ["127.0.0.1:9092"],
};

export interface HostPort {
  /** As written in the setting; IPv6 addresses keep their brackets. */
  host: string;
  port: number;
}

export function readConfig(env: NodeJS.ProcessEnv): InfrastructureConfig {
  const config: InfrastructureConfig = {
    databaseUrl: nonEmpty(env.DATABASE_URL) ?? DEFAULT_CONFIG.databaseUrl,
    redisUrl: nonEmpty(env.REDIS_URL) ?? DEFAULT_CONFIG.redisUrl,
    kafkaBrokers:
      nonEmpty(env.KAFKA_BROKERS)
        ?.split(",")
        .map((broker) => broker.trim())
        .filter((broker) => broker !== "") ?? DEFAULT_CONFIG.kafkaBrokers,
  };
  // Parse everything once here so that a typo stops us with the variable's name,
  // not with a connection error from deep inside a client library.
  urlHostPort("DATABASE_URL", config.databaseUrl, ["postgres:", "postgresql:"], 5432);
  urlHostPort("REDIS_URL", config.redisUrl, ["redis:", "rediss:"], 6379);
  if (config.kafkaBrokers.length === 0) throw new Error("KAFKA_BROKERS is empty");
  for (const broker of config.kafkaBrokers) brokerHostPort(broker);
  return config;
}

export function urlHostPort(name: string, value: string, protocols: string[], defaultPort: number): HostPort {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} is not a valid URL: ${value}`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new Error(`${name} must start with ${protocols.map((p) => `${p}//`).join(" or ")}: ${value}`);
  }
  if (url.hostname === "") throw new Error(`${name} has no host: ${value}`);
  return { host: url.hostname, port: url.port === "" ? defaultPort : Number(url.port) };
}

export function brokerHostPort(broker: string): HostPort {
  // A fake scheme lets URL do the host:port parsing, IPv6 brackets included.
  let url: URL | undefined;
  try {
    url = new URL(`kafka://${broker}`);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.hostname === "" || url.port === "" || `${url.hostname}:${url.port}` !== broker) {
    throw new Error(`KAFKA_BROKERS entries must be host:port, got "${broker}"`);
  }
  return { host: url.hostname, port: Number(url.port) };
}

/** Only these may be started here: anything else is someone else's server that is down. */
export function isLocalHost(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Hostname without IPv6 brackets, as servers' bind options want it. */
export function bareHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, "$1");
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** The URL with its password masked, for messages and logs. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password !== "") url.password = "***";
    return url.toString();
  } catch {
    return value;
  }
}
