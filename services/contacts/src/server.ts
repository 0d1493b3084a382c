import { createHealthState, createRpcServer, type Logger, type RpcServer, serverInterceptors } from "@herald/platform";
import type { ServiceInfo } from "@herald/proto/herald/common/v1/service_info_pb";
import { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { EventsService } from "@herald/proto/herald/contacts/v1/events_service_pb";
import { JobsService } from "@herald/proto/herald/contacts/v1/jobs_service_pb";
import { createContactUpserts } from "./contacts/contact-upserts.js";
import { createContacts } from "./contacts/contacts.js";
import { createFields } from "./contacts/fields.js";
import type { KnownFields } from "./contacts/known-fields.js";
import type { Db, SqlPool } from "./db/client.js";
import { createJobRequests } from "./jobs/job-requests.js";
import { createContactsRpc } from "./rpc/contacts-rpc.js";
import { createEventsRpc } from "./rpc/events-rpc.js";
import { createJobsRpc } from "./rpc/jobs-rpc.js";
import { createEvents } from "./tracking/events.js";

export interface Deps {
  db: Db;
  /** Prisma's own connections, for the hot paths' single statements (see SqlPool). */
  pool: SqlPool;
  logger: Logger;
  info: ServiceInfo;
  /** Shared with the job worker, which forgets a wiped project's keys. */
  knownFields: KnownFields;
  /** Tells the outbox relay that a commit wrote events. */
  nudgeOutbox: () => void;
  /** Tells the job worker that a job was queued. */
  nudgeWorker: () => void;
}

export function build(deps: Deps): RpcServer {
  const { db, knownFields, nudgeOutbox } = deps;
  const upserts = createContactUpserts({ pool: deps.pool, knownFields, nudgeOutbox });
  const contacts = createContacts({ db, upserts, knownFields, nudgeOutbox });
  const fields = createFields({ db, knownFields });
  const events = createEvents({ db, pool: deps.pool, upserts, knownFields, nudgeOutbox });
  const jobs = createJobRequests({ db, nudgeWorker: deps.nudgeWorker });

  return createRpcServer({
    health: createHealthState([ContactsService.typeName, EventsService.typeName, JobsService.typeName]),
    interceptors: serverInterceptors(deps),
    routes: (router) => {
      router.service(ContactsService, createContactsRpc({ info: deps.info, contacts, fields }));
      router.service(EventsService, createEventsRpc({ events }));
      router.service(JobsService, createJobsRpc({ jobs }));
    },
  });
}
