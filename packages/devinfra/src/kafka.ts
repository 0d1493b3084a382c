import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import { withFileLock } from "./lock.js";
import { assertPortFree } from "./network.js";
import {
  CommandNotFoundError,
  type LocalServer,
  livePid,
  runToCompletion,
  spawnDetached,
  stopFromPidFile,
  stopProcess,
  waitUntilReady,
} from "./process.js";

// Must match kafka/pom.xml: the jar proves that Maven resolved this version.
const KAFKA_JAR = "kafka_2.13-3.9.1.jar";
const POM = fileURLToPath(new URL("../kafka/pom.xml", import.meta.url));
const NEEDS_JAVA =
  "The local Kafka needs Java 17+ and Maven (java and mvn on PATH, or JAVA_HOME); install them, or set KAFKA_BROKERS to an existing broker";

export interface KafkaBroker {
  brokers: string[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface KafkaBrokerOptions {
  /** Workspace root: the Kafka jars are cached in <root>/.herald/kafka/libs for every broker. */
  root: string;
  /** This broker's configuration, data (data/) and logs (logs/). */
  dataDir: string;
  port: number;
  controllerPort: number;
  /** Listener and advertised host; default 127.0.0.1. */
  host?: string;
  /**
   * Authenticated listeners beside the PLAINTEXT one on `port`, which stays as it is: SASL_PLAINTEXT on `sasl.port`
   * and, with `tls`, SASL_SSL on `tls.port`, both taking SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN from `users` (SCRAM
   * credentials are written when the storage is formatted, so a change of users needs a new dataDir). Off by default.
   */
  sasl?: KafkaSaslListeners;
  log?: (message: string) => void;
}

export interface KafkaSaslListeners {
  port: number;
  /** Names and passwords of letters, digits, `-` and `_` (they go into the broker's JAAS and format arguments unquoted). */
  users: Array<{ username: string; password: string }>;
  /** A PKCS#12 keystore of the broker's certificate chain and key, and its password. */
  tls?: { port: number; keystoreFile: string; keystorePassword: string };
}

const saslMechanisms = ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"] as const;

/** Whether a Kafka cluster answers an admin request; one quick attempt, no retry loops. */
export async function kafkaAnswers(brokers: string[]): Promise<boolean> {
  const admin = new Kafka({
    clientId: "herald-devinfra-probe",
    brokers,
    connectionTimeout: 1_000,
    requestTimeout: 2_000,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0;
  } catch {
    return false; // whatever the error, there is no working broker there (yet)
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/**
 * A single-node Apache Kafka 3.9 in KRaft mode (broker and controller in one JVM), run
 * from its Maven Central jars. start() is idempotent: a broker of the same dataDir that
 * is still running (pid file) is waited for instead of started twice. stop() works from
 * the pid file, so it also stops a broker that another process started on that dataDir.
 */
export function createKafkaBroker(options: KafkaBrokerOptions): KafkaBroker {
  const server = createKafkaServer(options);
  return {
    brokers: server.brokers,
    start: async () => {
      await server.start();
    },
    stop: async () => {
      await server.stop();
    },
  };
}

/** createKafkaBroker, plus whether start() spawned the broker (for ensureInfrastructure). */
export function createKafkaServer(options: KafkaBrokerOptions): LocalServer & { brokers: string[] } {
  const log = options.log ?? (() => {});
  const host = options.host ?? "127.0.0.1";
  const brokers = [`${host}:${options.port}`];
  const propertiesFile = join(options.dataDir, "server.properties");
  const log4jFile = join(options.dataDir, "log4j.properties");
  const logsDir = join(options.dataDir, "logs");
  const serverLog = join(logsDir, "server.log");
  const stdoutLog = join(logsDir, "stdout.log");
  const pidFile = join(options.dataDir, "kafka.pid");
  const markers = ["kafka.Kafka", propertiesFile];
  const waitFor = (pid: number) =>
    waitUntilReady({
      what: `Kafka on ${brokers[0]}`,
      pid,
      timeoutMs: 90_000,
      logFiles: [serverLog, stdoutLog],
      ready: () => kafkaAnswers(brokers),
    });

  return {
    name: "kafka",
    brokers,
    async start() {
      const running = livePid(pidFile, markers);
      if (running !== undefined) {
        log(`kafka: waiting for the broker started earlier (pid ${running})`);
        await waitFor(running);
        return false;
      }
      await assertPortFree(host, options.port, "Kafka");
      await assertPortFree(host, options.controllerPort, "the Kafka controller");
      if (options.sasl) await assertSaslListenersFree(host, options.sasl);
      const java = await findJava();
      const libs = await ensureKafkaLibs(options.root, log);
      mkdirSync(logsDir, { recursive: true });
      writeFileSync(propertiesFile, serverProperties({ ...options, host }));
      writeFileSync(log4jFile, log4jProperties(serverLog));
      const jvm = [`-Dlog4j.configuration=file:${log4jFile}`, "-cp", join(libs, "*")];
      if (!existsSync(join(options.dataDir, "data", "meta.properties"))) {
        const startedAt = Date.now();
        await runToCompletion({
          command: java,
          args: [...jvm, "kafka.tools.StorageTool", "format", "-t", clusterId(), "-c", propertiesFile, ...scramArguments(options.sasl)],
          logFile: stdoutLog,
        });
        log(`kafka: formatted storage in ${seconds(startedAt)} s`);
      }
      const startedAt = Date.now();
      log(`kafka: starting on ${brokers[0]} (controller ${host}:${options.controllerPort})`);
      const pid = await spawnDetached({
        command: java,
        args: ["-Xmx512m", "-Xms256m", "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true", ...jvm, "kafka.Kafka", propertiesFile],
        logFile: stdoutLog,
        pidFile,
        cwd: options.dataDir,
      });
      try {
        await waitFor(pid);
      } catch (err) {
        await stopProcess(pid).catch(() => {});
        rmSync(pidFile, { force: true });
        throw err;
      }
      log(`kafka: ready in ${seconds(startedAt)} s`);
      return true;
    },
    stop() {
      // SIGTERM is Kafka's controlled shutdown; stopProcess SIGKILLs after 15 s.
      return stopFromPidFile(pidFile, markers);
    },
  };
}

async function assertSaslListenersFree(host: string, sasl: KafkaSaslListeners): Promise<void> {
  for (const { username, password } of sasl.users) {
    if (!/^[\w-]+$/.test(username) || !/^[\w-]+$/.test(password)) {
      throw new Error(`Kafka SASL user "${username}": names and passwords take letters, digits, - and _ only`);
    }
  }
  await assertPortFree(host, sasl.port, "Kafka's SASL listener");
  if (sasl.tls) await assertPortFree(host, sasl.tls.port, "Kafka's SASL_SSL listener");
}

/** StorageTool's --add-scram arguments: each user's SCRAM credentials, in the metadata log from the start. */
function scramArguments(sasl: KafkaSaslListeners | undefined): string[] {
  return (sasl?.users ?? []).flatMap(({ username, password }) =>
    saslMechanisms
      .filter((mechanism) => mechanism.startsWith("SCRAM"))
      .flatMap((mechanism) => ["--add-scram", `${mechanism}=[name=${username},password=${password}]`]),
  );
}

/** The SASL listeners' entries of server.properties (none without `sasl`). */
function saslProperties(host: string, sasl: KafkaSaslListeners | undefined): { listeners: string[]; protocols: string[]; lines: string[] } {
  if (!sasl) return { listeners: [], protocols: [], lines: [] };
  const names = sasl.tls ? ["SASL_PLAINTEXT", "SASL_SSL"] : ["SASL_PLAINTEXT"];
  const plainUsers = sasl.users.map(({ username, password }) => `user_${username}="${password}"`).join(" ");
  const lines = [`sasl.enabled.mechanisms=${saslMechanisms.join(",")}`];
  for (const name of names) {
    const prefix = `listener.name.${name.toLowerCase()}`;
    lines.push(`${prefix}.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};`);
    for (const mechanism of ["scram-sha-512", "scram-sha-256"]) {
      lines.push(`${prefix}.${mechanism}.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;`);
    }
  }
  if (sasl.tls) {
    lines.push(
      "listener.name.sasl_ssl.ssl.keystore.type=PKCS12",
      `listener.name.sasl_ssl.ssl.keystore.location=${sasl.tls.keystoreFile}`,
      `listener.name.sasl_ssl.ssl.keystore.password=${sasl.tls.keystorePassword}`,
    );
  }
  return {
    listeners: [`SASL_PLAINTEXT://${host}:${sasl.port}`, ...(sasl.tls ? [`SASL_SSL://${host}:${sasl.tls.port}`] : [])],
    protocols: names.map((name) => `${name}:${name}`),
    lines,
  };
}

function serverProperties(o: KafkaBrokerOptions & { host: string }): string {
  const sasl = saslProperties(o.host, o.sasl);
  return `${[
    "# Written by @herald/devinfra on every start: edit the code, not this file.",
    "process.roles=broker,controller",
    "node.id=1",
    `controller.quorum.voters=1@${o.host}:${o.controllerPort}`,
    `listeners=${[`PLAINTEXT://${o.host}:${o.port}`, ...sasl.listeners, `CONTROLLER://${o.host}:${o.controllerPort}`].join(",")}`,
    `advertised.listeners=${[`PLAINTEXT://${o.host}:${o.port}`, ...sasl.listeners].join(",")}`,
    `listener.security.protocol.map=${["PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT", ...sasl.protocols].join(",")}`,
    "controller.listener.names=CONTROLLER",
    "inter.broker.listener.name=PLAINTEXT",
    `log.dirs=${join(o.dataDir, "data")}`,
    "num.partitions=3",
    "auto.create.topics.enable=true",
    // One node: every replication setting is 1.
    "default.replication.factor=1",
    "min.insync.replicas=1",
    "offsets.topic.replication.factor=1",
    "transaction.state.log.replication.factor=1",
    "transaction.state.log.min.isr=1",
    // Fewer internal partitions than the default 50 make the first consumer group join faster.
    "offsets.topic.num.partitions=10",
    "transaction.state.log.num.partitions=10",
    // Consumers in tests join one by one; do not wait 3 s for more of them.
    "group.initial.rebalance.delay.ms=0",
    ...sasl.lines,
  ].join("\n")}\n`;
}

function log4jProperties(serverLog: string): string {
  return `${[
    "log4j.rootLogger=WARN, file",
    "log4j.appender.file=org.apache.log4j.RollingFileAppender",
    `log4j.appender.file.File=${serverLog}`,
    "log4j.appender.file.MaxFileSize=10MB",
    "log4j.appender.file.MaxBackupIndex=2",
    "log4j.appender.file.layout=org.apache.log4j.PatternLayout",
    "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n",
    "log4j.logger.kafka=WARN",
    "log4j.logger.org.apache.kafka=WARN",
    // Keep the start and shutdown lines: they date each run in the log.
    "log4j.logger.kafka.server.KafkaRaftServer=INFO",
  ].join("\n")}\n`;
}

/** A random cluster id in Kafka's format (16 bytes, base64url, unpadded). */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    // Kafka's own generator avoids a leading "-", which its CLI would read as an option.
    if (!id.startsWith("-")) return id;
  }
}

async function findJava(): Promise<string> {
  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, "bin", "java") : "java";
  let output: string;
  try {
    output = (await promisify(execFile)(java, ["-version"])).stderr;
  } catch (err) {
    throw new Error(`${NEEDS_JAVA} (${(err as Error).message})`, { cause: err });
  }
  // "17.0.15" or "21" or, before Java 9, "1.8.0_392".
  const match = /version "(?:1\.)?(\d+)/.exec(output);
  const major = Number(match?.[1] ?? 0);
  if (major < 17) throw new Error(`${NEEDS_JAVA}; found: ${output.split("\n")[0] ?? ""}`);
  return java;
}

/**
 * The broker's runtime classpath, resolved by Maven from kafka/pom.xml once per root.
 * The marker (the pom's hash, written after success) tells a complete download from an
 * interrupted one and re-resolves when the pom changes.
 */
async function ensureKafkaLibs(root: string, log: (message: string) => void): Promise<string> {
  const kafkaDir = join(root, ".herald", "kafka");
  const libs = join(kafkaDir, "libs");
  const marker = join(libs, ".resolved");
  const pomHash = createHash("sha256").update(readFileSync(POM)).digest("hex");
  const resolved = () => existsSync(join(libs, KAFKA_JAR)) && existsSync(marker) && readFileSync(marker, "utf8").trim() === pomHash;
  if (resolved()) return libs;
  await withFileLock(join(kafkaDir, "libs.lock"), async () => {
    if (resolved()) return;
    rmSync(libs, { recursive: true, force: true });
    const startedAt = Date.now();
    log("kafka: resolving Apache Kafka from Maven Central (first run only, ~25 s)");
    await runToCompletion({
      command: "mvn",
      args: [
        "-q",
        "-B",
        "-Dstyle.color=never",
        "-f",
        POM,
        "dependency:copy-dependencies",
        `-DoutputDirectory=${libs}`,
        "-DincludeScope=runtime",
      ],
      logFile: join(kafkaDir, "maven.log"),
    }).catch((err: unknown) => {
      throw err instanceof CommandNotFoundError ? new Error(`${NEEDS_JAVA} (mvn not found)`, { cause: err }) : err;
    });
    if (!existsSync(join(libs, KAFKA_JAR))) throw new Error(`Maven finished but ${join(libs, KAFKA_JAR)} is missing`);
    writeFileSync(marker, `${pomHash}\n`);
    log(`kafka: resolved in ${seconds(startedAt)} s`);
  });
  return libs;
}

function seconds(since: number): string {
  return ((Date.now() - since) / 1000).toFixed(1);
}
