import {
  createHealthState,
  createRpcServer,
  type Logger,
  type Metrics,
  type RetentionWindow,
  type RpcServer,
  serverInterceptors,
} from "@herald/platform";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import { ConditionSubjectsService } from "@herald/proto/herald/contacts/v1/condition_subjects_service_pb";
import { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { EventsService } from "@herald/proto/herald/contacts/v1/events_service_pb";
import { JobsService } from "@herald/proto/herald/contacts/v1/jobs_service_pb";
import { SegmentsService } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import { exportContact } from "./contacts/contact-export.js";
import { createContactUpserts } from "./contacts/contact-upserts.js";
import { createContacts } from "./contacts/contacts.js";
import type { ContactsChanged } from "./contacts/contacts-changed.js";
import { createFields } from "./contacts/fields.js";
import type { KnownFields } from "./contacts/known-fields.js";
import type { SearchTrigrams } from "./contacts/search-trigrams.js";
import type { Db, SqlPool } from "./db/client.js";
import { createJobRequests } from "./jobs/job-requests.js";
import { createConditionSubjectsRpc } from "./rpc/condition-subjects-rpc.js";
import { createContactsRpc } from "./rpc/contacts-rpc.js";
import { createEventsRpc } from "./rpc/events-rpc.js";
import { createJobsRpc } from "./rpc/jobs-rpc.js";
import { createSegmentsRpc } from "./rpc/segments-rpc.js";
import { createAudiences } from "./segments/audience.js";
import type { SegmentInUseCheck } from "./segments/segment-campaigns.js";
import { createSegments } from "./segments/segments.js";
import type { DataKeyLimits } from "./tracking/data-key-limits.js";
import { createEventRetentionSettings } from "./tracking/event-retention.js";
import { createEvents } from "./tracking/events.js";

export interface Deps {
  db: Db;
  /** Prisma's own connections, for the hot paths' single statements (see SqlPool). */
  pool: SqlPool;
  logger: Logger;
  /** RED per RPC; tests that build the server leave it out. */
  metrics?: Metrics;
  info: ServiceInfo;
  /** Shared with the job worker, which forgets a wiped project's keys. */
  knownFields: KnownFields;
  /** Tells the outbox relay that a commit wrote events. */
  nudgeOutbox: () => void;
  /** Tells the job worker that a job was queued. */
  nudgeWorker: () => void;
  /** Tells the membership watch which contacts changed (tracked segments follow them at once). */
  contactsChanged: ContactsChanged;
  /** The caps on the data keys /v1/track writes (TRACK_MAX_DATA_KEYS_PER_CONTACT, TRACK_MAX_FIELDS_PER_PROJECT). */
  dataKeyLimits: DataKeyLimits;
  /** Tracked events' retention: the deployment's window, and what to tell when a project's own changed (a pass runs). */
  eventRetention: { window: RetentionWindow; changed: () => void };
  /** The trigrams most addresses share, which a contact search keeps from the index. */
  searchTrigrams: SearchTrigrams;
  /** DELETE /segments/:id asks the campaigns service whether an active campaign uses the segment. */
  refuseSegmentInUse?: SegmentInUseCheck;
}

export function build(deps: Deps): RpcServer {
  const { db, pool, knownFields, nudgeOutbox, contactsChanged } = deps;
  const upserts = createContactUpserts({ pool, knownFields, nudgeOutbox, contactsChanged });
  const contacts = createContacts({ db, upserts, knownFields, nudgeOutbox, contactsChanged, searchTrigrams: deps.searchTrigrams });
  const fields = createFields({ db, knownFields });
  const retention = createEventRetentionSettings({ db, ...deps.eventRetention });
  const events = createEvents({
    db,
    pool,
    upserts,
    knownFields,
    nudgeOutbox,
    contactsChanged,
    dataKeyLimits: deps.dataKeyLimits,
    eventsSince: retention.since,
  });
  const jobs = createJobRequests({ db, nudgeWorker: deps.nudgeWorker });
  const segments = createSegments({ db, pool, upserts });
  const audiences = createAudiences({ db, pool });

  return createRpcServer({
    health: createHealthState([
      ContactsService.typeName,
      EventsService.typeName,
      JobsService.typeName,
      SegmentsService.typeName,
      ConditionSubjectsService.typeName,
    ]),
    interceptors: serverInterceptors(deps),
    logger: deps.logger,
    metrics: deps.metrics,
    routes: (router) => {
      router.service(
        ContactsService,
        createContactsRpc({
          info: deps.info,
          contacts,
          fields,
          exportContact: (projectId, contactId, pageSize) => exportContact({ db, pool, contacts }, projectId, contactId, pageSize),
          logger: deps.logger,
        }),
      );
      router.service(EventsService, createEventsRpc({ events, retention, logger: deps.logger }));
      router.service(JobsService, createJobsRpc({ jobs }));
      router.service(SegmentsService, createSegmentsRpc({ segments, audiences, refuseSegmentInUse: deps.refuseSegmentInUse }));
      router.service(ConditionSubjectsService, createConditionSubjectsRpc({ db }));
    },
  });
}
