import { createDatabaseProbe, openServiceSchema } from "@herald/db";
import { createKafka, createOutboxRelay, ensureTopics, kafkaConnectionOf, observeConsumerLag, observeOutbox, topics } from "@herald/kafka";
import {
  createLogger,
  createMetrics,
  createReadinessWatch,
  createRpcClient,
  exitOnStartupError,
  observeTimePartitions,
  onShutdown,
  portOfUrl,
  retentionWindowOf,
  serviceInfoOf,
  startTelemetry,
} from "@herald/platform";
import { CampaignsService } from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";
import { loadConfig } from "./config.js";
import { createCountFolding } from "./contacts/count-folding.js";
import { createKnownFields } from "./contacts/known-fields.js";
import { createSearchTrigrams } from "./contacts/search-trigrams.js";
import { prismaClientOn } from "./db/client.js";
import { contactChangesTopic } from "./events/contact-change-outbox.js";
import { createEmailActivityConsumer, emailActivityGroupId } from "./events/email-activity-consumer.js";
import { createProjectLifecycleConsumer, projectLifecycleGroupId } from "./events/project-lifecycle-consumer.js";
import { createJobWorker } from "./jobs/job-worker.js";
import { createJobRunners } from "./jobs/runners.js";
import { createMembershipWatch } from "./segments/membership-watch.js";
import { createSegmentInUseCheck } from "./segments/segment-campaigns.js";
import { build } from "./server.js";
import { createEventRetention } from "./tracking/event-retention.js";

const name = "contacts";
try {
  const config = loadConfig();
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  const telemetry = startTelemetry({ serviceName: name });
  const database = await openServiceSchema({
    name,
    databaseUrl: config.DATABASE_URL,
    migrate: config.MIGRATE_ON_START,
    migrationsDir: new URL("../prisma/migrations", import.meta.url).pathname,
    createClient: prismaClientOn,
    poolSize: config.DATABASE_POOL_SIZE,
    logger,
  });
  const { schema, db } = database;
  const kafka = createKafka({ clientId: name, ...kafkaConnectionOf(config) });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [topics.contactEvents, contactChangesTopic, topics.emailActivity, topics.projectLifecycle]);
  await admin.disconnect();
  // Writes nudge the relay at will: it publishes at most once per interval, so that events leave in batches.
  const relay = createOutboxRelay({
    pool: database.pool,
    producer: kafka.producer({ idempotent: true }),
    logger,
    lingerMs: config.OUTBOX_NUDGE_INTERVAL_MS,
  });
  const knownFields = createKnownFields({ ttlMs: config.FIELD_CACHE_TTL_MS });
  const nudgeOutbox = () => relay.nudge();
  const membershipWatch = createMembershipWatch({
    db,
    logger,
    intervalMs: config.SEGMENT_EVALUATION_INTERVAL_MS,
    settleMs: config.SEGMENT_SETTLE_MS,
  });
  const countFolding = createCountFolding({ db, logger });
  const eventRetentionWindow = retentionWindowOf(config, "EVENTS");
  const eventRetention = createEventRetention({
    db,
    pool: database.pool,
    logger,
    window: eventRetentionWindow,
    intervalMs: config.RETENTION_INTERVAL_MS,
  });
  const searchTrigrams = createSearchTrigrams({ pool: database.pool, logger, intervalMs: config.SEARCH_TRIGRAMS_INTERVAL_MS });
  const worker = createJobWorker({
    runners: createJobRunners({
      db,
      logger,
      knownFields,
      nudgeOutbox,
      contactsChanged: membershipWatch.contactsChanged,
      leaseMs: config.JOB_LEASE_MS,
      importBatchSize: config.IMPORT_BATCH_SIZE,
    }),
    logger,
    pollIntervalMs: config.JOB_POLL_INTERVAL_MS,
    concurrency: config.JOB_CONCURRENCY,
  });
  const groupIds = {
    lifecycle: `${config.KAFKA_GROUP_PREFIX}${projectLifecycleGroupId}`,
    emailActivity: `${config.KAFKA_GROUP_PREFIX}${emailActivityGroupId}`,
  };
  const lifecycle = createProjectLifecycleConsumer({ kafka, db, logger, groupId: groupIds.lifecycle });
  const emailActivity = createEmailActivityConsumer({
    kafka,
    db,
    pool: database.pool,
    logger,
    nudgeOutbox,
    contactsChanged: membershipWatch.contactsChanged,
    groupId: groupIds.emailActivity,
  });
  const metrics = createMetrics({ port: config.METRICS_PORT, logger });
  observeOutbox(metrics, { pool: database.pool, schema });
  observeTimePartitions(metrics, { pool: database.pool, schema, tables: [{ table: "events" }] });
  observeConsumerLag(metrics, { kafka, groupIds: Object.values(groupIds) });
  const databaseProbe = createDatabaseProbe(config.DATABASE_URL, schema);
  const server = build({
    db,
    pool: database.pool,
    logger,
    metrics,
    info: serviceInfoOf(name, schema, import.meta.url),
    knownFields,
    nudgeOutbox,
    nudgeWorker: () => worker.nudge(),
    contactsChanged: membershipWatch.contactsChanged,
    dataKeyLimits: { perContact: config.TRACK_MAX_DATA_KEYS_PER_CONTACT, perProject: config.TRACK_MAX_FIELDS_PER_PROJECT },
    eventRetention: { window: eventRetentionWindow, changed: () => eventRetention.nudge() },
    searchTrigrams,
    refuseSegmentInUse: createSegmentInUseCheck(createRpcClient(CampaignsService, { baseUrl: config.CAMPAIGNS_URL, timeoutMs: 10_000 })),
  });
  // Everything runs before the port opens: once health answers SERVING, SIGTERM finds a complete process to stop.
  relay.start();
  worker.start();
  membershipWatch.start();
  countFolding.start();
  eventRetention.start();
  searchTrigrams.start();
  await lifecycle.start();
  await emailActivity.start();
  const readiness = createReadinessWatch({ health: server.health, logger, dependencies: { database: () => databaseProbe.check() } });
  readiness.start();
  await metrics.listen(config.LISTEN_HOST);
  const port = await server.listen(portOfUrl(config.CONTACTS_URL), config.LISTEN_HOST);
  logger.info({ port, schema }, `${name} listening`);
  onShutdown(logger, [
    () => readiness.stop(),
    () => server.close(),
    [() => lifecycle.stop(), () => emailActivity.stop()],
    [
      () => worker.stop(),
      () => membershipWatch.stop(),
      () => countFolding.stop(),
      () => eventRetention.stop(),
      () => searchTrigrams.stop(),
    ],
    () => relay.stop(),
    () => database.close(),
    () => databaseProbe.close(),
    () => metrics.close(),
    () => telemetry.shutdown(),
  ]);
} catch (error) {
  exitOnStartupError(name, error);
}
