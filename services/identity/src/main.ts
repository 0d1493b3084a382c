import { createDatabaseProbe, openServiceSchema } from "@herald/db";
import { createKafka, createOutboxRelay, ensureTopics, kafkaConnectionOf, observeConsumerLag, observeOutbox, topics } from "@herald/kafka";
import {
  createLogger,
  createMetrics,
  createReadinessWatch,
  createRpcClient,
  exitOnStartupError,
  onShutdown,
  portOfUrl,
  serviceInfoOf,
  startTelemetry,
} from "@herald/platform";
import { SystemMailService } from "@herald/proto/herald/delivery/v1/system_mail_service_pb";
import { Redis } from "ioredis";
import { createAccountMail } from "./accounts/account-mail.js";
import { createStripePayments } from "./billing/stripe-payments.js";
import { loadConfig, reputationThresholdsOf } from "./config.js";
import { prismaClientOn } from "./db/client.js";
import { createEmailActivityConsumer, emailActivityGroupId } from "./events/email-activity-consumer.js";
import { createReputationGuard } from "./projects/reputation-guard.js";
import { build } from "./server.js";

const name = "identity";
try {
  const config = loadConfig();
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  if (config.jwtSecretGenerated) logger.warn("JWT_SECRET is not set: sessions are signed with a random key and end when this process does");
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
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
  const kafka = createKafka({ clientId: name, ...kafkaConnectionOf(config) });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [topics.emailActivity, topics.projectLifecycle]);
  await admin.disconnect();
  const relay = createOutboxRelay({ pool, producer: kafka.producer({ idempotent: true }), logger });
  // A new group starts at the beginning of the topic: metering must not miss what was sent before the first start.
  const emailActivityGroup = `${config.KAFKA_GROUP_PREFIX}${emailActivityGroupId}`;
  const guard = createReputationGuard({ thresholds: reputationThresholdsOf(config), publicUrl: config.PUBLIC_URL, logger });
  const emailActivity = createEmailActivityConsumer({ kafka, db, logger, fromBeginning: true, groupId: emailActivityGroup, guard });
  const metrics = createMetrics({ port: config.METRICS_PORT, logger });
  observeOutbox(metrics, { pool, schema });
  observeConsumerLag(metrics, { kafka, groupIds: [emailActivityGroup] });
  const databaseProbe = createDatabaseProbe(config.DATABASE_URL, schema);
  const payments = config.STRIPE_SECRET_KEY
    ? createStripePayments({ secretKey: config.STRIPE_SECRET_KEY, apiUrl: config.STRIPE_API_URL })
    : undefined;
  // Account emails go to delivery, which sends them (docs/decisions.md "Account emails").
  const accountMail = createAccountMail({
    db,
    logger,
    systemMail: createRpcClient(SystemMailService, { baseUrl: config.DELIVERY_URL, timeoutMs: 10_000 }),
    pollIntervalMs: config.AUTH_EMAIL_POLL_INTERVAL_MS,
  });
  const server = build({
    db,
    redis,
    logger,
    metrics,
    config,
    payments,
    info: serviceInfoOf(name, schema, import.meta.url),
    nudgeOutbox: () => relay.nudge(),
    nudgeAccountMail: () => accountMail.nudge(),
  });
  // Everything runs before the port opens: once health answers SERVING, SIGTERM finds a complete process to stop.
  relay.start();
  accountMail.start();
  await emailActivity.start();
  const readiness = createReadinessWatch({ health: server.health, logger, dependencies: { database: () => databaseProbe.check() } });
  readiness.start();
  await metrics.listen(config.LISTEN_HOST);
  const port = await server.listen(portOfUrl(config.IDENTITY_URL), config.LISTEN_HOST);
  logger.info({ port, schema }, `${name} listening`);
  onShutdown(logger, [
    () => readiness.stop(),
    () => server.close(),
    [() => emailActivity.stop(), () => accountMail.stop()],
    () => relay.stop(),
    closeDatabase,
    () => databaseProbe.close(),
    async () => void (await redis.quit()),
    () => metrics.close(),
    () => telemetry.shutdown(),
  ]);
} catch (error) {
  exitOnStartupError(name, error);
}
