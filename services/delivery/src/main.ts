import { createDatabaseProbe, openServiceSchema, poolConfigOf } from "@herald/db";
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
import { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { createRenderPool } from "@herald/rendering/pool";
import pg from "pg";
import { createActivityCountFolding } from "./activity/activity-count-folding.js";
import { createEmailRetention, createEmailRetentionSettings } from "./activity/retention.js";
import { createCampaignSends } from "./campaign-sends/campaign-sends.js";
import { loadConfig } from "./config.js";
import { prismaClientOn } from "./db/client.js";
import { createClaimsPool } from "./db/emails.js";
import { projectsAtInboundCap } from "./db/monthly-usage.js";
import { createOutcomesPool } from "./db/outcomes.js";
import { hashUnhashedSuppressions } from "./db/suppressions.js";
import { createAddressHash } from "./domain/address-hash.js";
import { destinationTableOf } from "./domain/destinations.js";
import { createDestinations } from "./emails/destinations.js";
import { observeDestinations, observeDispatches } from "./emails/dispatch-metrics.js";
import { createDispatcher } from "./emails/dispatcher.js";
import { createEmails } from "./emails/emails.js";
import { observeEmailQueue } from "./emails/queue-metrics.js";
import { billingCapsGroupId, createBillingCapsConsumer } from "./events/billing-caps-consumer.js";
import { contactErasureGroupId, createContactErasureConsumerOfDelivery } from "./events/contact-erasure-consumer.js";
import { createProjectLifecycleConsumer, projectLifecycleGroupId } from "./events/project-lifecycle-consumer.js";
import { createProjectStatusConsumerOfDelivery, projectStatusGroupId } from "./events/project-status-consumer.js";
import { createEmailEventRecorder } from "./feedback/email-events.js";
import { createInboundSmtp } from "./feedback/inbound-smtp.js";
import { createReturnPaths } from "./feedback/return-path.js";
import { createSesNotifications, createSnsConfirmation } from "./feedback/ses-notifications.js";
import { createSnsCertificates } from "./feedback/sns-message.js";
import { createInboundSettings } from "./inbound/inbound-settings.js";
import { createReceivedMail } from "./inbound/received-mail.js";
import { createReceivingDomains } from "./inbound/receiving-domains.js";
import { createLinkTokens } from "./links/link-tokens.js";
import { createSesProvider } from "./providers/ses-provider.js";
import { createSmtpProvider } from "./providers/smtp-provider.js";
import { observeRenderPool } from "./rendering/render-metrics.js";
import { createDomainCheck } from "./sending-domains/domain-check.js";
import { createDomains } from "./sending-domains/domains.js";
import { createVerifiedSenderCache } from "./sending-domains/sender-domain.js";
import { createSenderDomainListener } from "./sending-domains/sender-domain-listener.js";
import { createResolver, createTxtLookup } from "./sending-domains/txt-lookup.js";
import { createContactUpserts } from "./sends/contact-upserts.js";
import { createSends } from "./sends/sends.js";
import { build } from "./server.js";
import { createSystemMail } from "./system-mail/system-mail.js";
import { createSystemMailSender } from "./system-mail/system-mail-sender.js";
import { createTemplates } from "./templates/templates.js";
import { createTracking } from "./tracking/tracking.js";
import { createLocalImageStore } from "./uploads/local-image-store.js";
import { createS3ImageStore } from "./uploads/s3-image-store.js";
import { createUploads } from "./uploads/uploads.js";
import { createDomainFactsLookup } from "./verification/domain-facts.js";
import { createMailExchangeLookup } from "./verification/mail-exchange.js";
import { createVerification } from "./verification/verification.js";

const name = "delivery";
try {
  const config = loadConfig();
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  const telemetry = startTelemetry({ serviceName: name });
  if (config.dkimEncryptionKeyIsDevelopment) {
    logger.warn("DKIM_ENCRYPTION_KEY is not set: DKIM keys are encrypted with the public development key");
  }
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
    // The dispatcher's claims and the send queue's writes on connections of their own, never behind a request's Prisma statement.
    sqlPoolSize: 4,
    logger,
  });
  // Suppressions written without their keyed hash (before it existed, or by an older version) get it before anything is sent.
  const addressHash = createAddressHash(config.linkSigningSecret);
  const hashedSuppressions = await hashUnhashedSuppressions(pool, addressHash);
  if (hashedSuppressions > 0) logger.info({ suppressions: hashedSuppressions }, "hashed the addresses of suppressions");
  const outcomesPool = createOutcomesPool(config.DATABASE_URL, schema, (error) =>
    logger.warn({ err: error }, "an idle database connection failed"),
  );
  const claimsPool = createClaimsPool(config.DATABASE_URL, schema, (error) =>
    logger.warn({ err: error }, "an idle database connection failed"),
  );
  const kafka = createKafka({ clientId: name, ...kafkaConnectionOf(config) });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [topics.projectLifecycle, topics.emailActivity, topics.contactChanges]);
  await admin.disconnect();
  const relay = createOutboxRelay({ pool, producer: kafka.producer({ idempotent: true }), logger });
  const resolver = createResolver({ servers: config.DNS_SERVERS, timeoutMs: config.DNS_TIMEOUT_MS, tries: config.DNS_TRIES });
  const lookup = createTxtLookup(resolver);
  const verifiedSenders = createVerifiedSenderCache(db, config.SENDER_DOMAIN_CACHE_TTL_MS);
  const senderDomainListener = createSenderDomainListener({
    connect: () => new pg.Client({ ...poolConfigOf(config.DATABASE_URL, schema), keepAlive: true }),
    schema,
    logger,
    onGone: verifiedSenders.forget,
    onListening: verifiedSenders.trust,
  });
  const domains = createDomains({
    db,
    lookup,
    encryptionKey: config.dkimEncryptionKey,
    spfInclude: config.SPF_INCLUDE,
    logger,
    onSenderGone: verifiedSenders.forget,
  });
  const domainCheck = createDomainCheck({ domains, logger, intervalMs: config.DOMAIN_CHECK_INTERVAL_MS });
  const uploads = createUploads({
    store: config.UPLOADS_S3_BUCKET
      ? createS3ImageStore({
          bucket: config.UPLOADS_S3_BUCKET,
          endpoint: config.UPLOADS_S3_ENDPOINT,
          region: config.UPLOADS_S3_REGION,
          forcePathStyle: config.UPLOADS_S3_FORCE_PATH_STYLE,
          prefix: config.UPLOADS_S3_PREFIX,
        })
      : createLocalImageStore({ dir: config.UPLOADS_DIR }),
    maxBytes: config.UPLOAD_MAX_BYTES,
    quotaBytes: config.UPLOAD_QUOTA_BYTES_PER_PROJECT,
  });
  const lifecycleGroupId = `${config.KAFKA_GROUP_PREFIX}${projectLifecycleGroupId}`;
  const lifecycle = createProjectLifecycleConsumer({ kafka, db, logger, uploads, groupId: lifecycleGroupId });
  // Keeps suspended_projects (the reputation guard's suspensions), which enqueues and the dispatcher read.
  const statusGroupId = `${config.KAFKA_GROUP_PREFIX}${projectStatusGroupId}`;
  const projectStatus = createProjectStatusConsumerOfDelivery({ kafka, db, logger, groupId: statusGroupId });
  const capsGroupId = `${config.KAFKA_GROUP_PREFIX}${billingCapsGroupId}`;
  const billingCaps = createBillingCapsConsumer({ kafka, db, logger, groupId: capsGroupId });
  const erasureGroupId = `${config.KAFKA_GROUP_PREFIX}${contactErasureGroupId}`;
  const erasure = createContactErasureConsumerOfDelivery({ kafka, db, addressHash, logger, groupId: erasureGroupId });
  const metrics = createMetrics({ port: config.METRICS_PORT, logger });
  observeEmailQueue(metrics, pool);
  observeOutbox(metrics, { pool, schema });
  observeTimePartitions(metrics, { pool, schema, tables: [{ table: "email_activity" }, { table: "emails" }] });
  observeConsumerLag(metrics, { kafka, groupIds: [lifecycleGroupId, capsGroupId, statusGroupId, erasureGroupId] });
  const databaseProbe = createDatabaseProbe(config.DATABASE_URL, schema);
  const renders = createRenderPool(config.RENDER_THREADS, { heapMb: config.RENDER_THREAD_MEMORY_MB });
  observeRenderPool(metrics, renders);
  const templates = createTemplates({ db, renders });
  const provider = config.ses
    ? createSesProvider({ ...config.ses, sendTimeoutMs: config.SEND_TIMEOUT_MS, buildThreads: config.SEND_BUILD_THREADS })
    : config.SMTP_URL
      ? createSmtpProvider({
          url: config.SMTP_URL,
          maxConnections: config.SMTP_MAX_CONNECTIONS,
          sendTimeoutMs: config.SEND_TIMEOUT_MS,
          buildThreads: config.SEND_BUILD_THREADS,
        })
      : undefined;
  // SES reports its bounces through SNS (POST /webhooks/ses) and sets its own envelope sender.
  if (config.BOUNCE_DOMAIN && config.MAIL_PROVIDER === "ses") {
    logger.warn("BOUNCE_DOMAIN and INBOUND_SMTP_PORT are not used with MAIL_PROVIDER=ses: SES reports bounces through SNS");
  }
  const returnPaths =
    config.BOUNCE_DOMAIN && config.MAIL_PROVIDER === "smtp"
      ? createReturnPaths({ domain: config.BOUNCE_DOMAIN, secret: config.linkSigningSecret })
      : undefined;
  const retry = { maxAttempts: config.SEND_MAX_ATTEMPTS, baseDelayMs: config.SEND_RETRY_BASE_MS, maxDelayMs: config.SEND_RETRY_MAX_MS };
  const destinationMetrics = observeDestinations(metrics);
  const destinations = createDestinations({
    table: destinationTableOf(config.SEND_DESTINATIONS),
    lookupMx: createMailExchangeLookup(resolver),
    backoffMs: config.SEND_DESTINATION_BACKOFF_MS,
    mxCacheMs: config.SEND_MX_CACHE_MS,
    onHeld: destinationMetrics.onHeld,
    onDeferred: destinationMetrics.onDeferred,
  });
  destinationMetrics.watch(destinations.states);
  const dispatcher = createDispatcher({
    db,
    pool,
    claimsPool,
    addressHash,
    outcomesPool,
    logger,
    provider,
    encryptionKey: config.dkimEncryptionKey,
    concurrency: config.SEND_CONCURRENCY,
    ratePerSecond: config.SEND_RATE_PER_SECOND,
    projectRatePerSecond: config.SEND_PROJECT_RATE_PER_SECOND,
    urgentShare: config.SEND_URGENT_SHARE,
    destinations,
    leaseMs: config.SEND_LEASE_MS,
    retry,
    pollIntervalMs: config.SEND_POLL_INTERVAL_MS,
    nudgeOutbox: () => relay.nudge(),
    ...(returnPaths ? { returnPathOf: returnPaths.addressOf } : {}),
    onRecorded: observeDispatches(metrics).recorded,
  });
  const contacts = createRpcClient(ContactsService, { baseUrl: config.CONTACTS_URL, connections: 2, timeoutMs: 10_000 });
  const upsertContact = createContactUpserts(contacts);
  // Account emails: their own small queue and sender, through the same provider (docs/decisions.md "Account emails").
  const systemMailSender = createSystemMailSender({
    db,
    logger,
    provider,
    sender: config.systemSender,
    retry,
    leaseMs: config.SEND_LEASE_MS,
    pollIntervalMs: config.SEND_POLL_INTERVAL_MS,
  });
  const systemMail = createSystemMail({
    db,
    messageIdDomain: config.systemSender?.dkim.domainName ?? "localhost",
    nudgeSender: () => systemMailSender.nudge(),
  });
  const tokens = createLinkTokens(config.linkSigningSecret);
  const tracking = createTracking({ db, tokens, contacts, nudgeOutbox: () => relay.nudge() });
  const emails = createEmails({
    db,
    pool,
    addressHash,
    nudgeDispatcher: () => dispatcher.nudge(),
    claims: dispatcher.enqueueClaims,
    links: { tokens, publicUrl: config.PUBLIC_URL, modeOf: tracking.modeOf },
    attachmentMaxBytes: config.SEND_ATTACHMENTS_MAX_BYTES,
  });
  const sends = createSends({
    db,
    renders,
    templates,
    emails,
    upsertContact,
    links: tokens,
    publicUrl: config.PUBLIC_URL,
    verifiedSenders,
    attachmentMaxBytes: config.SEND_ATTACHMENTS_MAX_BYTES,
  });
  const emailEvents = createEmailEventRecorder({ db, addressHash, nudgeOutbox: () => relay.nudge() });
  const sesNotifications = createSesNotifications({
    events: emailEvents,
    topicArns: new Set(config.SES_SNS_TOPIC_ARNS),
    certificateOf: createSnsCertificates({ timeoutMs: 10_000 }),
    confirm: createSnsConfirmation({ timeoutMs: 10_000 }),
  });
  const retentionWindows = { content: retentionWindowOf(config, "EMAIL_CONTENT"), activity: retentionWindowOf(config, "ACTIVITY") };
  const emailRetention = createEmailRetention({ db, pool, logger, windows: retentionWindows, intervalMs: config.RETENTION_INTERVAL_MS });
  const activityCountFolding = createActivityCountFolding({ db, logger });
  const server = build({
    db,
    logger,
    metrics,
    emailRetention: createEmailRetentionSettings({ db, windows: retentionWindows, changed: () => emailRetention.nudge() }),
    info: serviceInfoOf(name, schema, import.meta.url),
    mailProvider: config.MAIL_PROVIDER,
    domains,
    templates,
    emails,
    sends,
    uploads,
    campaignSends: createCampaignSends({ db, pool, emails, tokens, publicUrl: config.PUBLIC_URL }),
    tracking,
    sesNotifications,
    verification: createVerification({ pool, addressHash, lookupDomain: createDomainFactsLookup(resolver) }),
    systemMail,
    inboundSettings: createInboundSettings({ db, mxHost: config.inboundMxHost }),
  });
  const inbound =
    returnPaths && config.INBOUND_SMTP_PORT !== undefined
      ? createInboundSmtp({
          returnPaths,
          events: emailEvents,
          logger,
          maxMessageBytes: config.INBOUND_SMTP_MAX_BYTES,
          maxClients: config.INBOUND_SMTP_MAX_CLIENTS,
          maxConnectionsPerIp: config.INBOUND_SMTP_MAX_CONNECTIONS_PER_IP,
          bufferBytes: config.INBOUND_SMTP_BUFFER_BYTES,
          ...(config.inboundMxHost
            ? {
                receiving: {
                  domains: createReceivingDomains({
                    db,
                    mxHost: config.inboundMxHost,
                    lookupMx: createMailExchangeLookup(resolver),
                    mxCacheMs: config.INBOUND_MX_CACHE_MS,
                  }),
                  mail: createReceivedMail({ db, upsertContact, nudgeOutbox: () => relay.nudge() }),
                  projectMessagesPerMinute: config.INBOUND_PROJECT_MESSAGES_PER_MINUTE,
                  maxRecipients: config.INBOUND_MAX_RECIPIENTS,
                  atInboundCap: (projectIds) => projectsAtInboundCap(db, projectIds),
                },
              }
            : {}),
        })
      : undefined;
  const readiness = createReadinessWatch({ health: server.health, logger, dependencies: { database: () => databaseProbe.check() } });
  relay.start();
  senderDomainListener.start();
  dispatcher.start();
  systemMailSender.start();
  domainCheck.start();
  emailRetention.start();
  activityCountFolding.start();
  await lifecycle.start();
  await projectStatus.start();
  await billingCaps.start();
  await erasure.start();
  readiness.start();
  await metrics.listen(config.LISTEN_HOST);
  const port = await server.listen(portOfUrl(config.DELIVERY_URL), config.LISTEN_HOST);
  logger.info({ port, schema }, `${name} listening`);
  if (inbound && config.INBOUND_SMTP_PORT !== undefined) {
    const inboundPort = await inbound.listen(config.INBOUND_SMTP_PORT, config.LISTEN_HOST);
    logger.info(
      { port: inboundPort, bounceDomain: config.BOUNCE_DOMAIN, mxHost: config.inboundMxHost },
      config.inboundMxHost
        ? "receiving bounces, feedback reports and projects' mail over SMTP"
        : "receiving bounces and feedback reports over SMTP",
    );
  }
  onShutdown(logger, [
    () => readiness.stop(),
    () => server.close(),
    () => renders.close(),
    async () => {
      await inbound?.close();
    },
    [() => domainCheck.stop(), () => emailRetention.stop(), () => activityCountFolding.stop(), () => senderDomainListener.stop()],
    // Lets the sends in flight finish and records them, before the provider closes its connections.
    () => dispatcher.stop(),
    () => systemMailSender.stop(),
    async () => {
      await provider?.close();
    },
    [() => lifecycle.stop(), () => projectStatus.stop(), () => billingCaps.stop(), () => erasure.stop()],
    () => relay.stop(),
    closeDatabase,
    () => outcomesPool.end(),
    () => claimsPool.end(),
    () => databaseProbe.close(),
    () => metrics.close(),
    () => telemetry.shutdown(),
  ]);
} catch (error) {
  exitOnStartupError(name, error);
}
