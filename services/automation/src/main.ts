import { openServiceSchema } from "@herald/db";
import { createKafka, createOutboxRelay } from "@herald/kafka";
import { createLogger, exitOnStartupError, onShutdown, portOfUrl, serviceInfoOf, startTelemetry } from "@herald/platform";
import { loadConfig } from "./config.js";
import { prismaClientOn } from "./db/client.js";
import { build } from "./server.js";

const name = "automation";
try {
  const config = loadConfig();
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  const telemetry = startTelemetry({ serviceName: name });
  const {
    schema,
    db,
    pool,
    close: closeDatabase,
  } = await openServiceSchema({
    name,
    databaseUrl: config.DATABASE_URL,
    migrate: config.MIGRATE_ON_START,
    migrationsDir: new URL("../prisma/migrations", import.meta.url).pathname,
    createClient: prismaClientOn,
    logger,
  });
  const kafka = createKafka({ clientId: name, brokers: config.KAFKA_BROKERS });
  const relay = createOutboxRelay({ pool, producer: kafka.producer({ idempotent: true }), logger });
  const server = build({ db, logger, info: serviceInfoOf(name, schema, import.meta.url) });
  const port = await server.listen(portOfUrl(config.AUTOMATION_URL), config.LISTEN_HOST);
  relay.start();
  logger.info({ port, schema }, `${name} listening`);
  onShutdown(logger, [() => server.close(), () => relay.stop(), closeDatabase, () => telemetry.shutdown()]);
} catch (error) {
  exitOnStartupError(name, error);
}
