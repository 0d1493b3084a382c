import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createLogger, createRpcTransport, type RpcServer } from "@herald/platform";
import { ServiceInfoSchema } from "@herald/proto/herald/common/v1/service_info_pb";
import { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { EventsService } from "@herald/proto/herald/contacts/v1/events_service_pb";
import { JobsService } from "@herald/proto/herald/contacts/v1/jobs_service_pb";
import { SegmentsService } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import { ContactChangeSchema } from "@herald/proto/herald/events/v1/contact_change_pb";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { createTestDatabase, type PublishedEvent, publishedEvents, type TestDatabase } from "@herald/testing";
import { loadConfig } from "../config.js";
import { createKnownFields, type KnownFields } from "../contacts/known-fields.js";
import { noCommonTrigrams, type SearchTrigrams } from "../contacts/search-trigrams.js";
import { createDatabase, type Db, type SqlPool } from "../db/client.js";
import { contactChangesTopic } from "../events/contact-change-outbox.js";
import { contactEventsTopic } from "../events/contact-event-outbox.js";
import { createJobWorker, type JobWorker } from "../jobs/job-worker.js";
import { createJobRunners } from "../jobs/runners.js";
import { createMembershipWatch, type MembershipWatch } from "../segments/membership-watch.js";
import { build } from "../server.js";
import { defaultDataKeyLimits } from "../tracking/data-key-limits.js";

export interface ContactsClients {
  contacts: Client<typeof ContactsService>;
  events: Client<typeof EventsService>;
  jobs: Client<typeof JobsService>;
  segments: Client<typeof SegmentsService>;
}

export interface ContactsHarness extends ContactsClients {
  db: Db;
  pool: SqlPool;
  databaseUrl: string;
  knownFields: KnownFields;
  /** A job worker on this database besides the harness's own (when it has one), as another replica's would be. */
  startWorker(options?: { name?: string; leaseMs?: number; importBatchSize?: number }): JobWorker;
  /** A membership watch on this database besides the harness's own (when it has one), as another replica's would be. */
  startWatch(options?: { intervalMs?: number }): MembershipWatch;
  stop(): Promise<void>;
}

const logger = createLogger({ name: "contacts-test", level: "silent" });

/**
 * contacts' build() on a real port, on a database of its own cloned from the
 * migrated template, with a job worker unless told otherwise. Outbox rows stay in
 * the database for the test to read (nothing relays them).
 */
export async function startContacts(
  infra: { databaseUrl: string },
  options: { worker?: boolean; watch?: boolean; env?: Record<string, string>; searchTrigrams?: SearchTrigrams } = {},
): Promise<ContactsHarness> {
  const database: TestDatabase = await createTestDatabase(infra.databaseUrl);
  const config = loadConfig({ LOG_LEVEL: "silent", JOB_POLL_INTERVAL_MS: "50", DATABASE_URL: database.databaseUrl, ...options.env });
  const { db, pool, close } = createDatabase({ databaseUrl: database.databaseUrl, schema: "contacts", poolSize: 20 });
  const knownFields = createKnownFields({ ttlMs: config.FIELD_CACHE_TTL_MS });
  const watches: MembershipWatch[] = [];
  function startWatch(overrides: { intervalMs?: number } = {}): MembershipWatch {
    const watch = createMembershipWatch({ db, logger, intervalMs: overrides.intervalMs ?? 60_000, settleMs: 10 });
    watches.push(watch);
    watch.start();
    return watch;
  }
  const watch = options.watch ? startWatch() : undefined;
  const contactsChanged = (projectId: string, contactIds: readonly string[]) => watch?.contactsChanged(projectId, contactIds);
  const workers: JobWorker[] = [];

  function startWorker(overrides: { name?: string; leaseMs?: number; importBatchSize?: number } = {}): JobWorker {
    const worker = createJobWorker({
      runners: createJobRunners({
        db,
        logger,
        knownFields,
        nudgeOutbox: () => {},
        contactsChanged,
        leaseMs: overrides.leaseMs ?? config.JOB_LEASE_MS,
        importBatchSize: overrides.importBatchSize ?? config.IMPORT_BATCH_SIZE,
      }),
      logger,
      pollIntervalMs: config.JOB_POLL_INTERVAL_MS,
      concurrency: config.JOB_CONCURRENCY,
      name: overrides.name,
    });
    workers.push(worker);
    worker.start();
    return worker;
  }

  const worker = options.worker === false ? undefined : startWorker();

  const server: RpcServer = build({
    db,
    pool,
    logger,
    info: create(ServiceInfoSchema, { name: "contacts", version: "test", databaseSchema: "contacts" }),
    knownFields,
    nudgeOutbox: () => {},
    nudgeWorker: () => worker?.nudge(),
    contactsChanged,
    dataKeyLimits: defaultDataKeyLimits,
    eventRetention: { window: { defaultDays: 730, minDays: 1, maxDays: 730 }, changed: () => {} },
    searchTrigrams: options.searchTrigrams ?? noCommonTrigrams,
  });
  const transport = createRpcTransport({ baseUrl: `http://127.0.0.1:${await server.listen(0, "127.0.0.1")}`, timeoutMs: 60_000 });
  return {
    contacts: createClient(ContactsService, transport),
    events: createClient(EventsService, transport),
    jobs: createClient(JobsService, transport),
    segments: createClient(SegmentsService, transport),
    db,
    pool,
    databaseUrl: database.databaseUrl,
    knownFields,
    startWorker,
    startWatch,
    async stop() {
      await server.close(100);
      await Promise.all([...workers, ...watches].map((running) => running.stop()));
      await close();
      await database.drop();
    },
  };
}

export const randomEmail = (label = "contact") => `${label}-${randomUUID()}@example.com`;

export const newProjectId = () => randomUUID();

export { expectFailure } from "@herald/testing";

export type PublishedContactEvent = PublishedEvent<typeof ContactEventSchema>;

/** What the outbox holds for a project, oldest first, decoded as the relay would publish it. */
export const outboxOf = async (db: Db, projectId: string): Promise<PublishedContactEvent[]> =>
  publishedEvents(
    await db.outboxEvent.findMany({ where: { topic: contactEventsTopic }, orderBy: { id: "asc" } }),
    projectId,
    ContactEventSchema,
  );

/** What the outbox holds for herald.contact-changes.v1 of a project, oldest first. */
export const contactChangesOf = async (db: Db, projectId: string): Promise<Array<PublishedEvent<typeof ContactChangeSchema>>> =>
  publishedEvents(
    await db.outboxEvent.findMany({ where: { topic: contactChangesTopic }, orderBy: { id: "asc" } }),
    projectId,
    ContactChangeSchema,
  );

export { eventually } from "@herald/testing";
