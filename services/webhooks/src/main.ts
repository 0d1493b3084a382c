import { createDatabaseProbe, openServiceSchema } from "@herald/db";
import { createKafka, ensureTopics, kafkaConnectionOf, observeConsumerLag, topics } from "@herald/kafka";
import {
  createLoadingCache,
  createLogger,
  createMetrics,
  createOutboundCaller,
  createReadinessWatch,
  createRpcClient,
  exitOnStartupError,
  onShutdown,
  portOfUrl,
  serviceInfoOf,
  startTelemetry,
} from "@herald/platform";
import { SystemMailService } from "@herald/proto/herald/delivery/v1/system_mail_service_pb";
import { ProjectService } from "@herald/proto/herald/identity/v1/project_service_pb";
import { loadConfig } from "./config.js";
import { prismaClientOn } from "./db/client.js";
import { enabledEndpointsOf } from "./db/endpoints.js";
import { oldestPendingSeconds } from "./db/messages.js";
import { createAdminNotice } from "./delivery/admin-notice.js";
import { createDispatcher } from "./delivery/dispatcher.js";
import { contactErasureGroupId, createContactErasureConsumerOfWebhooks } from "./events/contact-erasure-consumer.js";
import { createFactConsumer, factsGroupId } from "./events/fact-consumer.js";
import { factTopics } from "./events/facts.js";
import { createProjectLifecycleConsumer, projectLifecycleGroupId } from "./events/project-lifecycle-consumer.js";
import { build } from "./server.js";
import { createWebhooks } from "./webhooks/webhooks.js";

const name = "webhooks";
try {
  const config = loadConfig();
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  const telemetry = startTelemetry({ serviceName: name });
  const {
    schema,
    db,
    close: closeDatabase,
  } = await openServiceSchema({
    name,
    databaseUrl: config.DATABASE_URL,
    migrate: config.MIGRATE_ON_START,
    migrationsDir: new URL("../prisma/migrations", import.meta.url).pathname,
    createClient: prismaClientOn,
    logger,
  });
  const kafka = createKafka({ clientId: name, ...kafkaConnectionOf(config) });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [...factTopics, topics.projectLifecycle]);
  await admin.disconnect();
  const metrics = createMetrics({ port: config.METRICS_PORT, logger });
  // A project's enabled endpoints, briefly: changes made through this process forget them at once, other replicas' within the TTL.
  const endpoints = createLoadingCache<string, Array<{ id: string; eventTypes: string[] }>>({
    max: 10_000,
    ttlMs: 5_000,
    load: (projectId) => enabledEndpointsOf(db, projectId),
  });
  const caller = createOutboundCaller({ dnsServers: config.DNS_SERVERS, allowedAddresses: config.WEBHOOK_ALLOWED_ADDRESSES });
  const notifyDisabled = createAdminNotice({
    projects: createRpcClient(ProjectService, { baseUrl: config.IDENTITY_URL, timeoutMs: 10_000 }),
    systemMail: createRpcClient(SystemMailService, { baseUrl: config.DELIVERY_URL, timeoutMs: 10_000 }),
    logger,
  });
  const dispatcher = createDispatcher({
    db,
    logger,
    caller,
    notifyDisabled,
    metrics,
    options: {
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      schedule: config.WEBHOOK_RETRY_SCHEDULE,
      disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
      endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
      concurrency: config.WEBHOOK_CONCURRENCY,
      idleMs: config.WEBHOOK_POLL_INTERVAL_MS,
    },
  });
  const webhooks = createWebhooks({
    db,
    allowHttp: config.WEBHOOK_ALLOW_HTTP,
    maxEndpoints: config.WEBHOOK_MAX_ENDPOINTS,
    rotationGraceMs: config.WEBHOOK_SECRET_ROTATION_GRACE_MS,
    onEndpointsChanged: (projectId) => endpoints.delete(projectId),
    onQueued: () => dispatcher.nudge(),
  });
  const factsGroup = `${config.KAFKA_GROUP_PREFIX}${factsGroupId}`;
  const facts = createFactConsumer({
    kafka,
    db,
    logger,
    endpoints,
    firstWaitMs: config.WEBHOOK_RETRY_SCHEDULE[0] ?? 0,
    onQueued: () => dispatcher.nudge(),
    groupId: factsGroup,
  });
  const lifecycleGroup = `${config.KAFKA_GROUP_PREFIX}${projectLifecycleGroupId}`;
  const lifecycle = createProjectLifecycleConsumer({
    kafka,
    db,
    logger,
    onWiped: (projectId) => endpoints.delete(projectId),
    groupId: lifecycleGroup,
  });
  const erasureGroup = `${config.KAFKA_GROUP_PREFIX}${contactErasureGroupId}`;
  const erasure = createContactErasureConsumerOfWebhooks({ kafka, db, logger, groupId: erasureGroup });
  observeConsumerLag(metrics, { kafka, groupIds: [factsGroup, lifecycleGroup, erasureGroup] });
  // One series over every endpoint: a label per endpoint would grow with every project's endpoints (docs/operations.md).
  metrics.observe({
    reader: "webhook_queue",
    gauges: { herald_webhook_oldest_pending_seconds: { help: "Age of the oldest webhook message not yet settled, over every endpoint." } },
    read: async () => ({ herald_webhook_oldest_pending_seconds: [{ value: await oldestPendingSeconds(db) }] }),
  });
  const databaseProbe = createDatabaseProbe(config.DATABASE_URL, schema);
  const server = build({ db, logger, metrics, info: serviceInfoOf(name, schema, import.meta.url), webhooks });
  const readiness = createReadinessWatch({ health: server.health, logger, dependencies: { database: () => databaseProbe.check() } });
  readiness.start();
  await metrics.listen(config.LISTEN_HOST);
  const port = await server.listen(portOfUrl(config.WEBHOOKS_URL), config.LISTEN_HOST);
  dispatcher.start();
  await facts.start();
  await lifecycle.start();
  await erasure.start();
  logger.info({ port, schema }, `${name} listening`);
  onShutdown(logger, [
    () => readiness.stop(),
    () => server.close(),
    [() => facts.stop(), () => lifecycle.stop(), () => erasure.stop()],
    () => dispatcher.stop(),
    closeDatabase,
    () => databaseProbe.close(),
    () => metrics.close(),
    () => telemetry.shutdown(),
  ]);
} catch (error) {
  exitOnStartupError(name, error);
}
