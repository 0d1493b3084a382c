import { applyMigrations, schemaOf } from "@herald/db";
import { createKafka, createOutboxRelay, ensureTopics, topics } from "@herald/kafka";
import { createLogger, exitOnStartupError, onShutdown, portOfUrl, serviceInfoOf, startTelemetry } from "@herald/platform";
import { createRenderer } from "@herald/rendering";
import { loadConfig } from "./config.js";
import { createDb } from "./db/client.js";
import { createDomainCheck } from "./domains/domain-check.js";
import { createDomains } from "./domains/domains.js";
import { createTxtLookup } from "./domains/txt-lookup.js";
import { createProjectLifecycleConsumer, projectLifecycleGroupId } from "./events/project-lifecycle-consumer.js";
import { build } from "./server.js";
import { createTemplates } from "./templates/templates.js";

const name = "delivery";
try {
  const config = loadConfig();
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  const telemetry = startTelemetry({ serviceName: name });
  if (config.dkimEncryptionKeyIsDevelopment) {
    logger.warn("DKIM_ENCRYPTION_KEY is not set: DKIM keys are encrypted with the public development key");
  }
  const schema = schemaOf(config.DATABASE_URL, name);
  await applyMigrations({
    databaseUrl: config.DATABASE_URL,
    schema,
    migrationsDir: new URL("../prisma/migrations", import.meta.url).pathname,
  });
  const db = createDb(config.DATABASE_URL, schema);
  const kafka = createKafka({ clientId: name, brokers: config.KAFKA_BROKERS });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [topics.projectLifecycle]);
  await admin.disconnect();
  const relay = createOutboxRelay({ db, producer: kafka.producer({ idempotent: true }), logger });
  const lookup = createTxtLookup({ servers: config.DNS_SERVERS, timeoutMs: config.DNS_TIMEOUT_MS, tries: config.DNS_TRIES });
  const domains = createDomains({ db, lookup, encryptionKey: config.dkimEncryptionKey, spfInclude: config.SPF_INCLUDE, logger });
  const domainCheck = createDomainCheck({ domains, logger, intervalMs: config.DOMAIN_CHECK_INTERVAL_MS });
  const lifecycle = createProjectLifecycleConsumer({
    kafka,
    db,
    logger,
    groupId: `${config.KAFKA_GROUP_PREFIX}${projectLifecycleGroupId}`,
  });
  const templates = createTemplates({ db, renderer: createRenderer() });
  const server = build({ db, logger, info: serviceInfoOf(name, schema, import.meta.url), domains, templates });
  relay.start();
  domainCheck.start();
  await lifecycle.start();
  const port = await server.listen(portOfUrl(config.DELIVERY_URL), config.LISTEN_HOST);
  logger.info({ port, schema }, `${name} listening`);
  onShutdown(logger, [
    () => server.close(),
    () => domainCheck.stop(),
    () => lifecycle.stop(),
    () => relay.stop(),
    () => db.$disconnect(),
    () => telemetry.shutdown(),
  ]);
} catch (error) {
  exitOnStartupError(name, error);
}
