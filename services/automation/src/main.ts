import { applyMigrations, createSqlPool, schemaOf } from "@herald/db";
import { createKafka, createOutboxRelay } from "@herald/kafka";
import { createLogger, exitOnStartupError, onShutdown, portOfUrl, serviceInfoOf, startTelemetry } from "@herald/platform";
import { loadConfig } from "./config.js";
import { createDb } from "./db/client.js";
import { build } from "./server.js";

const name = "automation";
try {
  const config = loadConfig();
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  const telemetry = startTelemetry({ serviceName: name });
  const schema = schemaOf(config.DATABASE_URL, name);
  await applyMigrations({
    databaseUrl: config.DATABASE_URL,
    schema,
    migrationsDir: new URL("../prisma/migrations", import.meta.url).pathname,
  });
  const db = createDb(config.DATABASE_URL, schema);
  const pool = createSqlPool(config.DATABASE_URL, schema, (error) => logger.warn({ err: error }, "an idle database connection failed"), 2);
  const kafka = createKafka({ clientId: name, brokers: config.KAFKA_BROKERS });
  const relay = createOutboxRelay({ pool, producer: kafka.producer({ idempotent: true }), logger });
  const server = build({ db, logger, info: serviceInfoOf(name, schema, import.meta.url) });
  const port = await server.listen(portOfUrl(config.AUTOMATION_URL), config.LISTEN_HOST);
  relay.start();
  logger.info({ port, schema }, `${name} listening`);
  onShutdown(logger, [() => server.close(), () => relay.stop(), () => db.$disconnect(), () => pool.end(), () => telemetry.shutdown()]);
} catch (error) {
  exitOnStartupError(name, error);
}
