import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createKafkaBroker, type KafkaBroker } from "@herald/devinfra";
import { createKafka, kafkaConnectionOf } from "@herald/kafka";
import { freePort, repoPath } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../services/contacts/src/config.js";

const run = promisify(execFile);
/** kafkajs is a dependency of @herald/kafka, not of the tests: its client type comes through createKafka. */
type Kafka = ReturnType<typeof createKafka>;

/** A client made the way every service makes it (contacts' here): environment → config → kafkaConnectionOf → createKafka. */
const clientFor = (env: Record<string, string>): Kafka =>
  createKafka({ clientId: "kafka-sasl-test", ...kafkaConnectionOf(loadConfig({ NODE_ENV: "test", ...env })) });

/** A CA, a broker certificate for 127.0.0.1 that it signed, and the broker's PKCS#12 keystore, made with openssl. */
async function makeCertificates(dir: string, keystorePassword: string): Promise<{ caFile: string; keystoreFile: string }> {
  const file = (name: string) => join(dir, name);
  const openssl = (args: string[]) => run("openssl", args, { cwd: dir });
  await openssl(
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Herald test CA"].concat([
      "-keyout",
      file("ca.key"),
      "-out",
      file("ca.pem"),
    ]),
  );
  await openssl([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    file("broker.key"),
    "-out",
    file("broker.csr"),
  ]);
  await writeFile(file("broker.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  await openssl(
    ["x509", "-req", "-in", file("broker.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial"].concat([
      "-days",
      "2",
      "-extfile",
      file("broker.ext"),
      "-out",
      file("broker.pem"),
    ]),
  );
  await openssl(
    ["pkcs12", "-export", "-in", file("broker.pem"), "-inkey", file("broker.key"), "-certfile", file("ca.pem")].concat([
      "-name",
      "broker",
      "-passout",
      `pass:${keystorePassword}`,
      "-out",
      file("broker.p12"),
    ]),
  );
  return { caFile: file("ca.pem"), keystoreFile: file("broker.p12") };
}

/** Produces one message to a topic of its own and reads it back in a group of its own: what every service does. */
async function roundTrip(kafka: Kafka): Promise<string> {
  const topic = `sasl-test-${randomBytes(4).toString("hex")}`;
  const sent = randomBytes(8).toString("hex");
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  try {
    await producer.send({ topic, messages: [{ key: "k", value: sent }] });
  } finally {
    await producer.disconnect();
  }
  const consumer = kafka.consumer({ groupId: `${topic}.group` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nothing read from ${topic}`)), 60_000);
      void consumer
        .run({
          eachMessage: async ({ message }) => {
            clearTimeout(timer);
            resolve(message.value?.toString() ?? "");
          },
        })
        .catch(reject);
    }).then((received) => {
      expect(received).toBe(sent);
      return received;
    });
  } finally {
    await consumer.disconnect();
  }
}

/** Whether a client gets as far as the cluster's metadata; the error it fails with otherwise. */
async function connectError(kafka: Kafka): Promise<Error | undefined> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.describeCluster();
    return undefined;
  } catch (error) {
    return error as Error;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

// A broker of its own, with SASL listeners on ports of its own: the shared broker on 9092 takes no credentials.
describe("Kafka with SASL and TLS (KAFKA_TLS, KAFKA_SASL_*)", () => {
  const username = "herald-contacts";
  const password = randomBytes(12).toString("hex");
  let broker: KafkaBroker;
  let dataDir: string;
  let caFile: string;
  let saslBroker: string;
  let tlsBroker: string;
  const credentials = (mechanism: string, secret = password) => ({
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: username,
    KAFKA_SASL_PASSWORD: secret,
  });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "herald-kafka-sasl-"));
    const keystorePassword = randomBytes(8).toString("hex");
    const certificates = await makeCertificates(dataDir, keystorePassword);
    caFile = certificates.caFile;
    const sasl = { port: await freePort(), users: [{ username, password }] };
    const tls = { port: await freePort(), keystoreFile: certificates.keystoreFile, keystorePassword };
    broker = createKafkaBroker({
      root: repoPath("."),
      dataDir,
      port: await freePort(),
      controllerPort: await freePort(),
      sasl: { ...sasl, tls },
    });
    await broker.start();
    saslBroker = `127.0.0.1:${sasl.port}`;
    tlsBroker = `127.0.0.1:${tls.port}`;
  }, 360_000);

  afterAll(async () => {
    await broker?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("produces and consumes with SCRAM-SHA-512 credentials", async () => {
    await roundTrip(clientFor({ KAFKA_BROKERS: saslBroker, ...credentials("scram-sha-512") }));
  }, 120_000);

  it("takes SCRAM-SHA-256 and PLAIN credentials too", async () => {
    for (const mechanism of ["scram-sha-256", "plain"]) {
      expect(await connectError(clientFor({ KAFKA_BROKERS: saslBroker, ...credentials(mechanism) })), mechanism).toBeUndefined();
    }
  }, 120_000);

  it("refuses a client without credentials, and one with a wrong password", async () => {
    const anonymous = await connectError(clientFor({ KAFKA_BROKERS: saslBroker }));
    expect(anonymous).toBeInstanceOf(Error);
    for (const mechanism of ["scram-sha-512", "plain"]) {
      const wrong = await connectError(clientFor({ KAFKA_BROKERS: saslBroker, ...credentials(mechanism, `${password}x`) }));
      expect(wrong?.name, mechanism).toBe("KafkaJSSASLAuthenticationError");
    }
  }, 120_000);

  it("produces and consumes over TLS (KAFKA_TLS with KAFKA_TLS_CA_FILE), and refuses a broker no trusted CA signed", async () => {
    await roundTrip(clientFor({ KAFKA_BROKERS: tlsBroker, KAFKA_TLS: "true", KAFKA_TLS_CA_FILE: caFile, ...credentials("scram-sha-512") }));
    // The system's CAs did not sign the broker's certificate.
    const untrusted = await connectError(clientFor({ KAFKA_BROKERS: tlsBroker, KAFKA_TLS: "true", ...credentials("scram-sha-512") }));
    expect(untrusted).toBeInstanceOf(Error);
    // Without KAFKA_TLS, the client speaks plaintext to the TLS listener and gets nowhere.
    expect(await connectError(clientFor({ KAFKA_BROKERS: tlsBroker, ...credentials("scram-sha-512") }))).toBeInstanceOf(Error);
  }, 120_000);
});
