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
  createLoadingCache,
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
import { ConditionSubjectsService } from "@herald/proto/herald/contacts/v1/condition_subjects_service_pb";
import { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { FieldType } from "@herald/proto/herald/contacts/v1/resources_pb";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { TemplatesService } from "@herald/proto/herald/delivery/v1/templates_service_pb";
import { createRenderPool } from "@herald/rendering/pool";
import { loadConfig } from "./config.js";
import { prismaClientOn } from "./db/client.js";
import { resumeProject, stopProject } from "./db/stopped-projects.js";
import { isId } from "./domain/ids.js";
import { createStepRunner } from "./engine/step-runner.js";
import { createStepExecutors } from "./engine/steps.js";
import { observeTimers } from "./engine/timer-metrics.js";
import { createTriggerIndex } from "./engine/trigger-index.js";
import { createWebhookExecutor } from "./engine/webhook.js";
import { createWebhookSecrets } from "./engine/webhook-secrets.js";
import { contactErasureGroupId, createContactErasureConsumerOfAutomation } from "./events/contact-erasure-consumer.js";
import { createTriggerConsumer, triggerGroupId } from "./events/trigger-consumer.js";
import { createWorkflowChangesListener, workflowChangesTopic } from "./events/workflow-changes.js";
import { createExecutionRetention } from "./executions/execution-retention.js";
import { createExecutions } from "./executions/executions.js";
import { build } from "./server.js";
import { createWorkflows } from "./workflows/workflows.js";

const name = "automation";
const fieldTypeNames: Partial<Record<FieldType, "string" | "number" | "boolean" | "date">> = {
  [FieldType.STRING]: "string",
  [FieldType.NUMBER]: "number",
  [FieldType.BOOLEAN]: "boolean",
  [FieldType.DATE]: "date",
};

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
  await ensureTopics(admin, [
    topics.contactEvents,
    topics.emailActivity,
    topics.projectLifecycle,
    topics.workflowExecutions,
    topics.contactChanges,
    workflowChangesTopic,
  ]);
  await admin.disconnect();
  const relay = createOutboxRelay({ pool, producer: kafka.producer({ idempotent: true }), logger });

  const contactsTransport = { baseUrl: config.CONTACTS_URL, connections: 2, timeoutMs: 10_000 };
  const deliveryTransport = { baseUrl: config.DELIVERY_URL, connections: 2, timeoutMs: 10_000 };
  const clients = {
    contacts: createRpcClient(ContactsService, contactsTransport),
    conditionSubjects: createRpcClient(ConditionSubjectsService, contactsTransport),
    emails: createRpcClient(EmailsService, deliveryTransport),
    templates: createRpcClient(TemplatesService, deliveryTransport),
  };
  const fieldTypes = createLoadingCache({
    max: 10_000,
    ttlMs: 60_000,
    load: async (projectId: string) => {
      const { fields } = await clients.contacts.listFields({ projectId });
      return new Map(
        fields.filter((field) => field.isCustom).map((field) => [field.field.replace(/^data\./, ""), fieldTypeNames[field.type]]),
      );
    },
  });
  const metrics = createMetrics({ port: config.METRICS_PORT, logger });
  const timers = observeTimers(metrics, db);
  const index = createTriggerIndex({ db, ttlMs: config.TRIGGER_INDEX_TTL_MS });
  const webhookSecrets = createWebhookSecrets({ db });
  const renders = createRenderPool(config.RENDER_THREADS, { heapMb: config.RENDER_THREAD_MEMORY_MB });
  const runner = createStepRunner({
    db,
    logger,
    delayScale: config.DELAY_TIME_SCALE,
    executors: {
      ...createStepExecutors({ clients, delayScale: config.DELAY_TIME_SCALE, renders }),
      WEBHOOK: createWebhookExecutor({
        secrets: webhookSecrets,
        dnsServers: config.DNS_SERVERS,
        allowedAddresses: config.WEBHOOK_ALLOWED_ADDRESSES,
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        renders,
      }),
    },
    concurrency: config.STEP_CONCURRENCY,
    webhooksPerProject: config.WEBHOOK_PROJECT_CONCURRENCY,
    leaseMs: config.STEP_LEASE_MS,
    idleMs: config.STEP_POLL_INTERVAL_MS,
    onTimersFired: timers.fired,
  });
  const workflows = createWorkflows({
    db,
    fieldTypesOf: async (projectId) => {
      const types = await fieldTypes.get(projectId);
      return (key) => types.get(key);
    },
    onLocalChange: (projectId) => {
      index.invalidate(projectId);
      relay.nudge();
    },
  });
  const executions = createExecutions({ db, contacts: clients.contacts, nudgeRunner: () => runner.nudge() });
  const triggersGroup = `${config.KAFKA_GROUP_PREFIX}${triggerGroupId}`;
  observeOutbox(metrics, { pool, schema });
  const projectStatusGroup = `${config.KAFKA_GROUP_PREFIX}automation.project-status`;
  const erasureGroup = `${config.KAFKA_GROUP_PREFIX}${contactErasureGroupId}`;
  observeConsumerLag(metrics, { kafka, groupIds: [triggersGroup, projectStatusGroup, erasureGroup] });
  const databaseProbe = createDatabaseProbe(config.DATABASE_URL, schema);
  const triggers = createTriggerConsumer({
    kafka,
    db,
    logger,
    groupId: triggersGroup,
    index,
    nudgeRunner: () => runner.nudge(),
  });
  // Keeps stopped_projects, which the engine and triggers read (docs/api-decisions.md).
  const projectStatus = createProjectStatusConsumer({
    kafka,
    db,
    logger,
    groupId: projectStatusGroup,
    isProjectId: isId,
    work: "workflows",
    // A suspension stops sending, not workflows: their SEND_EMAIL steps fail with delivery's PROJECT_SUSPENDED.
    stop: (tx, projectId, reason, at) =>
      reason === "project.suspended" ? resumeProject(tx, projectId) : stopProject(tx, projectId, reason, at),
    resume: resumeProject,
  });
  const erasure = createContactErasureConsumerOfAutomation({ kafka, db, logger, groupId: erasureGroup });
  const changes = createWorkflowChangesListener({
    kafka,
    logger,
    groupPrefix: config.KAFKA_GROUP_PREFIX,
    onChanged: (projectId) => index.invalidate(projectId),
  });
  const server = build({ logger, metrics, info: serviceInfoOf(name, schema, import.meta.url), workflows, executions, webhookSecrets });
  const readiness = createReadinessWatch({ health: server.health, logger, dependencies: { database: () => databaseProbe.check() } });
  const executionRetention = createExecutionRetention({
    db,
    logger,
    days: config.RETENTION_EXECUTIONS_DAYS,
    intervalMs: config.RETENTION_INTERVAL_MS,
  });
  relay.start();
  runner.start();
  executionRetention.start();
  await changes.start();
  await triggers.start();
  await projectStatus.start();
  await erasure.start();
  readiness.start();
  await metrics.listen(config.LISTEN_HOST);
  const port = await server.listen(portOfUrl(config.AUTOMATION_URL), config.LISTEN_HOST);
  logger.info({ port, schema }, `${name} listening`);
  onShutdown(logger, [
    () => readiness.stop(),
    () => server.close(),
    [() => triggers.stop(), () => projectStatus.stop(), () => erasure.stop(), () => changes.stop()],
    () => runner.stop(),
    () => executionRetention.stop(),
    () => renders.close(),
    () => relay.stop(),
    closeDatabase,
    () => databaseProbe.close(),
    () => metrics.close(),
    () => telemetry.shutdown(),
  ]);
} catch (error) {
  exitOnStartupError(name, error);
}
