import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createKafka, type KafkaSettings, kafkaClientOptions, kafkaConnectionOf } from "@herald/kafka";
import { ConfigError } from "@herald/platform";
import { repoPath } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig as automation } from "../services/automation/src/config.js";
import { loadConfig as campaigns } from "../services/campaigns/src/config.js";
import { loadConfig as contacts } from "../services/contacts/src/config.js";
import { loadConfig as delivery } from "../services/delivery/src/config.js";
import { loadConfig as gateway } from "../services/gateway/src/config.js";
import { loadConfig as identity } from "../services/identity/src/config.js";

const run = promisify(execFile);

/** Every process's loadConfig, as its main.ts calls it; NODE_ENV=test spares the production secrets. */
const processes: Record<string, (env: NodeJS.ProcessEnv) => KafkaSettings> = {
  gateway,
  identity,
  contacts,
  delivery,
  campaigns,
  automation,
};
const withTestEnv = (load: (env: NodeJS.ProcessEnv) => KafkaSettings) => (env: NodeJS.ProcessEnv) => load({ NODE_ENV: "test", ...env });

describe("the Kafka connection variables of every process", () => {
  let dir: string;
  let caFile: string;
  const ca = "-----BEGIN CERTIFICATE-----\nnot parsed here: TLS reads it\n-----END CERTIFICATE-----\n";

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "herald-kafka-config-"));
    caFile = join(dir, "ca.pem");
    await writeFile(caFile, ca);
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(Object.keys(processes))("%s: no TLS and no SASL by default", (name) => {
    const config = withTestEnv(processes[name] as never)({});
    expect(kafkaClientOptions(kafkaConnectionOf(config))).toEqual({ brokers: ["127.0.0.1:9092"] });
  });

  it.each(Object.keys(processes))("%s: hands TLS with the CA file and SASL credentials to kafkajs", (name) => {
    const load = withTestEnv(processes[name] as never);
    const config = load({
      KAFKA_BROKERS: "kafka-0:9093,kafka-1:9093",
      KAFKA_TLS: "true",
      KAFKA_TLS_CA_FILE: caFile,
      KAFKA_SASL_MECHANISM: "scram-sha-512",
      KAFKA_SASL_USERNAME: `herald-${name}`,
      KAFKA_SASL_PASSWORD: "s3cret",
    });
    expect(kafkaClientOptions(kafkaConnectionOf(config))).toEqual({
      brokers: ["kafka-0:9093", "kafka-1:9093"],
      ssl: { rejectUnauthorized: true, ca: [ca] },
      sasl: { mechanism: "scram-sha-512", username: `herald-${name}`, password: "s3cret" },
    });
    // TLS without a CA file trusts the system's CAs, and still checks the certificate.
    expect(kafkaClientOptions(kafkaConnectionOf(load({ KAFKA_TLS: "yes" }))).ssl).toEqual({ rejectUnauthorized: true });
  });

  it.each(Object.keys(processes))(
    "%s: refuses a mechanism without credentials, credentials without a mechanism, and bad values",
    (name) => {
      const load = withTestEnv(processes[name] as never);
      expect(() => load({ KAFKA_SASL_MECHANISM: "scram-sha-256" })).toThrow(ConfigError);
      expect(() => load({ KAFKA_SASL_MECHANISM: "scram-sha-256", KAFKA_SASL_USERNAME: "u" })).toThrow(
        /KAFKA_SASL_PASSWORD: is required when KAFKA_SASL_MECHANISM is set/,
      );
      expect(() => load({ KAFKA_SASL_MECHANISM: "plain", KAFKA_SASL_PASSWORD: "p" })).toThrow(/KAFKA_SASL_USERNAME: is required/);
      expect(() => load({ KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "p" })).toThrow(/KAFKA_SASL_MECHANISM: is required/);
      expect(() => load({ KAFKA_SASL_MECHANISM: "gssapi", KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "p" })).toThrow(
        /KAFKA_SASL_MECHANISM/,
      );
      expect(() => load({ KAFKA_TLS: "maybe" })).toThrow(/KAFKA_TLS/);
      expect(() => load({ KAFKA_TLS: "true", KAFKA_TLS_CA_FILE: join(dir, "missing.pem") })).toThrow(
        /KAFKA_TLS_CA_FILE: must be a readable PEM file/,
      );
    },
  );

  it("keeps the SASL password out of the logs", async () => {
    // pino writes to the process's stdout file descriptor: a process of its own logs a config, as a service would.
    const script = `import { createLogger } from "@herald/platform";
      createLogger({ name: "kafka-config-test" }).info({ config: { KAFKA_SASL_USERNAME: "herald", KAFKA_SASL_PASSWORD: "s3cret-password" } }, "config");`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: repoPath("tests") });
    expect(stdout).toContain('"KAFKA_SASL_USERNAME":"herald"');
    expect(stdout).not.toContain("s3cret-password");
  });

  it("makes a kafkajs client from the options without connecting", () => {
    const kafka = createKafka({ clientId: "config-test", ...kafkaConnectionOf(contacts({ NODE_ENV: "test" })) });
    expect(typeof kafka.producer).toBe("function");
  });
});
