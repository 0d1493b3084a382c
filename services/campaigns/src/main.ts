import { createDatabaseProbe, openServiceSchema } from "@herald/db";
import {
  createKafka,
  createOutboxRelay,
  createProjectStatusConsumer,
  ensureTopics,
  kafkaConnectionOf,
  observeConsumerLag,
  observeOutbox,
  topics,
} from "@herald/kafka";
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
import { SegmentsService } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import { CampaignSendsService } from "@herald/proto/herald/delivery/v1/campaign_sends_service_pb";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { createRenderPool } from "@herald/rendering/pool";
import { createCampaigns } from "./campaigns/campaigns.js";
import { createFanOut } from "./campaigns/fan-out.js";
import { loadConfig } from "./config.js";
import { prismaClientOn } from "./db/client.js";
import { resumeProject, stopProject } from "./db/stopped-projects.js";
import { isId } from "./domain/ids.js";
import { contactErasureGroupId, createContactErasureConsumerOfCampaigns } from "./events/contact-erasure-consumer.js";
import { createEmailActivityConsumer, emailActivityGroupId } from "./events/email-activity-consumer.js";
import { createProjectLifecycleConsumer, projectLifecycleGroupId } from "./events/project-lifecycle-consumer.js";
import { build } from "./server.js";

const name = "campaigns";
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
  const kafka = createKafka({ clientId: name, ...kafkaConnectionOf(config) });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [topics.emailActivity, topics.projectLifecycle, topics.campaignEvents, topics.contactChanges]);
  await admin.disconnect();
  const relay = createOutboxRelay({ pool, producer: kafka.producer({ idempotent: true }), logger });
  const segments = createRpcClient(SegmentsService, { baseUrl: config.CONTACTS_URL, connections: 1, timeoutMs: 30_000 });
  const campaignSends = createRpcClient(CampaignSendsService, { baseUrl: config.DELIVERY_URL, connections: 2, timeoutMs: 60_000 });
  const emails = createRpcClient(EmailsService, { baseUrl: config.DELIVERY_URL, connections: 1, timeoutMs: 30_000 });
  const renders = createRenderPool(config.RENDER_THREADS, { heapMb: config.RENDER_THREAD_MEMORY_MB });
  const fanOut = createFanOut({
    db,
    logger,
    renders,
    segments,
    campaignSends,
    options: {
      batchSize: config.CAMPAIGN_BATCH_SIZE,
      leaseMs: config.CAMPAIGN_FANOUT_LEASE_MS,
      turnMs: config.CAMPAIGN_FANOUT_TURN_MS,
      idleMs: config.CAMPAIGN_POLL_INTERVAL_MS,
    },
  });
  const campaigns = createCampaigns({ db, renders, segments, campaignSends, emails, nudgeFanOut: () => fanOut.nudge() });
  const activityGroup = `${config.KAFKA_GROUP_PREFIX}${emailActivityGroupId}`;
  const activity = createEmailActivityConsumer({ kafka, db, logger, groupId: activityGroup });
  const lifecycleGroup = `${config.KAFKA_GROUP_PREFIX}${projectLifecycleGroupId}`;
  const lifecycle = createProjectLifecycleConsumer({ kafka, db, logger, campaignSends, groupId: lifecycleGroup });
  const projectStatusGroup = `${config.KAFKA_GROUP_PREFIX}campaigns.project-status`;
  // Keeps stopped_projects, which the fan-out read (docs/api-decisions.md).
  const projectStatus = createProjectStatusConsumer({
    kafka,
    db,
    logger,
    groupId: projectStatusGroup,
    isProjectId: isId,
    work: "campaigns",
    stop: stopProject,
    resume: resumeProject,
  });
  const metrics = createMetrics({ port: config.METRICS_PORT, logger });
  observeOutbox(metrics, { pool, schema });
  const erasureGroup = `${config.KAFKA_GROUP_PREFIX}${contactErasureGroupId}`;
  const erasure = createContactErasureConsumerOfCampaigns({ kafka, db, logger, groupId: erasureGroup });
  observeConsumerLag(metrics, { kafka, groupIds: [activityGroup, lifecycleGroup, projectStatusGroup, erasureGroup] });
  const databaseProbe = createDatabaseProbe(config.DATABASE_URL, schema);
  const server = build({ db, logger, metrics, info: serviceInfoOf(name, schema, import.meta.url), campaigns });
  const readiness = createReadinessWatch({ health: server.health, logger, dependencies: { database: () => databaseProbe.check() } });
  readiness.start();
  await metrics.listen(config.LISTEN_HOST);
  const port = await server.listen(portOfUrl(config.CAMPAIGNS_URL), config.LISTEN_HOST);
  relay.start();
  fanOut.start();
  await activity.start();
  await lifecycle.start();
  await erasure.start();
  await projectStatus.start();
  logger.info({ port, schema }, `${name} listening`);
  onShutdown(logger, [
    () => readiness.stop(),
    () => server.close(),
    () => fanOut.stop(),
    () => renders.close(),
    [() => activity.stop(), () => lifecycle.stop(), () => erasure.stop(), () => projectStatus.stop()],
    () => relay.stop(),
    closeDatabase,
    () => databaseProbe.close(),
    () => metrics.close(),
    () => telemetry.shutdown(),
  ]);
} catch (error) {
  exitOnStartupError(name, error);
}
