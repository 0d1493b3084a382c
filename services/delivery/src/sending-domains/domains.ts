import { randomBytes, randomUUID } from "node:crypto";
import { isUniqueViolation } from "@herald/db";
import { DomainError, validationFailed } from "@herald/errors";
import type { Logger } from "@herald/platform";
import type { Db } from "../db/client.js";
import {
  type CheckResult,
  claimDomain,
  claimDueDomains,
  type DomainRow,
  deleteDomain,
  findDomain,
  hasDomain,
  insertDomain,
  listDomains,
  saveCheck,
} from "../db/domains.js";
import { type DnsRecord, expectedRecords, type RecordStatus, recordStatusOf } from "../domain/dns-records.js";
import { parseDomainName } from "../domain/domain-name.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { encryptPrivateKey, generateDkimKeyPair } from "./dkim-keys.js";
import type { TxtLookup } from "./txt-lookup.js";

export interface DomainView {
  row: DomainRow;
  records: Array<DnsRecord & { status: RecordStatus }>;
}

export type Domains = ReturnType<typeof createDomains>;

const domainNotFound = () => new DomainError("not-found", "DOMAIN_NOT_FOUND", "Domain not found");

export function createDomains(deps: {
  db: Db;
  lookup: TxtLookup;
  encryptionKey: Buffer;
  spfInclude?: string;
  logger: Logger;
  /** A domain was deleted or stopped being verified here: this replica stops sending from it at once. */
  onSenderGone?: (projectId: string, domain: string) => void;
}) {
  const { db, lookup } = deps;
  const options = { spfInclude: deps.spfInclude };

  function viewOf(row: DomainRow): DomainView {
    const statuses: Record<DnsRecord["purpose"], RecordStatus> = {
      dkim: row.dkimStatus as RecordStatus,
      spf: row.spfStatus as RecordStatus,
      dmarc: row.dmarcStatus as RecordStatus,
    };
    return { row, records: expectedRecords(row, options).map((record) => ({ ...record, status: statuses[record.purpose] })) };
  }

  async function find(projectId: string, id: string): Promise<DomainRow> {
    const row = isId(id) ? await findDomain(db, requireProjectId(projectId), id) : null;
    if (!row) throw domainNotFound();
    return row;
  }

  /** Looks every record up and stores the outcome. A lookup that got no answer changes nothing it decides. */
  async function check(row: DomainRow): Promise<DomainRow | null> {
    const statusOf = async (record: DnsRecord, previous: string): Promise<RecordStatus> => {
      const answer = await lookup(record.name);
      if (answer.kind === "error") deps.logger.warn({ domain: row.domain, name: record.name, code: answer.code }, "DNS lookup failed");
      return recordStatusOf(record, answer, options) ?? (previous as RecordStatus);
    };
    const [dkim, spf, dmarc] = expectedRecords(row, options) as [DnsRecord, DnsRecord, DnsRecord];
    const [dkimStatus, spfStatus, dmarcStatus] = await Promise.all([
      statusOf(dkim, row.dkimStatus),
      statusOf(spf, row.spfStatus),
      statusOf(dmarc, row.dmarcStatus),
    ]);
    const result: CheckResult = { verified: dkimStatus === "verified", dkimStatus, spfStatus, dmarcStatus };
    if (result.verified !== row.verified) {
      deps.logger.info({ domainId: row.id, domain: row.domain, verified: result.verified }, "domain verification changed");
    }
    const saved = await saveCheck(db, row, result);
    if (row.verified && saved?.verified === false) deps.onSenderGone?.(row.projectId, row.domain);
    return saved;
  }

  return {
    async create(projectId: string, input: string): Promise<DomainView> {
      requireProjectId(projectId);
      const parsed = parseDomainName(input);
      if (!parsed.ok) {
        throw validationFailed(`Invalid domain: it ${parsed.reason}`, [
          { field: "domain", message: parsed.reason, code: "invalid_domain", received: JSON.stringify(input) },
        ]);
      }
      const exists = () =>
        new DomainError("conflict", "DOMAIN_EXISTS", `The domain ${parsed.domain} is already added to this project`, {
          details: { domain: parsed.domain },
          suggestion: "Verify or delete the existing domain instead",
        });
      // Before the key: a 2048-bit key pair costs tens of milliseconds of CPU, too much to spend on a refusal.
      if (await hasDomain(db, projectId, parsed.domain)) throw exists();
      const id = randomUUID();
      const keys = await generateDkimKeyPair();
      try {
        const row = await insertDomain(db, {
          id,
          projectId,
          domain: parsed.domain,
          selector: `herald-${randomBytes(4).toString("hex")}`,
          publicKey: keys.publicKey,
          privateKeyEncrypted: encryptPrivateKey(deps.encryptionKey, keys.privateKeyPem, id),
        });
        return viewOf(row);
      } catch (error) {
        // Added by a concurrent call since the check above.
        if (isUniqueViolation(error)) throw exists();
        throw error;
      }
    },

    async list(projectId: string): Promise<DomainView[]> {
      return (await listDomains(db, requireProjectId(projectId))).map(viewOf);
    },

    async get(projectId: string, id: string): Promise<DomainView> {
      return viewOf(await find(projectId, id));
    },

    async verify(projectId: string, id: string): Promise<DomainView> {
      const claimed = isId(id) ? await claimDomain(db, requireProjectId(projectId), id) : null;
      if (!claimed) throw domainNotFound();
      const checked = await check(claimed);
      if (!checked) throw domainNotFound();
      return viewOf(checked);
    },

    async delete(projectId: string, id: string): Promise<void> {
      const row = await find(projectId, id);
      if (!(await deleteDomain(db, row.projectId, row.id))) throw domainNotFound();
      deps.onSenderGone?.(row.projectId, row.domain);
    },

    /** One pass of the background check: claims the due domains and checks them, a few at a time. */
    async checkDue(intervalMs: number, batchSize = 50): Promise<number> {
      const due = await claimDueDomains(db, intervalMs, batchSize);
      for (let start = 0; start < due.length; start += 10) {
        await Promise.all(
          due
            .slice(start, start + 10)
            .map((row) => check(row).catch((error: unknown) => deps.logger.warn({ err: error, domainId: row.id }, "domain check failed"))),
        );
      }
      return due.length;
    },
  };
}
