import type { Logger } from "@herald/platform";
import type { ContactsChanged } from "../contacts/contacts-changed.js";
import type { KnownFields } from "../contacts/known-fields.js";
import type { Db } from "../db/client.js";
import { createBulkRunner } from "./bulk-runner.js";
import { createImportRunner } from "./import-runner.js";
import type { JobRunner } from "./job-runner.js";
import { createProjectWiper } from "./project-wiper.js";

/**
 * Every kind of queued work, in the order a free worker looks for it: wipes first
 * (a reset should not wait behind an import), then bulk jobs (small), then imports.
 */
export function createJobRunners(deps: {
  db: Db;
  logger: Logger;
  knownFields: KnownFields;
  nudgeOutbox: () => void;
  contactsChanged: ContactsChanged;
  leaseMs: number;
  importBatchSize: number;
}): JobRunner[] {
  const { db, logger, leaseMs } = deps;
  return [
    createProjectWiper({ db, logger, leaseMs, knownFields: deps.knownFields }),
    createBulkRunner({ db, logger, leaseMs, nudgeOutbox: deps.nudgeOutbox, contactsChanged: deps.contactsChanged }),
    createImportRunner({ db, logger, leaseMs, batchSize: deps.importBatchSize, contactsChanged: deps.contactsChanged }),
  ];
}
